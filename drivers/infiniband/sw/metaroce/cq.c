// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues (kernel consumers).  Completions are queued in a ring of
 * ib_wc; a full ring is an overflow, reported as IB_EVENT_CQ_ERR.
 */
#include <linux/slab.h>
#include <rdma/uverbs_ioctl.h>

#include "verbs.h"

int mroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct uverbs_attr_bundle *attrs)
{
	struct mroce_dev *mdev = to_mdev(ibcq->device);
	struct mroce_cq *cq = to_mcq(ibcq);
	struct ib_udata *udata = attrs ? &attrs->driver_udata : NULL;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > mdev->attr.max_cqe)
		return -EINVAL;
	if (attr->comp_vector >= mdev->ibdev.num_comp_vectors)
		return -EINVAL;
	/* User CQs are mmapped rings, which come with the userspace fast path. */
	if (udata)
		return -EOPNOTSUPP;
	if (!mroce_get_limit(&mdev->num_cq, mdev->attr.max_cq))
		return -ENOMEM;

	cq->ring = kvcalloc(attr->cqe, sizeof(*cq->ring), GFP_KERNEL);
	if (!cq->ring) {
		atomic_dec(&mdev->num_cq);
		return -ENOMEM;
	}
	spin_lock_init(&cq->lock);
	cq->size = attr->cqe;
	ibcq->cqe = attr->cqe;
	return 0;
}

int mroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct mroce_cq *cq = to_mcq(ibcq);

	kvfree(cq->ring);
	atomic_dec(&to_mdev(ibcq->device)->num_cq);
	return 0;
}

/*
 * Queue one completion.  Calls the completion handler if the CQ was armed for
 * it.  Returns -ENOSPC (and raises IB_EVENT_CQ_ERR once) if the CQ is full.
 */
int mroce_cq_complete(struct mroce_cq *cq, const struct ib_wc *wc,
		      bool solicited)
{
	struct ib_event ev = {};
	unsigned long flags;
	bool notify = false;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->count == cq->size) {
		bool first = !cq->overflow;

		cq->overflow = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (first && cq->ibcq.event_handler) {
			ev.device = cq->ibcq.device;
			ev.element.cq = &cq->ibcq;
			ev.event = IB_EVENT_CQ_ERR;
			cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
		}
		return -ENOSPC;
	}
	cq->ring[(cq->head + cq->count) % cq->size] = *wc;
	cq->count++;
	if (cq->armed == IB_CQ_NEXT_COMP ||
	    (cq->armed == IB_CQ_SOLICITED && solicited)) {
		cq->armed = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (notify && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return 0;
}

int mroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct mroce_cq *cq = to_mcq(ibcq);
	unsigned long flags;
	int n;

	spin_lock_irqsave(&cq->lock, flags);
	for (n = 0; n < num_entries && cq->count; n++) {
		wc[n] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->size;
		cq->count--;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

int mroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	enum ib_cq_notify_flags arm = flags & IB_CQ_SOLICITED_MASK;
	struct mroce_cq *cq = to_mcq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* An arm for every completion is not narrowed by a solicited one. */
	if (cq->armed != IB_CQ_NEXT_COMP)
		cq->armed = arm;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->count)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
