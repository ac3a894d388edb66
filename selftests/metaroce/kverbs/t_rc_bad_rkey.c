// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_bad_rkey: an RDMA_WRITE with a wrong rkey completes with
 * IB_WC_REM_ACCESS_ERR, the target is untouched (even by the valid WRITE
 * posted after it), the requester QP goes to ERR and its later WRs flush.
 * The responder QP goes to ERR too, with IB_EVENT_QP_ACCESS_ERR
 * (MetaRoCE spec MRC-ERR-004).
 */
#include "kverbs.h"

#define KV_RB_TARGET		4096
#define KV_RB_LEN		256
#define KV_RB_STATE_MS		2000

#define KV_RB_SEED_BAD		400
#define KV_RB_SEED_GOOD		401

/* A WRITE of KV_RB_LEN bytes at off in sb to the target, at KV_SGL_GAP. */
static void kv_rb_write(struct kv_ep *a, struct ib_rdma_wr *wr,
			struct ib_sge *sge, const struct kv_buf *sb, u32 off,
			u64 wr_id, const struct kv_rmr *r, u32 rkey)
{
	kv_rdma_wr(wr, sge, a, sb, off, KV_RB_LEN, IB_WR_RDMA_WRITE,
		   r->addr + KV_SGL_GAP, rkey, wr_id);
}

/* The target must be all canary; if not, say which WRITE was placed. */
static int kv_rb_check_target(struct kv_test *t, struct kv_buf *tb)
{
	struct kv_test probe = { .name = t->name };
	const u8 *p = tb->va + KV_SGL_GAP;

	kv_buf_for_cpu(tb);
	if (!kv_check_canary(&probe, tb->va, tb->len, "target"))
		return 0;
	if (!kv_check_pattern(&probe, p, KV_RB_LEN, KV_RB_SEED_BAD, 0, ""))
		return kv_fail(t,
			       "target holds the data of the WRITE with the bad rkey");
	if (!kv_check_pattern(&probe, p, KV_RB_LEN, KV_RB_SEED_GOOD, 0, ""))
		return kv_fail(t,
			       "target holds the data of the valid WRITE posted after the bad one");
	return kv_check_canary(t, tb->va, tb->len, "target of the bad WRITE");
}

static int kv_rb_run(struct kv_test *t, struct kv_ep *a, struct kv_ep *b,
		     struct kv_buf *sb, struct kv_buf *tb, struct kv_rmr *r)
{
	struct ib_rdma_wr bad, good;
	struct ib_sge bsge, gsge;
	struct ib_send_wr send = { .wr_id = 3, .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct ib_wc wc;
	int err;

	/* Different data in each WRITE tells which one was placed. */
	kv_fill(sb->va, KV_RB_LEN, KV_RB_SEED_BAD, 0);
	kv_fill(sb->va + KV_RB_LEN, KV_RB_LEN, KV_RB_SEED_GOOD, 0);
	kv_buf_for_dev(sb);
	kv_canary(tb->va, tb->len);
	kv_buf_for_dev(tb);

	/* Same MR index, other key byte: not a key of any MR. */
	kv_rb_write(a, &bad, &bsge, sb, 0, 1, r, r->rkey ^ 0xff);
	kv_rb_write(a, &good, &gsge, sb, KV_RB_LEN, 2, r, r->rkey);
	bad.wr.next = &good.wr;
	good.wr.next = &send;
	err = kv_post_send(t, a, &bad.wr, "WRITE with a bad rkey");
	if (!err)
		err = kv_expect(t, a->scq, &wc, 1, IB_WC_REM_ACCESS_ERR, -1,
				"WRITE with a bad rkey");
	if (!err)
		err = kv_expect(t, a->scq, &wc, 2, IB_WC_WR_FLUSH_ERR, -1,
				"WRITE posted after the bad one");
	if (!err)
		err = kv_expect(t, a->scq, &wc, 3, IB_WC_WR_FLUSH_ERR, -1,
				"SEND posted after the bad WRITE");
	if (err)
		return err;

	err = kv_rb_check_target(t, tb);
	if (!err)
		err = kv_ep_wait_state(t, a, IB_QPS_ERR, KV_RB_STATE_MS,
				       "requester after REM_ACCESS_ERR");
	if (err)
		return err;

	send.next = NULL;
	send.wr_id = 4;
	err = kv_post_send(t, a, &send, "SEND after the error");
	if (!err)
		err = kv_expect(t, a->scq, &wc, 4, IB_WC_WR_FLUSH_ERR, -1,
				"SEND after the error");
	if (!err)
		err = kv_expect_none(t, a->scq, 50, "after the flushes");
	if (!err)
		err = kv_ep_wait_state(t, b, IB_QPS_ERR, KV_RB_STATE_MS,
				       "responder after the bad rkey");
	if (!err)
		err = kv_ep_wait_event(t, b, IB_EVENT_QP_ACCESS_ERR,
				       KV_RB_STATE_MS,
				       "responder after the bad rkey");
	return err;
}

int kv_test_rc_bad_rkey(struct kv_test *t)
{
	struct kv_buf sb = {}, tb = {};
	struct kv_ep a = {}, b = {};
	struct kv_rmr r;
	int err;

	err = kv_rc_pair_default(t, &a, &b);
	if (!err)
		err = kv_buf_alloc(t, &sb, a.dev->ibdev, 2 * KV_RB_LEN);
	if (!err)
		err = kv_buf_alloc(t, &tb, b.dev->ibdev, KV_RB_TARGET);
	if (!err)
		err = kv_rmr_reg(t, &b, &tb, IB_ACCESS_REMOTE_WRITE, &r);
	if (!err)
		err = kv_rb_run(t, &a, &b, &sb, &tb, &r);
	kv_ep_destroy(&b);
	kv_ep_destroy(&a);
	kv_buf_free(&tb);
	kv_buf_free(&sb);
	return err;
}
