// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Local memory access through scatter/gather lists: every SGE's key is looked
 * up, checked against the QP's PD, the access needed and the MR's range,
 * before a byte moves.
 */
#include <linux/highmem.h>

#include "verbs.h"

u64 mroce_sgl_len(const struct metaroce_sge *sge, u32 num_sge)
{
	u64 len = 0;
	u32 i;

	for (i = 0; i < num_sge; i++)
		len += sge[i].length;
	return len;
}

/* Copy between buf and [iova, iova + len) of mr, which the caller checked. */
static void mroce_mr_copy(struct mroce_mr *mr, u64 iova, void *buf, u32 len,
			  bool to_mr)
{
	u64 pos;

	if (mr->type == MROCE_MR_DMA) {
		void *va = (void *)(uintptr_t)iova;

		if (to_mr)
			memcpy(va, buf, len);
		else
			memcpy(buf, va, len);
		return;
	}

	pos = iova - mr->iova + ib_umem_offset(mr->umem);
	while (len) {
		u32 off = pos & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - off);
		void *va = kmap_local_page(mr->pages[pos >> PAGE_SHIFT]);

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

/*
 * Look up an lkey for access by qp to [addr, addr + len).  Called under RCU;
 * the MR stays valid until rcu_read_unlock().
 */
static struct mroce_mr *mroce_lkey_lookup(struct mroce_qp *qp, u32 lkey,
					  u64 addr, u64 len, int access)
{
	struct mroce_dev *mdev = to_mdev(qp->ibqp.device);
	struct mroce_mr *mr;

	mr = xa_load(&mdev->mr_xa, lkey >> 8);
	if (!mr || mr->ibmr.lkey != lkey || mr->ibmr.pd != qp->ibqp.pd)
		return NULL;
	if ((mr->access & access) != access)
		return NULL;
	if (addr < mr->iova || addr + len < addr ||
	    addr + len - mr->iova > mr->length)
		return NULL;
	return mr;
}

/*
 * Copy len bytes between buf and the memory an SGE list describes, starting
 * offset bytes into the list (to the list when to_sgl).  Nothing is copied
 * unless every SGE that the copy touches is valid: returns -EINVAL if the
 * list is too short, -EACCES on a bad key, PD, access right or range.
 */
int mroce_copy_sgl(struct mroce_qp *qp, const struct metaroce_sge *sge,
		   u32 num_sge, u64 offset, void *buf, u32 len, bool to_sgl)
{
	int access = to_sgl ? IB_ACCESS_LOCAL_WRITE : 0;
	struct mroce_mr *mrs[MROCE_MAX_SGE];
	u32 first, i, left, n;
	u64 skip;

	if (num_sge > MROCE_MAX_SGE ||
	    mroce_sgl_len(sge, num_sge) < offset + len)
		return -EINVAL;
	for (first = 0; first < num_sge && offset >= sge[first].length; first++)
		offset -= sge[first].length;

	rcu_read_lock();
	for (i = first, left = len, skip = offset; i < num_sge && left; i++) {
		n = min_t(u64, left, sge[i].length - skip);
		mrs[i] = mroce_lkey_lookup(qp, sge[i].lkey, sge[i].addr + skip,
					   n, access);
		if (!mrs[i]) {
			rcu_read_unlock();
			return -EACCES;
		}
		left -= n;
		skip = 0;
	}
	for (i = first, left = len, skip = offset; i < num_sge && left; i++) {
		n = min_t(u64, left, sge[i].length - skip);
		mroce_mr_copy(mrs[i], sge[i].addr + skip, buf, n, to_sgl);
		buf += n;
		left -= n;
		skip = 0;
	}
	rcu_read_unlock();
	return 0;
}

/*
 * Look up an rkey for remote access by qp to [va, va + len) (spec 10.6).
 * Called under RCU.  Returns the NAK REMOTE_ACCESS detail on failure.
 */
static int mroce_rkey_lookup(struct mroce_qp *qp, u32 rkey, u64 va, u64 len,
			     int access, struct mroce_mr **out)
{
	struct mroce_dev *mdev = to_mdev(qp->ibqp.device);
	struct mroce_mr *mr;

	mr = xa_load(&mdev->mr_xa, rkey >> 8);
	if (!mr || mr->ibmr.rkey != rkey)
		return 1;
	if (mr->ibmr.pd != qp->ibqp.pd)
		return 2;
	if ((mr->access & access) != access)
		return 3;
	if (va < mr->iova || va + len < va || va + len - mr->iova > mr->length)
		return 4;
	*out = mr;
	return 0;
}

/* Check that the whole range is accessible; 0 or the NAK detail. */
int mroce_rkey_check(struct mroce_qp *qp, u32 rkey, u64 va, u64 len,
		     int access)
{
	struct mroce_mr *mr;
	int err;

	rcu_read_lock();
	err = mroce_rkey_lookup(qp, rkey, va, len, access, &mr);
	rcu_read_unlock();
	return err;
}

/* Copy to (to_mr) or from remote-accessible memory; 0 or the NAK detail. */
int mroce_rkey_copy(struct mroce_qp *qp, u32 rkey, u64 va, void *buf,
		    u32 len, int access, bool to_mr)
{
	struct mroce_mr *mr;
	int err;

	rcu_read_lock();
	err = mroce_rkey_lookup(qp, rkey, va, len, access, &mr);
	if (!err && len)
		mroce_mr_copy(mr, va, buf, len, to_mr);
	rcu_read_unlock();
	return err;
}

/*
 * Execute an atomic on the 8-byte target at va (spec 10.5): compare-swap
 * when cmp_swap, else fetch-add.  The original value goes to *orig.
 */
int mroce_rkey_atomic(struct mroce_qp *qp, u32 rkey, u64 va, bool cmp_swap,
		      u64 swap_add, u64 compare, u64 *orig)
{
	struct mroce_mr *mr;
	struct page *page;
	u64 pos, old, *p;
	void *kva = NULL;
	int err;

	rcu_read_lock();
	err = mroce_rkey_lookup(qp, rkey, va, 8, IB_ACCESS_REMOTE_ATOMIC, &mr);
	if (err)
		goto out;
	if (mr->type == MROCE_MR_DMA) {
		p = (u64 *)(uintptr_t)va;
	} else {
		pos = va - mr->iova + ib_umem_offset(mr->umem);
		page = mr->pages[pos >> PAGE_SHIFT];
		kva = kmap_local_page(page);
		p = kva + (pos & ~PAGE_MASK);
	}
	if (cmp_swap) {
		old = cmpxchg64(p, compare, swap_add);
	} else {
		do {
			old = READ_ONCE(*p);
		} while (cmpxchg64(p, old, old + swap_add) != old);
	}
	*orig = old;
	if (kva)
		kunmap_local(kva);
out:
	rcu_read_unlock();
	return err;
}

/* Check that the SGE list grants access to its first len bytes. */
int mroce_check_sgl(struct mroce_qp *qp, const struct metaroce_sge *sge,
		    u32 num_sge, u32 len, int access)
{
	u32 i, left, n;
	int err = 0;

	if (num_sge > MROCE_MAX_SGE || mroce_sgl_len(sge, num_sge) < len)
		return -EINVAL;
	rcu_read_lock();
	for (i = 0, left = len; i < num_sge && left && !err; i++) {
		n = min(left, sge[i].length);
		if (!mroce_lkey_lookup(qp, sge[i].lkey, sge[i].addr, n, access))
			err = -EACCES;
		left -= n;
	}
	rcu_read_unlock();
	return err;
}
