// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Local memory access through scatter/gather lists: every SGE's key is looked
 * up, checked against the QP's PD, the access needed and the MR's range,
 * before a byte moves.
 */
#include <linux/highmem.h>

#include "mr.h"
#include "verbs.h"

u64 mroce_sgl_len(const struct metaroce_sge *sge, u32 num_sge)
{
	u64 len = 0;
	u32 i;

	for (i = 0; i < num_sge; i++)
		len += sge[i].length;
	return len;
}

/* The kernel address of byte iova of a valid fast-registration MR. */
static void *mroce_frmr_va(const struct mroce_mr *mr, u64 iova, u32 *avail)
{
	const struct mroce_frpl *pl = mr->map;
	u64 pos = iova - mr->iova + pl->page_offset;
	u64 in = pos & ((1ULL << pl->page_shift) - 1);

	*avail = min_t(u64, U32_MAX, (1ULL << pl->page_shift) - in);
	return (void *)(uintptr_t)(pl->pages[pos >> pl->page_shift] + in);
}

/* Copy between buf and [iova, iova + len) of mr, which the caller checked. */
static void mroce_mr_copy(struct mroce_mr *mr, u64 iova, void *buf, u32 len,
			  bool to_mr)
{
	u32 n, avail;
	void *va;
	u64 pos;

	if (mr->type == MROCE_MR_DMA) {
		va = (void *)(uintptr_t)iova;
		if (to_mr)
			memcpy(va, buf, len);
		else
			memcpy(buf, va, len);
		return;
	}
	if (mr->type == MROCE_MR_FAST) {
		/* Each page-size block is contiguous kernel memory. */
		while (len) {
			va = mroce_frmr_va(mr, iova, &avail);
			n = min(len, avail);
			if (to_mr)
				memcpy(va, buf, n);
			else
				memcpy(buf, va, n);
			buf += n;
			iova += n;
			len -= n;
		}
		return;
	}

	pos = iova - mr->iova + ib_umem_offset(mr->umem);
	while (len) {
		u32 off = pos & ~PAGE_MASK;

		n = min_t(u32, len, PAGE_SIZE - off);
		va = kmap_local_page(mr->pages[pos >> PAGE_SHIFT]);
		if (to_mr)
			memcpy(va + off, buf, n);
		else
			memcpy(buf, va + off, n);
		kunmap_local(va);
		buf += n;
		pos += n;
		len -= n;
	}
}

/* What to do with an MR once it passed its checks. */
struct mroce_mr_op {
	enum { MROCE_OP_CHECK, MROCE_OP_COPY, MROCE_OP_ATOMIC } kind;
	void *buf;		/* COPY */
	bool to_mr;		/* COPY */
	bool cmp_swap;		/* ATOMIC: compare-swap, else fetch-add */
	u64 swap_add;		/* ATOMIC */
	u64 compare;		/* ATOMIC */
	u64 orig;		/* ATOMIC: the value found */
};

/* The 8-byte atomic at va of mr, which the caller checked (spec 10.5). */
static void mroce_mr_atomic(struct mroce_mr *mr, u64 va,
			    struct mroce_mr_op *op)
{
	void *kva = NULL;
	u64 pos, old, *p;
	u32 avail;

	if (mr->type == MROCE_MR_DMA) {
		p = (u64 *)(uintptr_t)va;
	} else if (mr->type == MROCE_MR_FAST) {
		p = mroce_frmr_va(mr, va, &avail);
	} else {
		pos = va - mr->iova + ib_umem_offset(mr->umem);
		kva = kmap_local_page(mr->pages[pos >> PAGE_SHIFT]);
		p = kva + (pos & ~PAGE_MASK);
	}
	if (op->cmp_swap) {
		old = cmpxchg64(p, op->compare, op->swap_add);
	} else {
		do {
			old = READ_ONCE(*p);
		} while (cmpxchg64(p, old, old + op->swap_add) != old);
	}
	op->orig = old;
	if (kva)
		kunmap_local(kva);
}

/*
 * Check mr for access by qp through key to [va, va + len), then do op.
 * Returns 0 or the REMOTE_ACCESS detail of spec 13.1: 1 bad or invalidated
 * key, 2 other PD, 3 access right missing, 4 out of range.
 */
static int mroce_mr_check_do(struct mroce_qp *qp, struct mroce_mr *mr,
			     u32 key, u64 va, u32 len, int access,
			     struct mroce_mr_op *op)
{
	if (!mr->valid || mr->key != key)
		return 1;
	if (READ_ONCE(mr->ibmr.pd) != qp->ibqp.pd)
		return 2;
	if ((READ_ONCE(mr->access) & access) != access)
		return 3;
	if (va < mr->iova || va + len < va || va + len - mr->iova > mr->length)
		return 4;
	if (op->kind == MROCE_OP_COPY && len)
		mroce_mr_copy(mr, va, op->buf, len, op->to_mr);
	else if (op->kind == MROCE_OP_ATOMIC)
		mroce_mr_atomic(mr, va, op);
	return 0;
}

/*
 * A fast-registration MR changes when it is registered or invalidated: it
 * is checked and used under its lock, so that an invalidation returns only
 * once no access through the old registration is in progress.
 */
static int mroce_frmr_check_do(struct mroce_qp *qp, struct mroce_mr *mr,
			       u32 key, u64 va, u32 len, int access,
			       struct mroce_mr_op *op)
{
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&mr->lock, flags);
	ret = mroce_mr_check_do(qp, mr, key, va, len, access, op);
	spin_unlock_irqrestore(&mr->lock, flags);
	return ret;
}

/*
 * Check a memory window for access by qp through key to [va, va + len),
 * then do op on its MR (spec 10.6): the window's key, PD, QP (type 2: only
 * the QP that bound it, that is only its peer's requests), rights and range.
 * Under the window's lock, so that an unbind or invalidation returns only
 * once this is done.  The MR is a user MR, held by the binding.
 */
static int mroce_mw_check_do(struct mroce_qp *qp, struct mroce_mw *mw,
			     u32 key, u64 va, u32 len, int access,
			     struct mroce_mr_op *op)
{
	unsigned long flags;
	u64 mr_va;
	int ret;

	spin_lock_irqsave(&mw->lock, flags);
	if (!mw->mr || mw->key != key)
		ret = 1;
	else if (mw->ibmw.pd != qp->ibqp.pd ||
		 (mw->ibmw.type == IB_MW_TYPE_2 && mw->qp != qp))
		ret = 2;
	else if ((mw->access & access) != access)
		ret = 3;
	else if (va < mw->va || va + len < va || va + len - mw->va > mw->length)
		ret = 4;
	else
		ret = 0;
	mr_va = mw->mr_va + (va - mw->va);
	/* A zero-based window may put an aligned target off alignment. */
	if (!ret && op->kind == MROCE_OP_ATOMIC && (mr_va & 7))
		ret = 4;
	if (!ret) {
		if (op->kind == MROCE_OP_COPY && len)
			mroce_mr_copy(mw->mr, mr_va, op->buf, len, op->to_mr);
		else if (op->kind == MROCE_OP_ATOMIC)
			mroce_mr_atomic(mw->mr, mr_va, op);
	}
	spin_unlock_irqrestore(&mw->lock, flags);
	return ret;
}

#define MROCE_ACCESS_REMOTE	(IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC)

/*
 * Look key up, check it and do op: 0 or the REMOTE_ACCESS detail.  A
 * remote access may go through a memory window; a local one (an lkey)
 * never does.
 */
static int mroce_mr_access(struct mroce_qp *qp, u32 key, u64 va, u32 len,
			   int access, struct mroce_mr_op *op)
{
	struct mroce_dev *mdev = to_mdev(qp->ibqp.device);
	struct mroce_mw *mw;
	struct mroce_mr *mr;
	int ret = 1;

	rcu_read_lock();
	mr = xa_load(&mdev->mr_xa, key >> 8);
	if (mr && mr->type == MROCE_MR_FAST) {
		ret = mroce_frmr_check_do(qp, mr, key, va, len, access, op);
	} else if (mr) {
		ret = mroce_mr_check_do(qp, mr, key, va, len, access, op);
	} else if (access & MROCE_ACCESS_REMOTE) {
		mw = xa_load(&mdev->mw_xa, key >> 8);
		if (mw)
			ret = mroce_mw_check_do(qp, mw, key, va, len, access,
						op);
	}
	rcu_read_unlock();
	return ret;
}

/*
 * Copy len bytes between buf and the memory an SGE list describes, starting
 * offset bytes into the list (to the list when to_sgl).  Nothing is copied
 * unless every SGE that the copy touches is valid: returns -EINVAL if the
 * list is too short, -EACCES on a bad key, PD, access right or range.  (An
 * MR invalidated by its consumer while the copy runs may see part of it.)
 */
int mroce_copy_sgl(struct mroce_qp *qp, const struct metaroce_sge *sge,
		   u32 num_sge, u64 offset, void *buf, u32 len, bool to_sgl)
{
	struct mroce_mr_op op = { .kind = MROCE_OP_COPY, .to_mr = to_sgl };
	int access = to_sgl ? IB_ACCESS_LOCAL_WRITE : 0;
	u32 first, i, left, n;
	int err;

	if (num_sge > MROCE_MAX_SGE ||
	    mroce_sgl_len(sge, num_sge) < offset + len)
		return -EINVAL;
	for (first = 0; first < num_sge && offset >= sge[first].length; first++)
		offset -= sge[first].length;

	/* Within one SGE the copy checks it anyway: no pass of its own. */
	if (first < num_sge && sge[first].length - offset < len) {
		err = mroce_check_sgl(qp, sge + first, num_sge - first, offset,
				      len, access);
		if (err)
			return err;
	}
	op.buf = buf;
	for (i = first, left = len; i < num_sge && left; i++) {
		n = min_t(u64, left, sge[i].length - offset);
		if (mroce_mr_access(qp, sge[i].lkey, sge[i].addr + offset, n,
				    access, &op))
			return -EACCES;
		op.buf += n;
		left -= n;
		offset = 0;
	}
	return 0;
}

/* Check that the whole range is accessible; 0 or the NAK detail. */
int mroce_rkey_check(struct mroce_qp *qp, u32 rkey, u64 va, u64 len,
		     int access)
{
	struct mroce_mr_op op = { .kind = MROCE_OP_CHECK };

	if (len > U32_MAX)
		return 4;
	return mroce_mr_access(qp, rkey, va, len, access, &op);
}

/* Copy to (to_mr) or from remote-accessible memory; 0 or the NAK detail. */
int mroce_rkey_copy(struct mroce_qp *qp, u32 rkey, u64 va, void *buf,
		    u32 len, int access, bool to_mr)
{
	struct mroce_mr_op op = {
		.kind = MROCE_OP_COPY, .buf = buf, .to_mr = to_mr,
	};

	return mroce_mr_access(qp, rkey, va, len, access, &op);
}

/*
 * Execute an atomic on the 8-byte target at va (spec 10.5): compare-swap
 * when cmp_swap, else fetch-add.  The original value goes to *orig.
 */
int mroce_rkey_atomic(struct mroce_qp *qp, u32 rkey, u64 va, bool cmp_swap,
		      u64 swap_add, u64 compare, u64 *orig)
{
	struct mroce_mr_op op = {
		.kind = MROCE_OP_ATOMIC, .cmp_swap = cmp_swap,
		.swap_add = swap_add, .compare = compare,
	};
	int err;

	err = mroce_mr_access(qp, rkey, va, 8, IB_ACCESS_REMOTE_ATOMIC, &op);
	if (!err)
		*orig = op.orig;
	return err;
}

/*
 * Check that the SGE list grants access to its len bytes from offset (into
 * its first SGE).  0, -EINVAL if the list is too short, or -EACCES.
 */
int mroce_check_sgl(struct mroce_qp *qp, const struct metaroce_sge *sge,
		    u32 num_sge, u64 offset, u32 len, int access)
{
	struct mroce_mr_op op = { .kind = MROCE_OP_CHECK };
	u32 i, left, n;

	if (num_sge > MROCE_MAX_SGE ||
	    mroce_sgl_len(sge, num_sge) < offset + len)
		return -EINVAL;
	for (i = 0, left = len; i < num_sge && left; i++) {
		n = min_t(u64, left, sge[i].length - offset);
		if (mroce_mr_access(qp, sge[i].lkey, sge[i].addr + offset, n,
				    access, &op))
			return -EACCES;
		left -= n;
		offset = 0;
	}
	return 0;
}
