// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions and their keys.
 *
 * A key is a 24-bit index into the device's MR table followed by 8 random
 * bits, so a peer cannot guess a valid rkey from an index alone.
 */
#include <linux/random.h>

#include "mr.h"
#include "verbs.h"

#define MROCE_KEY_INDEX_MAX	((1U << 24) - 1)

#define MROCE_MR_ACCESS_SUPPORTED (IB_ACCESS_LOCAL_WRITE | \
				   IB_ACCESS_REMOTE_WRITE | \
				   IB_ACCESS_REMOTE_READ | \
				   IB_ACCESS_REMOTE_ATOMIC | \
				   IB_ACCESS_MW_BIND | \
				   IB_ACCESS_OPTIONAL)

struct mroce_mr *mroce_mr_alloc(struct ib_pd *ibpd, int access)
{
	struct mroce_dev *mdev = to_mdev(ibpd->device);
	struct mroce_mr *mr;
	u32 index;
	int err;

	if (access & ~MROCE_MR_ACCESS_SUPPORTED)
		return ERR_PTR(-EOPNOTSUPP);
	if (!mroce_get_limit(&mdev->num_mr, mdev->attr.max_mr))
		return ERR_PTR(-ENOMEM);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		err = -ENOMEM;
		goto err_limit;
	}

	/* Reserve the index; mroce_mr_publish() makes the key valid. */
	err = xa_alloc_cyclic(&mdev->mr_xa, &index, NULL,
			      XA_LIMIT(1, MROCE_KEY_INDEX_MAX),
			      &mdev->mr_next, GFP_KERNEL);
	if (err < 0)
		goto err_free;

	mr->ibmr.device = ibpd->device;	/* the core sets it too, later */
	mr->index = index;
	spin_lock_init(&mr->lock);
	mr->valid = true;
	mr->access = access;
	mr->key = index << 8 | get_random_u8();
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	return mr;

err_free:
	kfree(mr);
err_limit:
	atomic_dec(&mdev->num_mr);
	return ERR_PTR(err);
}

struct ib_mr *mroce_mr_publish(struct mroce_mr *mr)
{
	struct mroce_dev *mdev = to_mdev(mr->ibmr.device);

	/* The slot is reserved: storing into it allocates nothing. */
	xa_store(&mdev->mr_xa, mr->index, mr, GFP_KERNEL);
	return &mr->ibmr;
}

void mroce_mr_free(struct mroce_mr *mr)
{
	struct mroce_dev *mdev = to_mdev(mr->ibmr.device);

	xa_erase(&mdev->mr_xa, mr->index);
	/* The data path looks keys up under RCU. */
	synchronize_rcu();
	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	mroce_frmr_free(mr);
	kfree(mr);
	atomic_dec(&mdev->num_mr);
}

/* Record the pinned pages of a user MR so the data path can map them. */
static int mroce_mr_collect_pages(struct mroce_mr *mr)
{
	struct ib_umem *umem = mr->umem;
	struct sg_page_iter iter;
	size_t n = 0, npages;

	npages = ib_umem_num_pages(umem);
	mr->pages = kvmalloc_array(npages, sizeof(*mr->pages),
				   GFP_KERNEL_ACCOUNT);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (WARN_ON_ONCE(n >= npages))
			break;
		mr->pages[n++] = sg_page_iter_page(&iter);
	}
	return 0;
}

struct ib_mr *mroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct mroce_mr *mr = mroce_mr_alloc(ibpd, access);

	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->type = MROCE_MR_DMA;
	mr->iova = 0;
	mr->length = U64_MAX;
	return mroce_mr_publish(mr);
}

struct ib_mr *mroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct ib_umem *umem;
	struct mroce_mr *mr;
	int err;

	if (!length || length > MROCE_MAX_MR_SIZE)
		return ERR_PTR(-EINVAL);
	if (iova + length < iova)
		return ERR_PTR(-EINVAL);

	mr = mroce_mr_alloc(ibpd, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(umem)) {
		mroce_mr_free(mr);
		return ERR_CAST(umem);
	}
	mr->type = MROCE_MR_USER;
	mr->umem = umem;
	err = mroce_mr_collect_pages(mr);
	if (err) {
		mroce_mr_free(mr);
		return ERR_PTR(err);
	}
	mr->iova = iova;
	mr->length = length;
	return mroce_mr_publish(mr);
}

/* Fails with -EINVAL while memory windows are bound to the MR (mw.c). */
int mroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct mroce_mr *mr = to_mmr(ibmr);
	int err;

	err = mroce_mw_mr_close(mr);
	if (err)
		return err;
	mroce_mr_free(mr);
	return 0;
}

/*
 * Can a re-registration keep the MR, and its keys?  When it changes only
 * the access rights or the PD, unless it adds write access to pages
 * pinned read-only (those must be pinned again).
 */
static bool mroce_rereg_in_place(const struct mroce_mr *mr, int flags,
				 int access)
{
	if (flags & IB_MR_REREG_TRANS)
		return false;
	return !(flags & IB_MR_REREG_ACCESS) || mr->umem->writable ||
	       !ib_access_writable(access);
}

/*
 * ibv_rereg_mr().  Rights or PD only: in place, the lkey and rkey kept,
 * as mlx5 and rxe keep them (applications go on using the keys they
 * exchanged); the core moves the MR to the new PD.  Otherwise register
 * afresh with what changes and what stays, and hand the core the new MR,
 * which then destroys the old one: the keys change, as a re-registration
 * may do (IBA 11.2.8.4).  Not while memory windows are bound to the MR.
 */
struct ib_mr *mroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *pd, struct ib_udata *udata)
{
	struct mroce_mr *mr = to_mmr(ibmr);
	struct ib_mr *new;

	if (mr->type != MROCE_MR_USER || mroce_mw_mr_close(mr))
		return ERR_PTR(-EINVAL);
	if ((flags & IB_MR_REREG_ACCESS) &&
	    (access & ~MROCE_MR_ACCESS_SUPPORTED)) {
		mroce_mw_mr_reopen(mr);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (mroce_rereg_in_place(mr, flags, access)) {
		/*
		 * The PD too, before binds may come again (the core stores
		 * the same): no window of the old PD may bind to it.
		 */
		if (flags & IB_MR_REREG_PD)
			WRITE_ONCE(mr->ibmr.pd, pd);
		if (flags & IB_MR_REREG_ACCESS)
			WRITE_ONCE(mr->access, access);
		mroce_mw_mr_reopen(mr);
		return NULL;
	}
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = mr->umem->address;
		length = mr->length;
		iova = mr->iova;
	}
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	new = mroce_reg_user_mr(pd, start, length, iova, access, udata);
	if (IS_ERR(new)) {
		mroce_mw_mr_reopen(mr);
		return new;
	}
	new->iova = iova;
	new->length = length;
	return new;
}
