// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srq_err: the error paths of shared receive queues.
 *  - ib_create_srq with 0 WRs, or more WRs or SGEs than the device has:
 *    -EINVAL.  ib_modify_srq: a limit above max_wr, or a resize: -EINVAL.
 *    Posting to a full SRQ: -ENOMEM at the first WR that does not fit;
 *    more SGEs than max_sge: -EINVAL.  The GSI QP on an SRQ: -EOPNOTSUPP
 *    (UD QPs may use one: ud_srq).
 *    ib_post_recv on a QP of an SRQ: -EINVAL.  Destroying an SRQ that a
 *    QP uses: -EBUSY.
 *  - A SEND longer than the WQE it takes: that WQE completes with
 *    IB_WC_LOC_LEN_ERR on the QP's CQ, the requester gets
 *    IB_WC_REM_INV_REQ_ERR, the QP goes to the error state with
 *    IB_EVENT_QP_REQ_ERR and IB_EVENT_QP_LAST_WQE_REACHED.  The other QP
 *    of the SRQ takes the next WQE and receives its message intact.
 *  - That QP moved to the error state: IB_EVENT_QP_LAST_WQE_REACHED, and
 *    no receive of the SRQ is flushed to it.
 */
#include "kverbs.h"

#define KV_SE_STATE_MS		2000
#define KV_SE_SHORT		64
#define KV_SE_LEN		200
#define KV_SE_SLOT		256

struct kv_se {
	struct kv_test *t;
	struct kv_ep a[2], b[2];
	struct ib_pd *pd;
	struct ib_srq *srq;
	struct kv_buf rb, sb;
};

static struct ib_srq *kv_se_srq(struct ib_pd *pd, u32 wr, u32 sge)
{
	struct ib_srq_init_attr init = {
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = wr, .max_sge = sge },
	};

	return ib_create_srq(pd, &init);
}

/* Creation, modification and posting limits, on an unused SRQ. */
static int kv_se_limits(struct kv_se *s)
{
	struct ib_device_attr *da = &s->pd->device->attrs;
	struct ib_recv_wr wr[5] = {};
	const struct ib_recv_wr *bad;
	struct ib_srq_attr attr = {};
	struct kv_test *t = s->t;
	struct ib_sge sge[2];
	struct ib_srq *srq;
	int i, err;
	const struct {
		u32 wr, sge;
	} bad_sizes[] = {
		{ 0, 1 }, { da->max_srq_wr + 1, 1 }, { 4, da->max_srq_sge + 1 },
		{ U32_MAX, 1 }, { 4, U32_MAX },
	};

	for (i = 0; i < ARRAY_SIZE(bad_sizes); i++) {
		srq = kv_se_srq(s->pd, bad_sizes[i].wr, bad_sizes[i].sge);
		if (PTR_ERR_OR_ZERO(srq) != -EINVAL) {
			if (!IS_ERR(srq))
				ib_destroy_srq(srq);
			return kv_fail(t,
				       "ib_create_srq(max_wr %u, max_sge %u): %pe, expected -EINVAL",
				       bad_sizes[i].wr, bad_sizes[i].sge, srq);
		}
	}

	srq = kv_se_srq(s->pd, 4, 1);
	if (IS_ERR(srq))
		return kv_fail(t, "ib_create_srq(4, 1): %pe", srq);
	err = ib_query_srq(srq, &attr);
	if (err || attr.max_wr != 4)
		err = kv_fail(t, "ib_query_srq: %pe, max_wr %u (4 asked, a power of two)",
			      ERR_PTR(err), attr.max_wr);
	attr.srq_limit = 5;
	if (!err && ib_modify_srq(srq, &attr, IB_SRQ_LIMIT) != -EINVAL)
		err = kv_fail(t, "ib_modify_srq(limit 5 > max_wr 4) did not fail with -EINVAL");
	attr.max_wr = 8;
	if (!err && ib_modify_srq(srq, &attr, IB_SRQ_MAX_WR) != -EINVAL)
		err = kv_fail(t, "ib_modify_srq(IB_SRQ_MAX_WR) did not fail with -EINVAL");

	sge[0] = kv_sge(&s->b[0], &s->rb, 0, KV_SE_SLOT);
	sge[1] = sge[0];
	for (i = 0; i < ARRAY_SIZE(wr); i++) {
		wr[i].wr_id = i;
		wr[i].sg_list = sge;
		wr[i].num_sge = 1;
		if (i)
			wr[i - 1].next = &wr[i];
	}
	wr[0].num_sge = 2;
	bad = NULL;
	if (!err && (ib_post_srq_recv(srq, wr, &bad) != -EINVAL ||
		     bad != &wr[0]))
		err = kv_fail(t,
			      "ib_post_srq_recv with 2 SGEs (max 1) did not fail with -EINVAL at that WR");
	wr[0].num_sge = 1;
	bad = NULL;
	if (!err && (ib_post_srq_recv(srq, wr, &bad) != -ENOMEM ||
		     bad != &wr[4]))
		err = kv_fail(t, "5 WRs on an SRQ of 4: not -ENOMEM at the fifth (bad_wr %ld)",
			      bad ? (long)(bad - wr) : -1L);
	ib_destroy_srq(srq);
	return err;
}

/* Refused uses of an SRQ that QPs are attached to. */
static int kv_se_refused(struct kv_se *s)
{
	struct ib_qp_init_attr init = {
		.send_cq = s->b[0].scq,
		.recv_cq = s->b[0].rcq,
		.srq = s->srq,
		.qp_type = IB_QPT_GSI,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	struct ib_recv_wr wr = { .wr_id = 1 };
	const struct ib_recv_wr *bad;
	struct kv_test *t = s->t;
	struct ib_qp *qp;
	int err;

	qp = ib_create_qp(s->pd, &init);
	if (PTR_ERR_OR_ZERO(qp) != -EOPNOTSUPP) {
		if (!IS_ERR(qp))
			ib_destroy_qp(qp);
		return kv_fail(t, "the GSI QP on an SRQ: %pe, expected -EOPNOTSUPP",
			       qp);
	}
	err = ib_post_recv(s->b[0].qp, &wr, &bad);
	if (err != -EINVAL)
		return kv_fail(t, "ib_post_recv on a QP of an SRQ: %pe, expected -EINVAL",
			       ERR_PTR(err));
	err = ib_destroy_srq_user(s->srq, NULL);
	if (err != -EBUSY)
		return kv_fail(t, "ib_destroy_srq of an SRQ in use: %pe, expected -EBUSY",
			       ERR_PTR(err));
	return 0;
}

static int kv_se_post(struct kv_se *s, u64 slot, u32 len)
{
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr = { .wr_id = slot, .num_sge = 1 };
	struct ib_sge sge = kv_sge(&s->b[0], &s->rb, slot * KV_SE_SLOT, len);
	int err;

	wr.sg_list = &sge;
	err = ib_post_srq_recv(s->srq, &wr, &bad);
	if (err)
		return kv_fail(s->t, "ib_post_srq_recv: %pe", ERR_PTR(err));
	return 0;
}

static int kv_se_send(struct kv_se *s, int i, u64 wr_id)
{
	struct ib_send_wr wr = { .wr_id = wr_id, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .num_sge = 1 };
	struct ib_sge sge = kv_sge(&s->a[i], &s->sb, 0, KV_SE_LEN);

	wr.sg_list = &sge;
	return kv_post_send(s->t, &s->a[i], &wr, "SEND");
}

static int kv_se_last_wqe(struct kv_se *s)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct kv_test *t = s->t;
	struct ib_wc wc;
	int err;

	kv_fill(s->sb.va, KV_SE_LEN, 700, 0);
	kv_buf_for_dev(&s->sb);
	err = kv_se_post(s, 0, KV_SE_SHORT);
	if (!err)
		err = kv_se_post(s, 1, KV_SE_SLOT);
	if (!err)
		err = kv_se_send(s, 0, 10);
	if (!err)
		err = kv_expect(t, s->a[0].scq, &wc, 10, IB_WC_REM_INV_REQ_ERR,
				-1, "SEND longer than the SRQ WQE");
	if (!err)
		err = kv_expect(t, s->b[0].rcq, &wc, 0, IB_WC_LOC_LEN_ERR, -1,
				"the too short SRQ WQE");
	if (!err)
		err = kv_ep_wait_state(t, &s->b[0], IB_QPS_ERR, KV_SE_STATE_MS,
				       "SRQ QP after the length error");
	if (!err)
		err = kv_ep_wait_event(t, &s->b[0], IB_EVENT_QP_REQ_ERR,
				       KV_SE_STATE_MS, "length error");
	if (!err)
		err = kv_ep_wait_event(t, &s->b[0], IB_EVENT_QP_LAST_WQE_REACHED,
				       KV_SE_STATE_MS, "SRQ QP in error");
	if (!err)
		err = kv_expect_none(t, s->b[0].rcq, 50,
				     "SRQ QP after its last WQE");
	if (!err) {
		kv_buf_for_cpu(&s->rb);
		err = kv_check_canary(t, s->rb.va, KV_SE_SLOT,
				      "the too short WQE's buffer");
	}
	if (err)
		return err;

	/* The SRQ still serves its other QP. */
	err = kv_se_send(s, 1, 11);
	if (!err)
		err = kv_expect(t, s->b[1].rcq, &wc, 1, IB_WC_SUCCESS,
				IB_WC_RECV, "the other QP of the SRQ");
	if (!err && wc.byte_len != KV_SE_LEN)
		err = kv_fail(t, "byte_len %u, expected %u", wc.byte_len,
			      KV_SE_LEN);
	if (!err) {
		kv_buf_for_cpu(&s->rb);
		err = kv_check_pattern(t, s->rb.va + KV_SE_SLOT, KV_SE_LEN, 700,
				       0, "the other QP's receive");
	}
	if (!err)
		err = kv_expect(t, s->a[1].scq, &wc, 11, IB_WC_SUCCESS,
				IB_WC_SEND, "SEND to the other QP");

	/* Moved to the error state: LAST_WQE_REACHED, no flushed receive. */
	if (!err)
		err = kv_se_post(s, 2, KV_SE_SLOT);
	if (!err)
		err = kv_modify(t, &s->b[1], &attr, IB_QP_STATE, "RTS->ERR");
	if (!err)
		err = kv_ep_wait_event(t, &s->b[1], IB_EVENT_QP_LAST_WQE_REACHED,
				       KV_SE_STATE_MS, "SRQ QP moved to ERR");
	if (!err)
		err = kv_expect_none(t, s->b[1].rcq, 100,
				     "SRQ QP moved to ERR (the SRQ's WQE stays)");
	return err;
}

int kv_test_srq_err(struct kv_test *t)
{
	struct kv_dev *dev = t->ctx->dev;
	struct kv_ep_attr aa, ba;
	struct kv_rc_attr rc;
	struct kv_se *s;
	int i, err;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->t = t;
	s->pd = ib_alloc_pd(dev[1].ibdev, 0);
	if (IS_ERR(s->pd)) {
		err = kv_fail(t, "ib_alloc_pd: %pe", s->pd);
		s->pd = NULL;
		goto out;
	}
	s->srq = kv_se_srq(s->pd, 8, 1);
	if (IS_ERR(s->srq)) {
		err = kv_fail(t, "ib_create_srq: %pe", s->srq);
		s->srq = NULL;
		goto out;
	}
	kv_ep_attr_default(&aa, IB_QPT_RC);
	ba = aa;
	ba.srq = s->srq;
	ba.pd = s->pd;
	kv_rc_attr_default(&rc);
	err = kv_buf_alloc(t, &s->rb, dev[1].ibdev, 4 * KV_SE_SLOT);
	if (!err)
		err = kv_buf_alloc(t, &s->sb, dev[0].ibdev, KV_SE_LEN);
	for (i = 0; i < 2 && !err; i++) {
		err = kv_ep_create(t, &s->a[i], &dev[0], &dev[1], &aa);
		if (!err)
			err = kv_ep_create(t, &s->b[i], &dev[1], &dev[0], &ba);
		if (!err)
			err = kv_rc_connect(t, &s->a[i], &s->b[i], &rc, &rc);
	}
	if (!err)
		err = kv_se_limits(s);
	if (!err)
		err = kv_se_refused(s);
	if (!err)
		err = kv_se_last_wqe(s);
out:
	for (i = 0; i < 2; i++) {
		kv_ep_destroy(&s->b[i]);
		kv_ep_destroy(&s->a[i]);
	}
	if (s->srq)
		ib_destroy_srq(s->srq);
	if (s->pd)
		ib_dealloc_pd(s->pd);
	kv_buf_free(&s->sb);
	kv_buf_free(&s->rb);
	kfree(s);
	return err;
}
