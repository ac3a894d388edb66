// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * frmr_inv: remote invalidation (spec 10.3.4).  b fast-registers memory, a
 * WRITEs through the key, then sends a SEND_WITH_INV naming it.  b's
 * receive completes with IB_WC_WITH_INVALIDATE and the key in
 * ex.invalidate_rkey, and the bytes are checked.  A WRITE through the key
 * afterwards fails at a with IB_WC_REM_ACCESS_ERR and leaves the memory as
 * it was; b's QP goes to the error state with IB_EVENT_QP_ACCESS_ERR.
 */
#include <linux/mm.h>

#include "kverbs.h"

#define KV_FI_ACCESS		(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE)
#define KV_FI_WOFF		50
#define KV_FI_WLEN		200
#define KV_FI_SLEN		128
#define KV_FI_RLEN		256
#define KV_FI_SEED_W		510
#define KV_FI_SEED_S		511
#define KV_FI_STATE_MS		2000

struct kv_fi {
	struct kv_test *t;
	struct kv_fr_base fr;		/* rb: SEND_WITH_INV's receive */
	struct ib_mr *mr;
};

static int kv_fi_check_recv(struct kv_fi *s, const struct ib_wc *wc, u32 key)
{
	struct kv_test *t = s->t;

	if (!(wc->wc_flags & IB_WC_WITH_INVALIDATE) ||
	    (wc->wc_flags & IB_WC_WITH_IMM))
		return kv_fail(t, "receive wc_flags 0x%x, expected IB_WC_WITH_INVALIDATE alone",
			       wc->wc_flags);
	if (wc->ex.invalidate_rkey != key)
		return kv_fail(t, "receive invalidate_rkey 0x%x, expected 0x%x",
			       wc->ex.invalidate_rkey, key);
	if (wc->byte_len != KV_FI_SLEN)
		return kv_fail(t, "receive byte_len %u, expected %u",
			       wc->byte_len, KV_FI_SLEN);
	kv_buf_for_cpu(&s->fr.rb);
	if (kv_check_pattern(t, s->fr.rb.va, KV_FI_SLEN, KV_FI_SEED_S, 0,
			     "SEND_WITH_INV data"))
		return t->err;
	return kv_check_canary(t, s->fr.rb.va + KV_FI_SLEN,
			       KV_FI_RLEN - KV_FI_SLEN,
			       "receive buffer past the SEND_WITH_INV");
}

static int kv_fi_run(struct kv_fi *s)
{
	struct kv_test *t = s->t;
	struct ib_send_wr send = {};
	struct ib_rdma_wr rdma;
	struct ib_sge sge;
	struct ib_wc wc;
	u32 key;
	int err;

	err = kv_fr_map_reg(t, &s->fr.b, s->mr, &s->fr.m, 0, KV_FI_ACCESS);
	if (err)
		return err;
	key = s->mr->rkey;

	kv_fill(s->fr.sb.va, KV_FI_WLEN, KV_FI_SEED_W, 0);
	kv_buf_for_dev(&s->fr.sb);
	kv_rdma_wr(&rdma, &sge, &s->fr.a, &s->fr.sb, 0, KV_FI_WLEN,
		   IB_WR_RDMA_WRITE, s->mr->iova + KV_FI_WOFF, key, 1);
	err = kv_send_wait(t, &s->fr.a, &rdma.wr, IB_WC_RDMA_WRITE,
			   "WRITE before the invalidation");
	if (!err)
		err = kv_pages_check(t, &s->fr.m, KV_FI_WOFF, KV_FI_WLEN,
				     KV_FI_SEED_W, "pages after the WRITE");
	if (err)
		return err;

	err = kv_post_recv_buf(t, &s->fr.b, 2, &s->fr.rb, 0, KV_FI_RLEN);
	if (err)
		return err;
	kv_fill(s->fr.sb.va, KV_FI_SLEN, KV_FI_SEED_S, 0);
	kv_buf_for_dev(&s->fr.sb);
	sge = kv_sge(&s->fr.a, &s->fr.sb, 0, KV_FI_SLEN);
	send.wr_id = 3;
	send.opcode = IB_WR_SEND_WITH_INV;
	send.sg_list = &sge;
	send.num_sge = 1;
	send.ex.invalidate_rkey = key;
	err = kv_send_wait(t, &s->fr.a, &send, IB_WC_SEND, "SEND_WITH_INV");
	if (!err)
		err = kv_expect(t, s->fr.b.rcq, &wc, 2, IB_WC_SUCCESS,
				IB_WC_RECV, "receive of the SEND_WITH_INV");
	if (!err)
		err = kv_fi_check_recv(s, &wc, key);
	if (!err)
		err = kv_write_denied(t, &s->fr.a, &s->fr.sb, KV_FI_WLEN,
				      s->mr->iova + KV_FI_WOFF, key,
				      "WRITE through the invalidated key");
	if (!err)
		err = kv_pages_check(t, &s->fr.m, KV_FI_WOFF, KV_FI_WLEN,
				     KV_FI_SEED_W,
				     "pages after the WRITE through the invalidated key");
	if (!err)
		err = kv_ep_wait_state(t, &s->fr.b, IB_QPS_ERR, KV_FI_STATE_MS,
				       "responder after the invalidated key");
	if (!err)
		err = kv_ep_wait_event(t, &s->fr.b, IB_EVENT_QP_ACCESS_ERR,
				       KV_FI_STATE_MS,
				       "responder after the invalidated key");
	return err;
}

int kv_test_frmr_inv(struct kv_test *t)
{
	struct kv_fi *s;
	int err;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->t = t;
	err = kv_fr_base_init(t, &s->fr, KV_FI_WLEN, false, KV_FI_RLEN);
	if (!err)
		err = kv_fr_alloc_mr(t, s->fr.b.pd, &s->mr);
	if (!err)
		err = kv_fi_run(s);

	if (s->mr)
		ib_dereg_mr(s->mr);
	kv_fr_base_fini(&s->fr);
	kfree(s);
	return err;
}
