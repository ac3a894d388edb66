// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles and address vectors: where a UD datagram (or an RC QP's
 * packets) go, resolved to a pair of IP addresses as GIDs.
 */
#include <rdma/metaroce-abi.h>

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
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL :
							     GFP_ATOMIC;
	struct mroce_dev *mdev = to_mdev(ibah->device);
	const struct rdma_ah_attr *attr = init->ah_attr;
	struct mroce_ah *ah = to_mah(ibah);
	int err;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) ||
	    !attr->grh.sgid_attr)
		return -EINVAL;
	if (rdma_ah_get_port_num(attr) != MROCE_PORT)
		return -EINVAL;
	if (!mroce_get_limit(&mdev->num_ah, mdev->attr.max_ah))
		return -ENOMEM;

	ah->ref = kzalloc(sizeof(*ah->ref), gfp);
	if (!ah->ref) {
		err = -ENOMEM;
		goto err_limit;
	}
	ah->ref->pd = ibah->pd;
	mroce_av_from_attr(&ah->ref->av, attr);
	err = xa_alloc(&mdev->ah_xa, &ah->ah_num, ah->ref, xa_limit_31b, gfp);
	if (err)
		goto err_free;
	if (udata && udata->outlen) {
		struct metaroce_create_ah_resp resp = { .ah_num = ah->ah_num };

		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_erase;
	}
	return 0;

err_erase:
	xa_erase(&mdev->ah_xa, ah->ah_num);
err_free:
	kfree(ah->ref);
err_limit:
	atomic_dec(&mdev->num_ah);
	return err;
}

int mroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct mroce_dev *mdev = to_mdev(ibah->device);
	struct mroce_ah *ah = to_mah(ibah);

	xa_erase(&mdev->ah_xa, ah->ah_num);
	/* May be called in atomic context: free after the send path's RCU. */
	kfree_rcu(ah->ref, rcu);
	atomic_dec(&mdev->num_ah);
	return 0;
}

/*
 * The address vector of AH ah_num, if it exists and belongs to qp's PD
 * (a user WQE names any number it likes).
 */
int mroce_ah_lookup(struct mroce_qp *qp, u32 ah_num, struct mroce_av *av)
{
	struct mroce_dev *mdev = to_mdev(qp->ibqp.device);
	struct mroce_ah_ref *ref;
	int err = -EINVAL;

	rcu_read_lock();
	ref = xa_load(&mdev->ah_xa, ah_num);
	if (ref && ref->pd == qp->ibqp.pd) {
		*av = ref->av;
		err = 0;
	}
	rcu_read_unlock();
	return err;
}
