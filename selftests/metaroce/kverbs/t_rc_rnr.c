// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_rnr: a SEND to a QP without a posted receive.  With rnr_retry 0 it
 * completes with IB_WC_RNR_RETRY_EXC_ERR and the requester QP goes to ERR.
 * With rnr_retry 7 (retry forever) it waits, and succeeds once a receive
 * is posted, with every byte delivered.  A WRITE_WITH_IMM without a
 * receive waits the same way.
 */
#include "kverbs.h"

#define KV_RN_WAIT_MS		300

static int kv_rn_send(struct kv_test *t, struct kv_ep *a, struct kv_buf *sb,
		      u32 len, u64 wr_id)
{
	struct ib_sge sge = kv_sge(a, sb, 0, len);
	struct ib_send_wr wr = {
		.wr_id = wr_id,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = 1,
	};

	return kv_post_send(t, a, &wr, "SEND without a receive");
}

/* rnr_retry 0: the first RNR NAK fails the SEND. */
static int kv_rn_exceeded(struct kv_test *t, struct kv_buf *sb)
{
	struct kv_rc_attr rca, rcb;
	struct kv_ep a = {}, b = {};
	struct kv_ep_attr attr;
	struct ib_wc wc;
	int err;

	kv_ep_attr_default(&attr, IB_QPT_RC);
	kv_rc_attr_default(&rca);
	kv_rc_attr_default(&rcb);
	rca.rnr_retry = 0;
	rcb.min_rnr_timer = IB_RNR_TIMER_000_01;
	err = kv_rc_pair(t, &a, &b, &attr, &rca, &rcb);
	if (!err)
		err = kv_rn_send(t, &a, sb, min_t(u32, sb->len, 64), 0x71);
	if (!err)
		err = kv_expect(t, a.scq, &wc, 0x71, IB_WC_RNR_RETRY_EXC_ERR, -1,
				"SEND with rnr_retry 0 and no receive");
	if (!err)
		err = kv_ep_wait_state(t, &a, IB_QPS_ERR, 1000,
				       "requester after RNR_RETRY_EXC_ERR");
	if (!err)
		err = kv_expect_none(t, b.rcq, 20, "responder without receives");
	kv_ep_destroy(&b);
	kv_ep_destroy(&a);
	return err;
}

/*
 * A pair whose requester retries RNR forever (rnr_retry 7), sb filled with
 * pattern seed, and rb of len bytes on the responder.
 */
static int kv_rn_forever_pair(struct kv_test *t, struct kv_ep *a,
			      struct kv_ep *b, struct kv_buf *sb,
			      struct kv_buf *rb, u32 len, u32 seed)
{
	struct kv_rc_attr rca, rcb;
	struct kv_ep_attr attr;
	int err;

	kv_ep_attr_default(&attr, IB_QPT_RC);
	kv_rc_attr_default(&rca);
	kv_rc_attr_default(&rcb);
	rca.rnr_retry = 7;
	rcb.min_rnr_timer = IB_RNR_TIMER_001_28;
	kv_fill(sb->va, len, seed, 0);
	kv_buf_for_dev(sb);
	err = kv_rc_pair(t, a, b, &attr, &rca, &rcb);
	if (!err)
		err = kv_buf_alloc(t, rb, b->dev->ibdev, len);
	return err;
}

/* rnr_retry 7: the SEND waits until a receive is posted. */
static int kv_rn_waits(struct kv_test *t, struct kv_buf *sb, u32 len)
{
	struct kv_ep a = {}, b = {};
	struct kv_buf rb = {};
	struct ib_wc wc;
	int err;

	err = kv_rn_forever_pair(t, &a, &b, sb, &rb, len, 500);
	if (!err)
		err = kv_rn_send(t, &a, sb, len, 0x72);
	if (!err)
		err = kv_expect_none(t, a.scq, KV_RN_WAIT_MS,
				     "SEND with rnr_retry 7 before any receive");
	if (!err)
		err = kv_post_recv_buf(t, &b, 0x73, &rb, 0, len);
	if (!err)
		err = kv_expect(t, a.scq, &wc, 0x72, IB_WC_SUCCESS, IB_WC_SEND,
				"SEND once the receive is posted");
	if (!err)
		err = kv_expect(t, b.rcq, &wc, 0x73, IB_WC_SUCCESS, IB_WC_RECV,
				"receive posted late");
	if (!err && wc.byte_len != len)
		err = kv_fail(t, "receive posted late: byte_len %u, expected %u",
			      wc.byte_len, len);
	if (!err) {
		kv_buf_for_cpu(&rb);
		err = kv_check_pattern(t, rb.va, len, 500, 0,
				       "receive posted late");
	}
	kv_ep_destroy(&b);
	kv_ep_destroy(&a);
	kv_buf_free(&rb);
	return err;
}

/*
 * rnr_retry 7: a WRITE_WITH_IMM also needs a receive.  Its data may not
 * land and complete without one (MRC-PLC-036): it waits like a SEND, and
 * the late receive then completes with the immediate and every byte.
 */
static int kv_rn_write_imm_waits(struct kv_test *t, struct kv_buf *sb,
				 u32 len)
{
	struct ib_rdma_wr wr = {};
	struct kv_ep a = {}, b = {};
	struct kv_buf rb = {};
	struct kv_rmr rmr;
	struct ib_sge sge;
	struct ib_wc wc;
	int err;

	err = kv_rn_forever_pair(t, &a, &b, sb, &rb, len, 501);
	if (!err)
		err = kv_rmr_reg(t, &b, &rb, IB_ACCESS_LOCAL_WRITE |
				 IB_ACCESS_REMOTE_WRITE, &rmr);
	if (!err) {
		sge = kv_sge(&a, sb, 0, len);
		wr.wr.wr_id = 0x74;
		wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
		wr.wr.send_flags = IB_SEND_SIGNALED;
		wr.wr.ex.imm_data = cpu_to_be32(0x1e5a);
		wr.wr.sg_list = &sge;
		wr.wr.num_sge = 1;
		wr.remote_addr = rmr.addr;
		wr.rkey = rmr.rkey;
		err = kv_post_send(t, &a, &wr.wr, "WRITE_WITH_IMM without a receive");
	}
	if (!err)
		err = kv_expect_none(t, b.rcq, KV_RN_WAIT_MS,
				     "WRITE_WITH_IMM before any receive");
	if (!err)
		err = kv_post_recv_buf(t, &b, 0x75, NULL, 0, 0);
	if (!err)
		err = kv_expect(t, a.scq, &wc, 0x74, IB_WC_SUCCESS,
				IB_WC_RDMA_WRITE,
				"WRITE_WITH_IMM once the receive is posted");
	if (!err)
		err = kv_expect(t, b.rcq, &wc, 0x75, IB_WC_SUCCESS,
				IB_WC_RECV_RDMA_WITH_IMM,
				"receive posted late for WRITE_WITH_IMM");
	if (!err && (wc.byte_len != len || !(wc.wc_flags & IB_WC_WITH_IMM) ||
		     be32_to_cpu(wc.ex.imm_data) != 0x1e5a))
		err = kv_fail(t, "late WRITE_WITH_IMM receive: byte_len %u flags 0x%x imm 0x%x",
			      wc.byte_len, wc.wc_flags,
			      be32_to_cpu(wc.ex.imm_data));
	if (!err) {
		kv_buf_for_cpu(&rb);
		err = kv_check_pattern(t, rb.va, len, 501, 0,
				       "WRITE_WITH_IMM posted late");
	}
	kv_ep_destroy(&b);
	kv_ep_destroy(&a);
	kv_buf_free(&rb);
	return err;
}

int kv_test_rc_rnr(struct kv_test *t)
{
	u32 len = t->ctx->size;
	struct kv_buf sb = {};
	int err;

	err = kv_buf_alloc(t, &sb, t->ctx->dev[0].ibdev, len);
	if (!err)
		err = kv_rn_exceeded(t, &sb);
	if (!err)
		err = kv_rn_waits(t, &sb, len);
	if (!err)
		err = kv_rn_write_imm_waits(t, &sb, len);
	kv_buf_free(&sb);
	return err;
}
