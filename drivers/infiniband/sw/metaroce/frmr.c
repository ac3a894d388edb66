// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fast-registration memory regions (spec 15.3), as kernel ULPs use them:
 * ib_alloc_mr() makes an invalid MR with room for a page list,
 * ib_map_mr_sg() fills the list, an IB_WR_REG_MR work request makes the MR
 * valid with the key (new low 8 bits) and access rights it names, and
 * IB_WR_LOCAL_INV or an incoming SEND_INV makes it invalid again.
 *
 * map_mr_sg fills a staging list that the data path never reads; REG_MR
 * copies it to the registered one under the MR's lock.  So a mapping for
 * the next registration cannot change memory the current one exposes.
 */
#include <linux/log2.h>
#include <linux/slab.h>

#include "mr.h"
#include "verbs.h"

#define MROCE_FRMR_ACCESS	(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_OPTIONAL)

struct ib_mr *mroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct mroce_dev *mdev = to_mdev(ibpd->device);
	struct mroce_mr *mr;
	int i;

	/* No IBK_SG_GAPS_REG: gappy lists go through ib_sg_to_pages. */
	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EINVAL);
	if (!max_num_sg || max_num_sg > mdev->attr.max_fast_reg_page_list_len)
		return ERR_PTR(-EINVAL);

	mr = mroce_mr_alloc(ibpd, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->type = MROCE_MR_FAST;
	mr->valid = false;
	mr->max_pages = max_num_sg;
	for (i = 0; i < ARRAY_SIZE(mr->frpl); i++) {
		mr->frpl[i].pages = kvcalloc(max_num_sg, sizeof(u64),
					     GFP_KERNEL);
		if (!mr->frpl[i].pages) {
			mroce_mr_free(mr);
			return ERR_PTR(-ENOMEM);
		}
	}
	mr->map = &mr->frpl[0];
	mr->staging = &mr->frpl[1];
	return mroce_mr_publish(mr);
}

void mroce_frmr_free(struct mroce_mr *mr)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(mr->frpl); i++)
		kvfree(mr->frpl[i].pages);
}

static int mroce_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct mroce_mr *mr = to_mmr(ibmr);
	struct mroce_frpl *pl = mr->staging;

	if (pl->npages >= mr->max_pages)
		return -ENOMEM;
	pl->pages[pl->npages++] = addr;
	return 0;
}

int mroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct mroce_mr *mr = to_mmr(ibmr);
	struct mroce_frpl *pl = mr->staging;
	int n;

	if (mr->type != MROCE_MR_FAST || !is_power_of_2(ibmr->page_size) ||
	    ibmr->page_size < SZ_4K)
		return -EINVAL;
	pl->npages = 0;
	pl->length = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, mroce_set_page);
	pl->page_shift = ilog2(ibmr->page_size);
	pl->page_offset = ibmr->iova & (ibmr->page_size - 1);
	pl->length = n > 0 ? ibmr->length : 0;
	return n;
}

/*
 * The fast-registration MR that key names for qp, or NULL.  Called under
 * RCU.  The key's lower 8 bits are not checked here.
 */
static struct mroce_mr *mroce_frmr_find(struct mroce_qp *qp, u32 key)
{
	struct mroce_dev *mdev = to_mdev(qp->ibqp.device);
	struct mroce_mr *mr = xa_load(&mdev->mr_xa, key >> 8);

	if (!mr || mr->type != MROCE_MR_FAST ||
	    READ_ONCE(mr->ibmr.pd) != qp->ibqp.pd)
		return NULL;
	return mr;
}

/* IB_WR_REG_MR: the WQE carries the MR index, iova, length, key, access. */
static enum ib_wc_status mroce_reg_mr(struct mroce_qp *qp,
				      const struct mroce_send_wqe *wqe)
{
	int access = (int)wqe->swap;
	enum ib_wc_status status = IB_WC_SUCCESS;
	const struct mroce_frpl *src;
	struct mroce_frpl *dst;
	unsigned long flags;
	struct mroce_mr *mr;
	u64 max;

	if (access & ~MROCE_FRMR_ACCESS ||
	    (access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC) &&
	     !(access & IB_ACCESS_LOCAL_WRITE)))
		return IB_WC_LOC_PROT_ERR;
	rcu_read_lock();
	mr = mroce_frmr_find(qp, wqe->rkey);
	if (!mr || mr->index != wqe->ah_num) {
		rcu_read_unlock();
		return IB_WC_LOC_PROT_ERR;
	}
	spin_lock_irqsave(&mr->lock, flags);
	if (mr->valid) {
		/* Registered already: invalidate it first. */
		status = IB_WC_LOC_QP_OP_ERR;
		goto out;
	}
	src = mr->staging;
	dst = mr->map;
	memcpy(dst->pages, src->pages, src->npages * sizeof(u64));
	dst->npages = src->npages;
	dst->page_shift = src->page_shift;
	dst->page_offset = src->page_offset;
	/* Never past the page list, whatever the consumer set. */
	max = src->npages ? ((u64)src->npages << src->page_shift) -
			    src->page_offset : 0;
	dst->length = min3(src->length, max, wqe->compare_add);
	mr->iova = wqe->remote_addr;
	mr->length = dst->length;
	mr->access = access;
	mr->key = wqe->rkey;
	mr->valid = true;
out:
	spin_unlock_irqrestore(&mr->lock, flags);
	rcu_read_unlock();
	return status;
}

/*
 * Can rkey be invalidated by qp (a SEND_INV from its peer, spec 10.3.4)?
 * Returns 0 or -EINVAL.  An MR invalid already may be invalidated again.
 * The key may also name a type 2 memory window (mw.c).
 */
int mroce_inv_check(struct mroce_qp *qp, u32 rkey)
{
	struct mroce_mr *mr;
	int err = -EINVAL;

	rcu_read_lock();
	mr = mroce_frmr_find(qp, rkey);
	if (mr && READ_ONCE(mr->key) == rkey)
		err = 0;
	rcu_read_unlock();
	return mr ? err : mroce_mw_inv_check(qp, rkey);
}

/*
 * Invalidate key (IB_WR_LOCAL_INV, or a SEND_INV completing): once this
 * returns, no access through the key is in progress or can start.  Any
 * context.  Returns 0 or -EINVAL.  remote: a SEND_INV, which can only
 * invalidate a type 2 window bound to qp.
 */
int mroce_invalidate(struct mroce_qp *qp, u32 key, bool remote)
{
	unsigned long flags;
	struct mroce_mr *mr;
	int err = -EINVAL;

	rcu_read_lock();
	mr = mroce_frmr_find(qp, key);
	if (mr) {
		spin_lock_irqsave(&mr->lock, flags);
		if (mr->key == key) {
			mr->valid = false;
			err = 0;
		}
		spin_unlock_irqrestore(&mr->lock, flags);
	}
	rcu_read_unlock();
	return mr ? err : mroce_mw_invalidate(qp, key, remote);
}

/* Execute a local operation of the send queue; its completion status. */
enum ib_wc_status mroce_local_op(struct mroce_qp *qp,
				 const struct mroce_send_wqe *wqe)
{
	switch (wqe->opcode) {
	case IB_WR_REG_MR:
		return mroce_reg_mr(qp, wqe);
	case IB_WR_LOCAL_INV:
		return mroce_invalidate(qp, wqe->invalidate_rkey, false) ?
		       IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
	case IB_WR_BIND_MW:
		return mroce_bind_mw(qp, wqe);
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
}
