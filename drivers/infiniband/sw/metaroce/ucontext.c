// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User contexts: one per process that opens the device through libibverbs.
 */
#include <rdma/metaroce-abi.h>

#include "verbs.h"

int mroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibuc->device);
	struct metaroce_alloc_ucontext_resp resp = {
		.abi_version = METAROCE_UVERBS_ABI_VERSION,
	};
	int err;

	if (!mroce_get_limit(&mdev->num_ucontext, MROCE_MAX_UCONTEXT))
		return -ENOMEM;

	if (udata->outlen) {
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err) {
			atomic_dec(&mdev->num_ucontext);
			return err;
		}
	}
	return 0;
}

void mroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	atomic_dec(&to_mdev(ibuc->device)->num_ucontext);
}

/*
 * Device removal with contexts still open (rdma link delete, netdev gone,
 * module unload): the core destroys every object of the context through the
 * usual destroy verbs, which withdraw the rings' mmap entries (mmap.c).
 * Rings a process has mapped stay mapped: their pages are only freed when
 * it unmaps them, and the kernel no longer reads or writes them.  Nothing
 * else is left for the driver to detach.  Having this op lets removal
 * proceed instead of waiting for every process to close the device.
 */
void mroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}
