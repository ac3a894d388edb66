// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srq: two RC QPs on b receive from one shared receive queue, each
 * connected to its own QP on a.
 *  - SENDs from both take the SRQ's WQEs in posting order; every receive
 *    completes on its own QP's CQ with the right QP, length and bytes, and
 *    nothing of its slot past the message is written.
 *  - The limit: armed at 4, no event while 4 WQEs are left, one
 *    IB_EVENT_SRQ_LIMIT_REACHED when 3 are, then disarmed (query says 0);
 *    armed again at 2, the event comes only when 1 is left.
 *  - An empty SRQ is RNR: the SEND waits until a WQE is posted, then lands.
 *  - Both a-side QPs send four messages at once: each b QP completes its
 *    own peer's messages, in order, in distinct WQEs.
 */
#include "kverbs.h"

#define KV_SQ_WR		16
#define KV_SQ_SLOTS		32
#define KV_SQ_SLOT		256
#define KV_SQ_SEED		600
#define KV_SQ_BURST		4

struct kv_sq {
	struct kv_test *t;
	struct kv_ep a[2], b[2];
	struct ib_pd *pd;		/* on b: the SRQ's and b's QPs' */
	struct ib_srq *srq;
	struct kv_buf rb;		/* on b: KV_SQ_SLOTS receive slots */
	struct kv_buf sb[2];		/* on a[i] */
	atomic_t limit_events;
	u32 posted;			/* slots posted so far */
	DECLARE_BITMAP(used, KV_SQ_SLOTS);
};

static void kv_sq_event(struct ib_event *ev, void *ctx)
{
	struct kv_sq *s = ctx;

	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED)
		atomic_inc(&s->limit_events);
}

static u32 kv_sq_len(u32 msg)
{
	return 100 + msg * 9;	/* at most KV_SQ_SLOT */
}

/* Post n more slots to the SRQ, one WQE each. */
static int kv_sq_post(struct kv_sq *s, u32 n)
{
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr = {};
	struct ib_sge sge;
	int err;

	while (n--) {
		if (s->posted >= KV_SQ_SLOTS)
			return kv_fail(s->t, "out of receive slots");
		sge = kv_sge(&s->b[0], &s->rb, s->posted * KV_SQ_SLOT,
			     KV_SQ_SLOT);
		wr.wr_id = s->posted;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		err = ib_post_srq_recv(s->srq, &wr, &bad);
		if (err)
			return kv_fail(s->t, "ib_post_srq_recv: %pe",
				       ERR_PTR(err));
		s->posted++;
	}
	return 0;
}

/* a[i] sends message msg (not waiting for its completion). */
static int kv_sq_send(struct kv_sq *s, int i, u32 msg)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	u32 len = kv_sq_len(msg);

	kv_fill(s->sb[i].va + msg * KV_SQ_SLOT, len, KV_SQ_SEED + msg, 0);
	kv_buf_for_dev(&s->sb[i]);
	sge = kv_sge(&s->a[i], &s->sb[i], msg * KV_SQ_SLOT, len);
	wr.wr_id = msg;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return kv_post_send(s->t, &s->a[i], &wr, "SEND to the SRQ QP");
}

/*
 * The next receive on b[i] is message msg: right QP, source, length and
 * bytes, in a slot of its own.  *slot: the WQE it took.
 */
static int kv_sq_recv(struct kv_sq *s, int i, u32 msg, u32 *slot)
{
	struct kv_test *t = s->t;
	u32 len = kv_sq_len(msg);
	struct ib_wc wc;
	u8 *p;
	int err;

	err = kv_poll(t, s->b[i].rcq, &wc, "receive from the SRQ");
	if (err)
		return err;
	if (wc.status != IB_WC_SUCCESS || wc.opcode != IB_WC_RECV)
		return kv_fail(t, "receive of message %u: status %s opcode %d",
			       msg, ib_wc_status_msg(wc.status), wc.opcode);
	if (wc.qp != s->b[i].qp || wc.src_qp != s->a[i].qp->qp_num)
		return kv_fail(t, "receive of message %u: qp %u src_qp %u, expected %u %u",
			       msg, wc.qp->qp_num, wc.src_qp,
			       s->b[i].qp->qp_num, s->a[i].qp->qp_num);
	if (wc.byte_len != len)
		return kv_fail(t, "receive of message %u: byte_len %u, expected %u",
			       msg, wc.byte_len, len);
	if (wc.wr_id >= s->posted || test_and_set_bit(wc.wr_id, s->used))
		return kv_fail(t, "receive of message %u: wr_id %llu not a posted, unused slot",
			       msg, wc.wr_id);
	kv_buf_for_cpu(&s->rb);
	p = s->rb.va + wc.wr_id * KV_SQ_SLOT;
	err = kv_check_pattern(t, p, len, KV_SQ_SEED + msg, 0,
			       "SRQ receive data");
	if (!err)
		err = kv_check_canary(t, p + len, KV_SQ_SLOT - len,
				      "SRQ receive slot past the message");
	*slot = wc.wr_id;
	return err;
}

static int kv_sq_send_wait(struct kv_sq *s, int i, u32 msg, u32 *slot)
{
	struct ib_wc wc;
	int err;

	err = kv_sq_send(s, i, msg);
	if (!err)
		err = kv_sq_recv(s, i, msg, slot);
	if (!err)
		err = kv_expect(s->t, s->a[i].scq, &wc, msg, IB_WC_SUCCESS,
				IB_WC_SEND, "SEND to the SRQ QP");
	return err;
}

static int kv_sq_limit(struct kv_sq *s, u32 limit)
{
	struct ib_srq_attr attr = { .srq_limit = limit };
	int err;

	err = ib_modify_srq(s->srq, &attr, IB_SRQ_LIMIT);
	if (err)
		return kv_fail(s->t, "ib_modify_srq(limit %u): %pe", limit,
			       ERR_PTR(err));
	err = ib_query_srq(s->srq, &attr);
	if (err || attr.srq_limit != limit)
		return kv_fail(s->t, "ib_query_srq: %pe, limit %u, expected %u",
			       ERR_PTR(err), attr.srq_limit, limit);
	return 0;
}

/*
 * The event is asynchronous: it may come after the completion that made
 * it due, so wait a little for it (and for any extra one) before counting.
 */
static int kv_sq_events(struct kv_sq *s, int want, const char *what)
{
	unsigned long until = jiffies + msecs_to_jiffies(200);
	int n;

	while (atomic_read(&s->limit_events) < want &&
	       time_before(jiffies, until))
		usleep_range(5000, 10000);
	msleep(20);
	n = atomic_read(&s->limit_events);
	if (n != want)
		return kv_fail(s->t, "%s: %d SRQ_LIMIT_REACHED events, expected %d",
			       what, n, want);
	return 0;
}

/* Messages 0..8: order, the limit events and RNR on an empty SRQ. */
static int kv_sq_serial(struct kv_sq *s)
{
	struct ib_srq_attr attr;
	struct ib_wc wc;
	u32 msg, slot;
	int err;

	err = kv_sq_post(s, 8);
	if (!err)
		err = kv_sq_limit(s, 4);
	for (msg = 0; msg < 7 && !err; msg++) {
		err = kv_sq_send_wait(s, msg & 1, msg, &slot);
		if (!err && slot != msg)
			err = kv_fail(s->t, "message %u took WQE %u: not in posting order",
				      msg, slot);
		if (err)
			break;
		/* 8 - (msg + 1) WQEs are left. */
		if (msg == 3)
			err = kv_sq_events(s, 0, "4 WQEs left, limit 4");
		if (msg == 4) {
			err = kv_sq_events(s, 1, "3 WQEs left, limit 4");
			if (!err && (ib_query_srq(s->srq, &attr) ||
				     attr.srq_limit))
				err = kv_fail(s->t,
					      "limit %u after the event, expected 0 (disarmed)",
					      attr.srq_limit);
			if (!err)
				err = kv_sq_limit(s, 2);
		}
		if (msg == 5)
			err = kv_sq_events(s, 1, "2 WQEs left, limit 2");
		if (msg == 6)
			err = kv_sq_events(s, 2, "1 WQE left, limit 2");
	}
	if (!err)
		err = kv_sq_send_wait(s, 1, 7, &slot);
	if (err)
		return err;

	/* Empty: message 8 waits (RNR) until a WQE is posted. */
	err = kv_sq_send(s, 0, 8);
	if (!err)
		err = kv_expect_none(s->t, s->b[0].rcq, 300,
				     "SEND to an empty SRQ");
	if (!err)
		err = kv_sq_post(s, 1);
	if (!err)
		err = kv_sq_recv(s, 0, 8, &slot);
	if (!err)
		err = kv_expect(s->t, s->a[0].scq, &wc, 8, IB_WC_SUCCESS,
				IB_WC_SEND, "SEND after RNR on the SRQ");
	return err;
}

/* Both peers send KV_SQ_BURST messages at once. */
static int kv_sq_burst(struct kv_sq *s)
{
	u32 base = 9, msg, slot;
	struct ib_wc wc;
	int i, err;

	err = kv_sq_post(s, 2 * KV_SQ_BURST);
	for (msg = 0; msg < KV_SQ_BURST && !err; msg++)
		for (i = 0; i < 2 && !err; i++)
			err = kv_sq_send(s, i, base + 2 * msg + i);
	for (msg = 0; msg < KV_SQ_BURST && !err; msg++)
		for (i = 0; i < 2 && !err; i++)
			err = kv_sq_recv(s, i, base + 2 * msg + i, &slot);
	for (msg = 0; msg < KV_SQ_BURST && !err; msg++)
		for (i = 0; i < 2 && !err; i++)
			err = kv_expect(s->t, s->a[i].scq, &wc,
					base + 2 * msg + i, IB_WC_SUCCESS,
					IB_WC_SEND, "burst SEND");
	return err;
}

static int kv_sq_setup(struct kv_sq *s)
{
	struct ib_srq_init_attr init = {
		.event_handler = kv_sq_event,
		.srq_context = s,
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = KV_SQ_WR, .max_sge = 1 },
	};
	struct kv_dev *dev = s->t->ctx->dev;
	struct kv_ep_attr aa, ba;
	struct kv_rc_attr rc;
	int i, err;

	s->pd = ib_alloc_pd(dev[1].ibdev, 0);
	if (IS_ERR(s->pd)) {
		err = kv_fail(s->t, "ib_alloc_pd: %pe", s->pd);
		s->pd = NULL;
		return err;
	}
	s->srq = ib_create_srq(s->pd, &init);
	if (IS_ERR(s->srq)) {
		err = kv_fail(s->t, "ib_create_srq: %pe", s->srq);
		s->srq = NULL;
		return err;
	}
	if (init.attr.max_wr < KV_SQ_WR || init.attr.max_sge < 1 ||
	    init.attr.srq_limit)
		return kv_fail(s->t, "ib_create_srq returned max_wr %u max_sge %u limit %u",
			       init.attr.max_wr, init.attr.max_sge,
			       init.attr.srq_limit);
	kv_ep_attr_default(&aa, IB_QPT_RC);
	ba = aa;
	ba.srq = s->srq;
	ba.pd = s->pd;
	kv_rc_attr_default(&rc);
	for (i = 0; i < 2; i++) {
		err = kv_ep_create(s->t, &s->a[i], &dev[0], &dev[1], &aa);
		if (!err)
			err = kv_ep_create(s->t, &s->b[i], &dev[1], &dev[0], &ba);
		if (!err)
			err = kv_rc_connect(s->t, &s->a[i], &s->b[i], &rc, &rc);
		if (!err)
			err = kv_buf_alloc(s->t, &s->sb[i], dev[0].ibdev,
					   KV_SQ_SLOTS * KV_SQ_SLOT);
		if (err)
			return err;
	}
	return kv_buf_alloc(s->t, &s->rb, dev[1].ibdev,
			    KV_SQ_SLOTS * KV_SQ_SLOT);
}

int kv_test_srq(struct kv_test *t)
{
	struct kv_sq *s;
	int i, err;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->t = t;
	err = kv_sq_setup(s);
	if (!err)
		err = kv_sq_serial(s);
	if (!err)
		err = kv_sq_burst(s);

	for (i = 0; i < 2; i++) {
		kv_ep_destroy(&s->b[i]);
		kv_ep_destroy(&s->a[i]);
		kv_buf_free(&s->sb[i]);
	}
	if (s->srq)
		ib_destroy_srq(s->srq);
	if (s->pd)
		ib_dealloc_pd(s->pd);
	kv_buf_free(&s->rb);
	kfree(s);
	return err;
}
