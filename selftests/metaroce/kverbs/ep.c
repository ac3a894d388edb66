// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Endpoints: a PD, a send and a receive CQ polled directly, and one QP,
 * plus the remote keys registered on the PD.  Torn down in reverse order.
 */
#include <linux/bitops.h>
#include <linux/delay.h>
#include <linux/jiffies.h>

#include "kverbs.h"

void kv_ep_attr_default(struct kv_ep_attr *attr, enum ib_qp_type type)
{
	*attr = (struct kv_ep_attr) {
		.qp_type = type,
		.max_send_wr = 64,
		.max_recv_wr = 128,
		.max_send_sge = 4,
		.max_recv_sge = 4,
		.cqe = 512,
		.sig_type = IB_SIGNAL_REQ_WR,
	};
}

/* Asynchronous QP events, recorded for the tests that expect some. */
static void kv_qp_event(struct ib_event *ev, void *context)
{
	struct kv_ep *ep = context;

	if (ev->event < BITS_PER_LONG)
		set_bit(ev->event, &ep->events);
}

int kv_ep_create(struct kv_test *t, struct kv_ep *ep, struct kv_dev *dev,
		 struct kv_dev *peer, const struct kv_ep_attr *attr)
{
	struct ib_qp_init_attr init = {};
	struct ib_qp *qp;
	struct ib_cq *cq;
	struct ib_pd *pd;

	memset(ep, 0, sizeof(*ep));
	ep->dev = dev;
	ep->peer = peer;
	INIT_LIST_HEAD(&ep->rmrs);

	if (attr->pd) {
		ep->pd = attr->pd;
	} else {
		pd = ib_alloc_pd(dev->ibdev, 0);
		if (IS_ERR(pd))
			return kv_fail(t, "%s: ib_alloc_pd: %pe", dev->name,
				       pd);
		ep->pd = pd;
		ep->own_pd = true;
	}
	cq = ib_alloc_cq(dev->ibdev, ep, attr->cqe, 0, IB_POLL_DIRECT);
	if (IS_ERR(cq))
		return kv_fail(t, "%s: ib_alloc_cq: %pe", dev->name, cq);
	ep->scq = cq;
	cq = ib_alloc_cq(dev->ibdev, ep, attr->cqe, 0, IB_POLL_DIRECT);
	if (IS_ERR(cq))
		return kv_fail(t, "%s: ib_alloc_cq: %pe", dev->name, cq);
	ep->rcq = cq;

	init.event_handler = kv_qp_event;
	init.qp_context = ep;
	init.send_cq = ep->scq;
	init.recv_cq = ep->rcq;
	init.sq_sig_type = attr->sig_type;
	init.qp_type = attr->qp_type;
	init.cap.max_send_wr = attr->max_send_wr;
	init.cap.max_recv_wr = attr->max_recv_wr;
	init.cap.max_send_sge = attr->max_send_sge;
	init.cap.max_recv_sge = attr->max_recv_sge;
	init.srq = attr->srq;
	qp = ib_create_qp(ep->pd, &init);
	if (IS_ERR(qp))
		return kv_fail(t, "%s: ib_create_qp: %pe", dev->name, qp);
	ep->qp = qp;
	/* With an SRQ the receive capabilities do not apply. */
	if (init.cap.max_send_wr < attr->max_send_wr ||
	    (!attr->srq && init.cap.max_recv_wr < attr->max_recv_wr) ||
	    init.cap.max_send_sge < attr->max_send_sge ||
	    (!attr->srq && init.cap.max_recv_sge < attr->max_recv_sge))
		return kv_fail(t,
			       "%s: ib_create_qp returned caps %u/%u/%u/%u below the %u/%u/%u/%u asked",
			       dev->name, init.cap.max_send_wr,
			       init.cap.max_recv_wr, init.cap.max_send_sge,
			       init.cap.max_recv_sge, attr->max_send_wr,
			       attr->max_recv_wr, attr->max_send_sge,
			       attr->max_recv_sge);
	return 0;
}

/* Safe on a zeroed or partly created endpoint. */
void kv_ep_destroy(struct kv_ep *ep)
{
	struct kv_rmr *r, *tmp;

	if (ep->qp)
		ib_destroy_qp(ep->qp);
	ep->qp = NULL;
	if (ep->rmrs.next) {
		list_for_each_entry_safe(r, tmp, &ep->rmrs, node)
			kv_rmr_dereg(r);
	}
	if (ep->scq)
		ib_free_cq(ep->scq);
	ep->scq = NULL;
	if (ep->rcq)
		ib_free_cq(ep->rcq);
	ep->rcq = NULL;
	if (ep->pd && ep->own_pd)
		ib_dealloc_pd(ep->pd);
	ep->pd = NULL;
}

int kv_ep_state(struct kv_test *t, struct kv_ep *ep,
		enum ib_qp_state *state)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	int err;

	err = ib_query_qp(ep->qp, &attr, IB_QP_STATE, &init);
	if (err)
		return kv_fail(t, "%s: ib_query_qp: %pe", ep->dev->name,
			       ERR_PTR(err));
	*state = attr.qp_state;
	return 0;
}

/* Wait up to ms for the QP to reach a state (errors move it on their own). */
int kv_ep_wait_state(struct kv_test *t, struct kv_ep *ep,
		     enum ib_qp_state want, unsigned int ms, const char *what)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	enum ib_qp_state state;
	int err;

	for (;;) {
		err = kv_ep_state(t, ep, &state);
		if (err)
			return err;
		if (state == want)
			return 0;
		if (time_after_eq(jiffies, end))
			break;
		usleep_range(1000, 2000);
	}
	return kv_fail(t, "%s: QP state %s, expected %s", what,
		       kv_state_name(state), kv_state_name(want));
}

/* Wait up to ms for an asynchronous event on the QP. */
int kv_ep_wait_event(struct kv_test *t, struct kv_ep *ep,
		     enum ib_event_type event, unsigned int ms,
		     const char *what)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	while (!test_bit(event, &ep->events)) {
		if (time_after_eq(jiffies, end))
			return kv_fail(t, "%s: no %s event (got 0x%lx)", what,
				       ib_event_msg(event), ep->events);
		usleep_range(1000, 2000);
	}
	return 0;
}

/* Two RC endpoints, a on device a and b on device b, connected. */
int kv_rc_pair(struct kv_test *t, struct kv_ep *a, struct kv_ep *b,
	       const struct kv_ep_attr *attr, const struct kv_rc_attr *rca,
	       const struct kv_rc_attr *rcb)
{
	struct kv_dev *dev = t->ctx->dev;
	int err;

	err = kv_ep_create(t, a, &dev[0], &dev[1], attr);
	if (err)
		return err;
	err = kv_ep_create(t, b, &dev[1], &dev[0], attr);
	if (err)
		return err;
	return kv_rc_connect(t, a, b, rca, rcb);
}

/* kv_rc_pair with the default attributes (kv_*_attr_default) for both. */
int kv_rc_pair_default(struct kv_test *t, struct kv_ep *a, struct kv_ep *b)
{
	struct kv_ep_attr attr;
	struct kv_rc_attr rc;

	kv_ep_attr_default(&attr, IB_QPT_RC);
	kv_rc_attr_default(&rc);
	return kv_rc_pair(t, a, b, &attr, &rc, &rc);
}
