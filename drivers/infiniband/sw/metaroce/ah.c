// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles and address vectors: where a UD datagram (or an RC QP's
 * packets) go, resolved to a pair of IP addresses as GIDs.
 */
#include "verbs.h"

void mroce_av_from_attr(struct mroce_av *av, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);

	memset(av, 0, sizeof(*av));
	if (grh->sgid_attr)
		av->sgid = grh->sgid_attr->gid;
	av->dgid = grh->dgid;
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->flow_label = grh->flow_label;
	av->sl = rdma_ah_get_sl(attr);
	memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);
}

int mroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibah->device);
	const struct rdma_ah_attr *attr = init->ah_attr;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) ||
	    !attr->grh.sgid_attr)
		return -EINVAL;
	if (rdma_ah_get_port_num(attr) != MROCE_PORT)
		return -EINVAL;
	if (!mroce_get_limit(&mdev->num_ah, mdev->attr.max_ah))
		return -ENOMEM;
	mroce_av_from_attr(&to_mah(ibah)->av, attr);
	return 0;
}

int mroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	atomic_dec(&to_mdev(ibah->device)->num_ah);
	return 0;
}
