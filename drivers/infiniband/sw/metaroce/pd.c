// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Protection domains.
 */
#include "verbs.h"

int mroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibpd->device);

	if (!mroce_get_limit(&mdev->num_pd, mdev->attr.max_pd))
		return -ENOMEM;
	return 0;
}

int mroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_mdev(ibpd->device)->num_pd);
	return 0;
}
