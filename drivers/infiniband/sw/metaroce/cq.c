// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues.  A kernel CQ queues completions in an array of ib_wc;
 * a user CQ in a ring of struct ib_uverbs_wc that the process maps and
 * polls without system calls (metaroce-abi.h), and arms through the ring's
 * flags word.  A full CQ is an overflow, reported as IB_EVENT_CQ_ERR.
 */
#include <linux/slab.h>
#include <rdma/uverbs_ioctl.h>

#include "verbs.h"

#define MROCE_CQ_F_ARMED (METAROCE_CQ_F_ARMED_NEXT | METAROCE_CQ_F_ARMED_SOLICITED)

static_assert(sizeof(struct metaroce_cqe) == METAROCE_CQE_SIZE);

static int mroce_check_cqe(struct mroce_dev *mdev, int cqe)
{
	return cqe < 1 || cqe > mdev->attr.max_cqe ? -EINVAL : 0;
}

static int mroce_create_user_cq(struct mroce_cq *cq, int cqe,
				struct ib_udata *udata)
{
	struct metaroce_create_cq_resp resp;
	int err;

	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	/* Charged first: a CQ beyond the context's limit allocates nothing. */
	err = mroce_qmem_charge(&cq->qmem, udata,
				mroce_ring_bytes(cqe, METAROCE_CQE_SIZE));
	if (err)
		return err;
	err = mroce_ring_init(&cq->uring, cqe, METAROCE_CQE_SIZE);
	if (err) {
		mroce_qmem_uncharge(&cq->qmem, SIZE_MAX);
		return err;
	}
	err = mroce_ring_mmap_insert(udata, &cq->uring, &cq->mmap, &resp.ring);
	if (err) {
		mroce_qmem_uncharge(&cq->qmem, SIZE_MAX);
		mroce_ring_free(&cq->uring);
		return err;
	}
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err) {
		mroce_qmem_uncharge(&cq->qmem, SIZE_MAX);
		mroce_ring_mmap_remove(&cq->uring, &cq->mmap);
		return err;
	}
	/* Every slot is usable: the indices are free-running. */
	cq->ibcq.cqe = mroce_ring_slots(&cq->uring);
	return 0;
}

enum { MROCE_CQ_NOTIFY_COMP, MROCE_CQ_NOTIFY_ERR };

/* The consumer's handlers, for what mroce_cq_complete() found. */
static void mroce_cq_notify_work(struct work_struct *work)
{
	struct mroce_cq *cq = container_of(work, struct mroce_cq, notify_work);
	unsigned long what = xchg(&cq->notify, 0);
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if ((what & BIT(MROCE_CQ_NOTIFY_ERR)) && cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	if ((what & BIT(MROCE_CQ_NOTIFY_COMP)) && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

int mroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct uverbs_attr_bundle *attrs)
{
	struct mroce_dev *mdev = to_mdev(ibcq->device);
	struct mroce_cq *cq = to_mcq(ibcq);
	struct ib_udata *udata = attrs ? &attrs->driver_udata : NULL;
	int err;

	/* Completion timestamps go into the CQEs of user CQs only. */
	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION ||
	    (attr->flags && !udata))
		return -EOPNOTSUPP;
	if (mroce_check_cqe(mdev, attr->cqe))
		return -EINVAL;
	if (attr->comp_vector >= mdev->ibdev.num_comp_vectors)
		return -EINVAL;
	if (!mroce_get_limit(&mdev->num_cq, mdev->attr.max_cq))
		return -ENOMEM;

	spin_lock_init(&cq->lock);
	INIT_WORK(&cq->notify_work, mroce_cq_notify_work);
	cq->timestamps = attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	if (udata) {
		err = mroce_create_user_cq(cq, attr->cqe, udata);
		if (err)
			goto err_limit;
		return 0;
	}

	cq->ring = kvcalloc(attr->cqe, sizeof(*cq->ring), GFP_KERNEL_ACCOUNT);
	if (!cq->ring) {
		err = -ENOMEM;
		goto err_limit;
	}
	cq->size = attr->cqe;
	ibcq->cqe = attr->cqe;
	return 0;

err_limit:
	atomic_dec(&mdev->num_cq);
	return err;
}

int mroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct mroce_cq *cq = to_mcq(ibcq);

	cancel_work_sync(&cq->notify_work);

	/* No QP uses the CQ any more: the core holds a reference per QP. */
	if (cq->mmap)
		mroce_ring_mmap_remove(&cq->uring, &cq->mmap);
	mroce_qmem_uncharge(&cq->qmem, SIZE_MAX);
	kvfree(cq->ring);
	atomic_dec(&to_mdev(ibcq->device)->num_cq);
	return 0;
}

/* Kernel flags to libibverbs' (enum ibv_wc_flags), as metaroce-abi.h says. */
static u32 mroce_uwc_flags(int flags)
{
	return (flags & IB_WC_GRH ? METAROCE_WC_GRH : 0) |
	       (flags & IB_WC_WITH_IMM ? METAROCE_WC_WITH_IMM : 0) |
	       (flags & IB_WC_WITH_INVALIDATE ? METAROCE_WC_WITH_INV : 0);
}

static void mroce_fill_uwc(struct ib_uverbs_wc *uwc, const struct ib_wc *wc)
{
	memset(uwc, 0, sizeof(*uwc));
	uwc->wr_id = wc->wr_id;
	uwc->status = wc->status;
	uwc->opcode = wc->opcode;
	uwc->vendor_err = wc->vendor_err;
	uwc->byte_len = wc->byte_len;
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE)
		uwc->ex.invalidate_rkey = wc->ex.invalidate_rkey;
	else
		uwc->ex.imm_data = wc->ex.imm_data;
	uwc->qp_num = wc->qp->qp_num;
	uwc->src_qp = wc->src_qp;
	uwc->wc_flags = mroce_uwc_flags(wc->wc_flags);
	uwc->pkey_index = wc->pkey_index;
	uwc->slid = wc->slid;
	uwc->sl = wc->sl;
	uwc->dlid_path_bits = wc->dlid_path_bits;
	uwc->port_num = wc->port_num;
}

/*
 * User CQ, under cq->lock: produce one completion into the ring and say
 * whether the process armed the CQ for it (disarming it if so).
 */
static int mroce_user_cq_complete(struct mroce_cq *cq, const struct ib_wc *wc,
				  bool solicited, bool *notify)
{
	struct mroce_ring *r = &cq->uring;
	u32 *flags = &r->hdr->flags;
	struct metaroce_cqe *cqe;
	u32 armed;

	lockdep_assert_held(&cq->lock);

	/* The consumer index is the process's: a bogus one reads as full. */
	if (mroce_ring_full(r))
		return -ENOSPC;
	cqe = mroce_ring_slot(r, r->prod);
	mroce_fill_uwc(&cqe->wc, wc);
	if (cq->timestamps) {
		cqe->completion_ts = ktime_get_ns();
		cqe->wallclock_ns = ktime_get_real_ns();
	} else {
		cqe->completion_ts = 0;
		cqe->wallclock_ns = 0;
	}
	mroce_ring_produce(r);
	/*
	 * Pairs with the poller's atomic OR of an arm bit before it polls:
	 * either we see the bit or it sees the completion.
	 */
	smp_mb();
	armed = READ_ONCE(*flags);
	if (armed & METAROCE_CQ_F_ARMED_NEXT ||
	    (armed & METAROCE_CQ_F_ARMED_SOLICITED && solicited))
		*notify = xchg(flags, 0) & MROCE_CQ_F_ARMED;
	return 0;
}

/*
 * Queue one completion.  Calls the completion handler if the CQ was armed for
 * it.  Returns -ENOSPC (and raises IB_EVENT_CQ_ERR once) if the CQ is full.
 */
int mroce_cq_complete(struct mroce_cq *cq, const struct ib_wc *wc,
		      bool solicited)
{
	unsigned long flags;
	bool notify = false;
	bool first;
	int err = 0;

	/* Unsuccessful completions count as solicited (ibv_req_notify_cq). */
	solicited |= wc->status != IB_WC_SUCCESS;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->mmap) {
		err = mroce_user_cq_complete(cq, wc, solicited, &notify);
	} else if (cq->count == cq->size) {
		err = -ENOSPC;
	} else {
		cq->ring[(cq->head + cq->count) % cq->size] = *wc;
		cq->count++;
		if (cq->armed == IB_CQ_NEXT_COMP ||
		    (cq->armed == IB_CQ_SOLICITED && solicited)) {
			cq->armed = 0;
			notify = true;
		}
	}
	first = err && !cq->overflow;
	if (err)
		cq->overflow = true;
	spin_unlock_irqrestore(&cq->lock, flags);

	if (first)
		set_bit(MROCE_CQ_NOTIFY_ERR, &cq->notify);
	if (notify)
		set_bit(MROCE_CQ_NOTIFY_COMP, &cq->notify);
	if (first || notify)
		mroce_notify_queue(&cq->notify_work);
	return err;
}

int mroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct mroce_cq *cq = to_mcq(ibcq);
	unsigned long flags;
	int n;

	/* A user CQ is polled by its process, in the ring. */
	if (cq->mmap)
		return 0;
	spin_lock_irqsave(&cq->lock, flags);
	for (n = 0; n < num_entries && cq->count; n++) {
		wc[n] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->size;
		cq->count--;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/* Set arm bits in a user CQ's flags word, which the process writes too. */
static void mroce_user_cq_arm(struct mroce_cq *cq, u32 bits)
{
	u32 *flags = &cq->uring.hdr->flags;
	u32 old = READ_ONCE(*flags);

	while (!try_cmpxchg(flags, &old, old | bits))
		;
}

int mroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	enum ib_cq_notify_flags arm = flags & IB_CQ_SOLICITED_MASK;
	struct mroce_cq *cq = to_mcq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->mmap) {
		/* The REQ_NOTIFY_CQ command: same bits as the provider's. */
		mroce_user_cq_arm(cq, arm == IB_CQ_SOLICITED ?
				  METAROCE_CQ_F_ARMED_SOLICITED :
				  METAROCE_CQ_F_ARMED_NEXT);
		spin_unlock_irqrestore(&cq->lock, irqflags);
		return 0;
	}
	/* An arm for every completion is not narrowed by a solicited one. */
	if (cq->armed != IB_CQ_NEXT_COMP)
		cq->armed = arm;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->count)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/*
 * Resize a user CQ: a new ring (and mapping) with the pending completions
 * moved over.  The provider does not poll while it waits for this.
 */
static int mroce_resize_user_cq(struct mroce_cq *cq, int cqe,
				struct ib_udata *udata)
{
	struct rdma_user_mmap_entry *entry = NULL;
	struct metaroce_resize_cq_resp resp;
	struct mroce_ring new, old;
	unsigned long flags;
	u32 i, n, cons;
	size_t bytes;
	int err;

	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	/* Both rings are charged until the old one goes; the new one first. */
	bytes = mroce_ring_bytes(cqe, METAROCE_CQE_SIZE);
	err = mroce_qmem_charge(&cq->qmem, udata, bytes);
	if (err)
		return err;
	err = mroce_ring_init(&new, cqe, METAROCE_CQE_SIZE);
	if (err) {
		mroce_qmem_uncharge(&cq->qmem, bytes);
		return err;
	}
	err = mroce_ring_mmap_insert(udata, &new, &entry, &resp.ring);
	if (err) {
		mroce_qmem_uncharge(&cq->qmem, new.size);
		mroce_ring_free(&new);
		return err;
	}
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_remove;

	spin_lock_irqsave(&cq->lock, flags);
	old = cq->uring;
	cons = READ_ONCE(old.hdr->consumer);
	n = old.prod - cons;
	if (n > mroce_ring_slots(&old)) {
		/* A bogus consumer index: keep the newest completions. */
		n = mroce_ring_slots(&old);
		cons = old.prod - n;
	}
	if (n > mroce_ring_slots(&new)) {
		spin_unlock_irqrestore(&cq->lock, flags);
		err = -EINVAL;
		goto err_remove;
	}
	for (i = 0; i < n; i++)
		memcpy(mroce_ring_slot(&new, i), mroce_ring_slot(&old, cons + i),
		       sizeof(struct metaroce_cqe));
	new.prod = n;
	WRITE_ONCE(new.hdr->producer, n);
	WRITE_ONCE(new.hdr->flags, READ_ONCE(old.hdr->flags) & MROCE_CQ_F_ARMED);
	cq->uring = new;
	swap(cq->mmap, entry);
	cq->ibcq.cqe = mroce_ring_slots(&new);
	spin_unlock_irqrestore(&cq->lock, flags);

	/* The old ring and its mapping. */
	mroce_qmem_uncharge(&cq->qmem, old.size);
	mroce_ring_mmap_remove(&old, &entry);
	return 0;

err_remove:
	mroce_qmem_uncharge(&cq->qmem, new.size);
	mroce_ring_mmap_remove(&new, &entry);
	return err;
}

int mroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct mroce_cq *cq = to_mcq(ibcq);
	struct ib_wc *ring, *old;
	unsigned long flags;
	u32 i;

	if (mroce_check_cqe(to_mdev(ibcq->device), cqe))
		return -EINVAL;
	if (cq->mmap)
		return mroce_resize_user_cq(cq, cqe, udata);

	ring = kvcalloc(cqe, sizeof(*ring), GFP_KERNEL_ACCOUNT);
	if (!ring)
		return -ENOMEM;
	spin_lock_irqsave(&cq->lock, flags);
	if (cq->count > cqe) {
		spin_unlock_irqrestore(&cq->lock, flags);
		kvfree(ring);
		return -EINVAL;
	}
	for (i = 0; i < cq->count; i++)
		ring[i] = cq->ring[(cq->head + i) % cq->size];
	old = cq->ring;
	cq->ring = ring;
	cq->head = 0;
	cq->size = cqe;
	ibcq->cqe = cqe;
	spin_unlock_irqrestore(&cq->lock, flags);
	kvfree(old);
	return 0;
}
