// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues.  An SRQ is a receive ring in the RQ's format
 * (metaroce-abi.h); a user SRQ's ring is mapped into the process, which
 * posts without system calls.  RC QPs attached to it take a receive WQE
 * when a message that needs one first arrives (spec 10.3.1), UD QPs when a
 * datagram arrives (ud.c); a WQE taken from the ring is copied out, so its
 * slot is free at once.
 *
 * The limit: modify_srq(IB_SRQ_LIMIT) arms it; when a WQE is taken and
 * fewer than limit WQEs are left, the SRQ disarms and raises
 * IB_EVENT_SRQ_LIMIT_REACHED.
 */
#include <linux/slab.h>
#include <rdma/uverbs_ioctl.h>

#include "verbs.h"

static int mroce_srq_check(struct mroce_dev *mdev,
			   const struct ib_srq_attr *attr)
{
	if (!attr->max_wr || attr->max_wr > mdev->attr.max_srq_wr ||
	    attr->max_sge > mdev->attr.max_srq_sge)
		return -EINVAL;
	return 0;
}

static int mroce_srq_map_ring(struct mroce_srq *srq, struct ib_udata *udata)
{
	struct metaroce_create_srq_resp resp = {};
	int err;

	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	err = mroce_ring_mmap_insert(udata, &srq->rq.ring, &srq->mmap,
				     &resp.ring);
	if (err)
		return err;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		mroce_ring_mmap_remove(&srq->rq.ring, &srq->mmap);
	return err;
}

/* The limit was reached (mroce_srq_take): tell the consumer. */
static void mroce_srq_event_work(struct work_struct *work)
{
	struct mroce_srq *srq = container_of(work, struct mroce_srq, event_work);
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/* Its own lock class: it nests inside a QP's RQ lock of the same type. */
static struct lock_class_key mroce_srq_lock_key;

int mroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibsrq->device);
	struct mroce_srq *srq = to_msrq(ibsrq);
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	err = mroce_srq_check(mdev, &init->attr);
	if (err)
		return err;
	if (!mroce_get_limit(&mdev->num_srq, mdev->attr.max_srq))
		return -ENOMEM;

	err = mroce_wq_init(&srq->rq, init->attr.max_wr, init->attr.max_sge,
			    0, false);
	if (err)
		goto err_limit;
	/*
	 * A receive is taken from the SRQ under the lock of the QP it is for
	 * (completions stay in order per QP): an SRQ's lock nests inside a
	 * QP's RQ lock, never the other way round.
	 */
	lockdep_set_class(&srq->rq.lock, &mroce_srq_lock_key);
	srq->limit = 0;
	srq->mmap = NULL;
	INIT_WORK(&srq->event_work, mroce_srq_event_work);
	err = mroce_qmem_charge(&srq->qmem, udata, mroce_wq_bytes(&srq->rq));
	if (err)
		goto err_wq;
	if (udata) {
		/* On success the mapping owns the ring's memory. */
		err = mroce_srq_map_ring(srq, udata);
		if (err)
			goto err_wq;
	}
	/* The limit of a new SRQ is not armed (ib_create_srq ignores it). */
	init->attr.max_wr = srq->rq.max_wr;
	init->attr.max_sge = srq->rq.max_sge;
	init->attr.srq_limit = 0;
	return 0;

err_wq:
	mroce_qmem_uncharge(&srq->qmem, SIZE_MAX);
	mroce_wq_free(&srq->rq);
err_limit:
	atomic_dec(&mdev->num_srq);
	return err;
}

int mroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct mroce_srq *srq = to_msrq(ibsrq);
	unsigned long flags;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	/* No IB_DEVICE_SRQ_RESIZE. */
	if (mask & IB_SRQ_MAX_WR)
		return -EINVAL;
	if ((mask & IB_SRQ_LIMIT) && attr->srq_limit > srq->rq.max_wr)
		return -EINVAL;
	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irqsave(&srq->rq.lock, flags);
		srq->limit = attr->srq_limit;	/* 0 disarms */
		spin_unlock_irqrestore(&srq->rq.lock, flags);
	}
	return 0;
}

int mroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct mroce_srq *srq = to_msrq(ibsrq);

	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int mroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct mroce_srq *srq = to_msrq(ibsrq);

	/* No QP uses it any more: the core counts them. */
	cancel_work_sync(&srq->event_work);
	mroce_ring_mmap_remove(&srq->rq.ring, &srq->mmap);
	mroce_wq_free(&srq->rq);
	mroce_qmem_uncharge(&srq->qmem, SIZE_MAX);
	atomic_dec(&to_mdev(ibsrq->device)->num_srq);
	return 0;
}

int mroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct mroce_srq *srq = to_msrq(ibsrq);

	/* A user SRQ's process writes its ring itself. */
	if (ibsrq->uobject) {
		*bad_wr = wr;
		return -EINVAL;
	}
	return mroce_wq_post_recv(&srq->rq, wr, bad_wr);
}

/*
 * Take the oldest posted WQE of the SRQ into *wqe.  Returns false if there
 * is none.  Any context.
 */
bool mroce_srq_take(struct mroce_srq *srq, struct mroce_recv_wqe *wqe)
{
	unsigned long flags;
	bool fire = false;

	spin_lock_irqsave(&srq->rq.lock, flags);
	if (!mroce_wq_peek_recv(&srq->rq, wqe)) {
		spin_unlock_irqrestore(&srq->rq.lock, flags);
		return false;
	}
	mroce_ring_consume(&srq->rq.ring);
	if (srq->limit &&
	    mroce_ring_produced(&srq->rq.ring, srq->rq.ring.cons) < srq->limit) {
		srq->limit = 0;
		fire = true;
	}
	spin_unlock_irqrestore(&srq->rq.lock, flags);

	if (fire)
		mroce_notify_queue(&srq->event_work);
	return true;
}
