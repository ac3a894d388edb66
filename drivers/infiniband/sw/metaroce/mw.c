// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows (spec 10.6, 15.3): type 1, bound with ibv_bind_mw(), and type
 * 2B, bound by an IB_WR_BIND_MW work request and tied to the QP that bound
 * it.  Binding is a local operation of the send queue (user QPs only: the
 * kernel has no memory window API).  A window's key shares the MR key
 * space; the data path resolves it in mem.c.
 *
 * Locking: mdev->mw_lock, then a window's lock.  Every change of a binding
 * holds both; the MR's window count and the QP's window list are under
 * mdev->mw_lock alone.
 */
#include <linux/random.h>

#include "mr.h"
#include "verbs.h"

#define MROCE_MW_INDEX_MAX	((1U << 24) - 1)
/*
 * A window's rights as a bind may give them; LOCAL_WRITE is accepted and
 * ignored, as mlx5 and rxe do (a window grants remote access only).
 */
#define MROCE_MW_ACCESS		(IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ZERO_BASED | IB_ACCESS_LOCAL_WRITE)

int mroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibmw->device);
	struct mroce_mw *mw = to_mmw(ibmw);
	u32 index;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (!mroce_get_limit(&mdev->num_mw, mdev->attr.max_mw))
		return -ENOMEM;

	/* The index is reserved in the MR table, empty: no MR has the key. */
	err = xa_alloc_cyclic(&mdev->mr_xa, &index, NULL,
			      XA_LIMIT(1, MROCE_MW_INDEX_MAX),
			      &mdev->mr_next, GFP_KERNEL);
	if (err < 0)
		goto err_limit;
	spin_lock_init(&mw->lock);
	INIT_LIST_HEAD(&mw->qp_entry);
	mw->index = index;
	mw->key = index << 8 | get_random_u8();
	ibmw->rkey = mw->key;
	err = xa_err(xa_store(&mdev->mw_xa, index, mw, GFP_KERNEL));
	if (err)
		goto err_index;
	return 0;

err_index:
	xa_erase(&mdev->mr_xa, index);
err_limit:
	atomic_dec(&mdev->num_mw);
	return err;
}

/* Undo mw's binding.  mdev->mw_lock and mw->lock held. */
static void mroce_mw_unbind(struct mroce_mw *mw)
{
	lockdep_assert_held(&to_mdev(mw->ibmw.device)->mw_lock);
	lockdep_assert_held(&mw->lock);

	if (mw->mr) {
		mw->mr->num_mw--;
		mw->mr = NULL;
	}
	if (mw->qp) {
		list_del_init(&mw->qp_entry);
		mw->qp = NULL;
	}
	mw->access = 0;
	mw->va = 0;
	mw->length = 0;
	mw->mr_va = 0;
}

/* Unbind mw under both locks; marks it dead if dead. */
static void mroce_mw_unbind_locked(struct mroce_dev *mdev,
				   struct mroce_mw *mw, bool dead)
{
	unsigned long flags;

	spin_lock_irqsave(&mdev->mw_lock, flags);
	spin_lock(&mw->lock);
	mroce_mw_unbind(mw);
	if (dead)
		mw->dead = true;
	spin_unlock(&mw->lock);
	spin_unlock_irqrestore(&mdev->mw_lock, flags);
}

/* A bound window may be deallocated: its MR and QP let go of it. */
int mroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct mroce_dev *mdev = to_mdev(ibmw->device);
	struct mroce_mw *mw = to_mmw(ibmw);

	mroce_mw_unbind_locked(mdev, mw, true);
	xa_erase(&mdev->mw_xa, mw->index);
	/* The data path and binds look windows up under RCU. */
	synchronize_rcu();
	xa_erase(&mdev->mr_xa, mw->index);
	atomic_dec(&mdev->num_mw);
	return 0;
}

/* The window rkey names, or NULL.  Called under RCU. */
static struct mroce_mw *mroce_mw_find(struct mroce_dev *mdev, u32 rkey)
{
	return xa_load(&mdev->mw_xa, rkey >> 8);
}

/*
 * The MR a bind names, checked against the window's range and rights (IBA
 * C10-73, C10-74, C10-75), or NULL.  mdev->mw_lock held, under RCU.
 */
static struct mroce_mr *mroce_bind_mr(struct mroce_qp *qp,
				      const struct metaroce_wqe_bind *b)
{
	struct mroce_dev *mdev = to_mdev(qp->ibqp.device);
	struct mroce_mr *mr = xa_load(&mdev->mr_xa, b->mr_lkey >> 8);
	u64 end;

	lockdep_assert_held(&mdev->mw_lock);

	/* Only user MRs: they never change while a window is bound. */
	if (!mr || mr->type != MROCE_MR_USER || mr->key != b->mr_lkey ||
	    mr->mw_closed || READ_ONCE(mr->ibmr.pd) != qp->ibqp.pd)
		return NULL;
	if (!(mr->access & IB_ACCESS_MW_BIND))
		return NULL;
	if ((b->access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return NULL;
	end = b->addr + b->length;
	if (end < b->addr || b->addr < mr->iova ||
	    end - mr->iova > mr->length)
		return NULL;
	return mr;
}

/*
 * Can qp bind mw as b asks?  A type 1 window is named by its current key
 * (the provider keeps it, ibv_bind_mw(3)); a type 2 one, free, by its
 * index.  mdev->mw_lock held.
 */
static bool mroce_bind_ok(struct mroce_qp *qp, struct mroce_mw *mw,
			  const struct metaroce_wqe_bind *b)
{
	lockdep_assert_held(&to_mdev(qp->ibqp.device)->mw_lock);

	if (mw->dead || b->new_rkey >> 8 != mw->index ||
	    (mw->ibmw.type == IB_MW_TYPE_1 && mw->key != b->mw_rkey) ||
	    mw->ibmw.pd != qp->ibqp.pd)		/* C10-72 */
		return false;
	if (b->access & ~MROCE_MW_ACCESS)
		return false;
	if (mw->ibmw.type == IB_MW_TYPE_1)
		/* Bound by ibv_bind_mw() only; never zero based (o10-36.2.2). */
		return b->type == METAROCE_BIND_TYPE_1 &&
		       !(b->access & IB_ZERO_BASED);
	/* Type 2: by a work request, when free, to memory (o10-37.2.30, 40). */
	return b->type == METAROCE_BIND_TYPE_2 && !mw->mr && b->length;
}

/*
 * Execute a BIND_MW WQE of qp: IB_WC_SUCCESS or IB_WC_MW_BIND_ERR (the
 * caller completes it and moves the QP to the error state).
 */
enum ib_wc_status mroce_bind_mw(struct mroce_qp *qp,
				const struct mroce_send_wqe *wqe)
{
	struct mroce_dev *mdev = to_mdev(qp->ibqp.device);
	const struct metaroce_wqe_bind *b = &wqe->bind;
	enum ib_wc_status status = IB_WC_MW_BIND_ERR;
	struct mroce_mr *mr = NULL;
	struct mroce_mw *mw;
	unsigned long flags;

	rcu_read_lock();
	spin_lock_irqsave(&mdev->mw_lock, flags);
	mw = mroce_mw_find(mdev, b->mw_rkey);
	if (!mw || !mroce_bind_ok(qp, mw, b))
		goto out;
	if (b->length) {
		mr = mroce_bind_mr(qp, b);
		if (!mr)
			goto out;
	}

	spin_lock(&mw->lock);
	mroce_mw_unbind(mw);		/* type 1: a rebind replaces */
	mw->key = b->new_rkey;
	if (mr) {
		mw->mr = mr;
		mr->num_mw++;
		mw->access = b->access &
			     ~(IB_ZERO_BASED | IB_ACCESS_LOCAL_WRITE);
		mw->va = b->access & IB_ZERO_BASED ? 0 : b->addr;
		mw->length = b->length;
		mw->mr_va = b->addr;
		if (mw->ibmw.type == IB_MW_TYPE_2) {
			mw->qp = qp;
			list_add_tail(&mw->qp_entry, &qp->mws);
		}
	}
	spin_unlock(&mw->lock);
	status = IB_WC_SUCCESS;
out:
	spin_unlock_irqrestore(&mdev->mw_lock, flags);
	rcu_read_unlock();
	return status;
}

/*
 * May qp invalidate the type 2 window rkey names (a LOCAL_INV it posts or,
 * when remote, a SEND_WITH_INV it receives)?  Only the key it has now, in
 * qp's PD; remotely, only while free or bound to qp.  A free window may be
 * invalidated again.  Window and MR locks held as for a bind.
 */
static bool mroce_mw_inv_ok(struct mroce_qp *qp, struct mroce_mw *mw,
			    u32 rkey, bool remote)
{
	if (mw->dead || mw->key != rkey || mw->ibmw.pd != qp->ibqp.pd)
		return false;
	if (mw->ibmw.type != IB_MW_TYPE_2)	/* o10-37.2.26 */
		return false;
	return !remote || !mw->qp || mw->qp == qp;
}

/*
 * Invalidate the type 2 window rkey names (only check that qp may, if
 * !apply): once this returns, no access through it is in progress or can
 * start.  0 or -EINVAL.
 */
static int mroce_mw_inv(struct mroce_qp *qp, u32 rkey, bool remote,
			bool apply)
{
	struct mroce_dev *mdev = to_mdev(qp->ibqp.device);
	struct mroce_mw *mw;
	unsigned long flags;
	int err = -EINVAL;

	rcu_read_lock();
	spin_lock_irqsave(&mdev->mw_lock, flags);
	mw = mroce_mw_find(mdev, rkey);
	if (mw && mroce_mw_inv_ok(qp, mw, rkey, remote)) {
		if (apply) {
			spin_lock(&mw->lock);
			mroce_mw_unbind(mw);
			spin_unlock(&mw->lock);
		}
		err = 0;
	}
	spin_unlock_irqrestore(&mdev->mw_lock, flags);
	rcu_read_unlock();
	return err;
}

/* 0 if a SEND_WITH_INV arriving at qp may invalidate rkey, or -EINVAL. */
int mroce_mw_inv_check(struct mroce_qp *qp, u32 rkey)
{
	return mroce_mw_inv(qp, rkey, true, false);
}

int mroce_mw_invalidate(struct mroce_qp *qp, u32 rkey, bool remote)
{
	return mroce_mw_inv(qp, rkey, remote, true);
}

/* A QP being destroyed: the type 2 windows it bound become free. */
void mroce_mw_qp_release(struct mroce_qp *qp)
{
	struct mroce_dev *mdev = to_mdev(qp->ibqp.device);
	struct mroce_mw *mw, *next;
	unsigned long flags;

	spin_lock_irqsave(&mdev->mw_lock, flags);
	list_for_each_entry_safe(mw, next, &qp->mws, qp_entry) {
		spin_lock(&mw->lock);
		mroce_mw_unbind(mw);
		spin_unlock(&mw->lock);
	}
	spin_unlock_irqrestore(&mdev->mw_lock, flags);
}

/*
 * An MR is being deregistered (or re-registered): -EINVAL while windows
 * are bound to it, as rxe does (IBA 10.6.7.2.6); otherwise no window can
 * be bound to it any more and 0 is returned.
 */
int mroce_mw_mr_close(struct mroce_mr *mr)
{
	struct mroce_dev *mdev = to_mdev(mr->ibmr.device);
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&mdev->mw_lock, flags);
	if (mr->num_mw)
		err = -EINVAL;
	else
		mr->mw_closed = true;
	spin_unlock_irqrestore(&mdev->mw_lock, flags);
	return err;
}

/* Windows may be bound to mr again (a re-registration failed). */
void mroce_mw_mr_reopen(struct mroce_mr *mr)
{
	struct mroce_dev *mdev = to_mdev(mr->ibmr.device);
	unsigned long flags;

	spin_lock_irqsave(&mdev->mw_lock, flags);
	mr->mw_closed = false;
	spin_unlock_irqrestore(&mdev->mw_lock, flags);
}
