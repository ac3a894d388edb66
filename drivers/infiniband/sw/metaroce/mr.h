/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory keys: regions (mr.c, frmr.c), windows (mw.c), and the checks and
 * copies the data path makes through a key (mem.c).  Each object says
 * which lock guards what at its fields.
 */
#ifndef MROCE_MR_H
#define MROCE_MR_H

#include <linux/spinlock.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/metaroce-abi.h>

struct mroce_qp;
struct mroce_send_wqe;

enum mroce_mr_type {
	MROCE_MR_DMA,		/* the whole kernel address space */
	MROCE_MR_USER,		/* pinned user memory (ib_umem) */
	MROCE_MR_FAST,		/* fast registration (ib_alloc_mr, IB_WR_REG_MR) */
};

/*
 * A fast-registration page list: the DMA addresses (kernel virtual
 * addresses: the device has no DMA device) of page_size blocks.
 */
struct mroce_frpl {
	u64 *pages;
	u32 npages;
	u8 page_shift;
	u32 page_offset;	/* of the first byte in pages[0] */
	u64 length;		/* bytes mapped, from the first byte */
};

/*
 * A memory region.  The data path looks keys up under RCU.  A DMA or user
 * MR never changes after creation.  A fast-registration MR changes its key,
 * state, range, access and translation when a work request registers or
 * invalidates it: all under lock, which the data path holds while it
 * checks and uses the MR, so that an invalidation returns only once no
 * access through the old registration is in progress.
 */
struct mroce_mr {
	struct ib_mr ibmr;
	enum mroce_mr_type type;
	u32 index;		/* in mdev->mr_xa: the key's upper 24 bits */
	spinlock_t lock;	/* MROCE_MR_FAST: everything below */
	bool valid;		/* registered (always, for DMA and user MRs) */
	u32 key;		/* the lkey and rkey the data path accepts */
	int access;
	u64 iova;
	u64 length;
	struct ib_umem *umem;	/* MROCE_MR_USER only */
	struct page **pages;	/* MROCE_MR_USER: the umem's pages, in order */
	u32 max_pages;		/* MROCE_MR_FAST: page list capacity */
	struct mroce_frpl *map;	/* MROCE_MR_FAST: the registered translation */
	struct mroce_frpl *staging; /* ... and the one map_mr_sg fills */
	struct mroce_frpl frpl[2];
	/* Under mdev->mw_lock (mw.c): */
	u32 num_mw;		/* windows bound to it */
	bool mw_closed;		/* being deregistered: no more binds */
};

static inline struct mroce_mr *to_mmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct mroce_mr, ibmr);
}

/*
 * A memory window (mw.c).  Its binding (mr, qp, range, access, key)
 * changes under mdev->mw_lock and lock both; the data path checks and uses
 * the window under lock alone, so that an unbind or invalidation returns
 * only once no access through the old binding is in progress.  A bound
 * window's MR is a user MR, which cannot be deregistered while bound.
 */
struct mroce_mw {
	struct ib_mw ibmw;
	u32 index;		/* the key's upper 24 bits */
	spinlock_t lock;
	bool dead;		/* deallocated: binds fail */
	u32 key;		/* the rkey now (ibmw.rkey: at allocation) */
	struct mroce_mr *mr;	/* bound to; NULL: not bound */
	struct mroce_qp *qp;	/* type 2, bound: the QP that bound it */
	struct list_head qp_entry;	/* on qp->mws (type 2, bound) */
	int access;		/* IB_ACCESS_REMOTE_* */
	u64 va;			/* the window's first byte, as addressed */
	u64 length;
	u64 mr_va;		/* the same byte as an address of mr */
};

static inline struct mroce_mw *to_mmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct mroce_mw, ibmw);
}

/* mem.c */
int mroce_copy_sgl(struct mroce_qp *qp, const struct metaroce_sge *sge,
		   u32 num_sge, u64 offset, void *buf, u32 len, bool to_sgl);
u64 mroce_sgl_len(const struct metaroce_sge *sge, u32 num_sge);
int mroce_check_sgl(struct mroce_qp *qp, const struct metaroce_sge *sge,
		    u32 num_sge, u64 offset, u32 len, int access);
int mroce_rkey_check(struct mroce_qp *qp, u32 rkey, u64 va, u64 len,
		     int access);
int mroce_rkey_copy(struct mroce_qp *qp, u32 rkey, u64 va, void *buf,
		    u32 len, int access, bool to_mr);
int mroce_rkey_atomic(struct mroce_qp *qp, u32 rkey, u64 va, bool cmp_swap,
		      u64 swap_add, u64 compare, u64 *orig);

/* mr.c */
struct mroce_mr *mroce_mr_alloc(struct ib_pd *ibpd, int access);
struct ib_mr *mroce_mr_publish(struct mroce_mr *mr);
void mroce_mr_free(struct mroce_mr *mr);
struct ib_mr *mroce_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *mroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
int mroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *mroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *pd, struct ib_udata *udata);

/* frmr.c: fast registration and invalidation */
struct ib_mr *mroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int mroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
void mroce_frmr_free(struct mroce_mr *mr);
enum ib_wc_status mroce_local_op(struct mroce_qp *qp,
				 const struct mroce_send_wqe *wqe);
int mroce_inv_check(struct mroce_qp *qp, u32 rkey);
int mroce_invalidate(struct mroce_qp *qp, u32 key, bool remote);

/* mw.c: memory windows */
int mroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int mroce_dealloc_mw(struct ib_mw *ibmw);
enum ib_wc_status mroce_bind_mw(struct mroce_qp *qp,
				const struct mroce_send_wqe *wqe);
int mroce_mw_inv_check(struct mroce_qp *qp, u32 rkey);
int mroce_mw_invalidate(struct mroce_qp *qp, u32 rkey, bool remote);
void mroce_mw_qp_release(struct mroce_qp *qp);
int mroce_mw_mr_close(struct mroce_mr *mr);
void mroce_mw_mr_reopen(struct mroce_mr *mr);

#endif /* MROCE_MR_H */
