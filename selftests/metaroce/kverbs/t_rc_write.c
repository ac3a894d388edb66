// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_write: RDMA_WRITE and RDMA_WRITE_WITH_IMM a->b into a buffer on b with
 * a remote key: size bytes, a 3-SGE gather and 1 MiB, at unaligned remote
 * offsets.  Every target byte is checked, and the bytes around the written
 * range must still be the canary.  A plain WRITE consumes no receive;
 * WRITE_WITH_IMM completes a receive as IB_WC_RECV_RDMA_WITH_IMM.
 * Zero-length WRITEs succeed whatever their rkey and touch nothing.
 */
#include "kverbs.h"

#define KV_RW_IMM		0x77170000
#define KV_RW_TARGET		(KV_BIG + 4096)	/* size + 1005 bytes fit */

struct kv_rw {
	struct kv_test *t;
	struct kv_ep a, b;
	struct kv_buf target;		/* on b */
	struct kv_rmr rmr;
	u32 n;
};

static int kv_rw_check_target(struct kv_rw *s, u32 roff, u32 len, u32 seed,
			      const char *what)
{
	struct kv_test *t = s->t;
	u8 *p = s->target.va;
	int err;

	kv_buf_for_cpu(&s->target);
	err = kv_check_canary(t, p, roff, what);
	if (!err)
		err = kv_check_pattern(t, p + roff, len, seed, 0, what);
	if (!err)
		err = kv_check_canary(t, p + roff + len,
				      s->target.len - roff - len, what);
	return err;
}

/* The receive of a WRITE_WITH_IMM: no buffer is used. */
static int kv_rw_check_imm(struct kv_rw *s, const struct ib_wc *wc, u32 len,
			   const char *what)
{
	struct kv_test *t = s->t;

	if (wc->byte_len != len)
		return kv_fail(t, "%s: receive byte_len %u, expected %u", what,
			       wc->byte_len, len);
	if (!(wc->wc_flags & IB_WC_WITH_IMM) ||
	    be32_to_cpu(wc->ex.imm_data) != KV_RW_IMM + s->n)
		return kv_fail(t,
			       "%s: receive wc_flags 0x%x imm 0x%x, expected IB_WC_WITH_IMM 0x%x",
			       what, wc->wc_flags,
			       be32_to_cpu(wc->ex.imm_data), KV_RW_IMM + s->n);
	return 0;
}

/*
 * One WRITE gathered from pieces slen[] to target offset roff; with imm it
 * must complete the receive recv_id, which the caller posted.
 */
static int kv_rw_one(struct kv_rw *s, bool imm, const u32 *slen, int sn,
		     u32 roff, u64 recv_id, const char *what)
{
	struct ib_sge sge[KV_SGL_MAX];
	struct ib_rdma_wr wr = {};
	struct kv_test *t = s->t;
	u32 seed = 200 + s->n;
	struct kv_buf sb = {};
	struct kv_sgl ls;
	struct ib_wc wc;
	int err;

	kv_sgl_layout(&ls, slen, sn);
	err = kv_buf_alloc(t, &sb, s->a.dev->ibdev, ls.span);
	if (err)
		return err;
	kv_sgl_fill(&ls, sb.va, seed, 0);
	kv_buf_for_dev(&sb);
	kv_canary(s->target.va, s->target.len);
	kv_buf_for_dev(&s->target);

	kv_sgl_sges(&ls, &s->a, &sb, sge);
	wr.wr.wr_id = 0x4000 + s->n;
	wr.wr.opcode = imm ? IB_WR_RDMA_WRITE_WITH_IMM : IB_WR_RDMA_WRITE;
	wr.wr.ex.imm_data = cpu_to_be32(KV_RW_IMM + s->n);
	wr.wr.sg_list = sge;
	wr.wr.num_sge = sn;
	wr.remote_addr = s->rmr.addr + roff;
	wr.rkey = s->rmr.rkey;
	err = kv_send_wait(t, &s->a, &wr.wr, IB_WC_RDMA_WRITE, what);
	if (err)
		goto out;
	if (imm) {
		err = kv_expect(t, s->b.rcq, &wc, recv_id, IB_WC_SUCCESS,
				IB_WC_RECV_RDMA_WITH_IMM, what);
		if (!err)
			err = kv_rw_check_imm(s, &wc, ls.total, what);
	} else {
		err = kv_expect_none(t, s->b.rcq, 20, what);
	}
	if (!err)
		err = kv_rw_check_target(s, roff, ls.total, seed, what);
out:
	if (err) {
		kv_ep_destroy(&s->b);
		kv_ep_destroy(&s->a);
	}
	kv_buf_free(&sb);
	s->n++;
	return err;
}

/*
 * A zero-length WRITE (WITH_IMM if recv_id) with a key that was never
 * valid and address 0 succeeds and touches nothing (MRC-PLC-035).
 */
static int kv_rw_zero(struct kv_rw *s, u64 recv_id, const char *what)
{
	struct ib_rdma_wr wr = {};
	struct kv_test *t = s->t;
	struct ib_wc wc;
	int err;

	kv_canary(s->target.va, s->target.len);
	kv_buf_for_dev(&s->target);
	wr.wr.wr_id = 0x4000 + s->n;
	wr.wr.opcode = recv_id ? IB_WR_RDMA_WRITE_WITH_IMM : IB_WR_RDMA_WRITE;
	wr.wr.ex.imm_data = cpu_to_be32(KV_RW_IMM + s->n);
	wr.remote_addr = 0;
	wr.rkey = s->rmr.rkey ^ 0x5a5a5a00;
	err = kv_send_wait(t, &s->a, &wr.wr, IB_WC_RDMA_WRITE, what);
	if (!err && recv_id) {
		err = kv_expect(t, s->b.rcq, &wc, recv_id, IB_WC_SUCCESS,
				IB_WC_RECV_RDMA_WITH_IMM, what);
		if (!err)
			err = kv_rw_check_imm(s, &wc, 0, what);
	}
	s->n++;
	if (err)
		return err;
	kv_buf_for_cpu(&s->target);
	return kv_check_canary(t, s->target.va, s->target.len, what);
}

static int kv_rw_all(struct kv_rw *s, u32 size)
{
	const u32 one[] = { size }, big[] = { KV_BIG };
	const u32 three[] = { 5, size, 1000 };
	struct kv_test *t = s->t;
	int err;

	/*
	 * The receive for the first WRITE_WITH_IMM is posted before the plain
	 * WRITE, which must leave it alone.  No scatter entry: WRITE_WITH_IMM
	 * places its data at the remote address, not in the receive buffer.
	 */
	err = kv_post_recv_buf(t, &s->b, 0x3001, NULL, 0, 0);
	if (!err)
		err = kv_rw_one(s, false, one, 1, KV_SGL_GAP, 0,
				"RDMA_WRITE");
	if (!err)
		err = kv_rw_one(s, true, one, 1, KV_SGL_GAP + 7, 0x3001,
				"RDMA_WRITE_WITH_IMM");
	if (!err)
		err = kv_post_recv_buf(t, &s->b, 0x3002, NULL, 0, 0);
	if (!err)
		err = kv_rw_one(s, true, three, 3, 3, 0x3002,
				"RDMA_WRITE_WITH_IMM, 3 SGEs");
	if (!err)
		err = kv_rw_one(s, false, big, 1, KV_SGL_GAP - 1, 0,
				"1 MiB RDMA_WRITE");
	if (!err)
		err = kv_rw_zero(s, 0, "zero-length RDMA_WRITE, invalid rkey");
	if (!err)
		err = kv_post_recv_buf(t, &s->b, 0x3003, NULL, 0, 0);
	if (!err)
		err = kv_rw_zero(s, 0x3003,
				 "zero-length RDMA_WRITE_WITH_IMM, invalid rkey");
	return err;
}

int kv_test_rc_write(struct kv_test *t)
{
	struct kv_rw s = { .t = t };
	int err;

	err = kv_rc_pair_default(t, &s.a, &s.b);
	if (!err)
		err = kv_buf_alloc(t, &s.target, s.b.dev->ibdev, KV_RW_TARGET);
	if (!err)
		err = kv_rmr_reg(t, &s.b, &s.target, IB_ACCESS_REMOTE_WRITE,
				 &s.rmr);
	if (!err)
		err = kv_rw_all(&s, t->ctx->size);
	kv_ep_destroy(&s.b);
	kv_ep_destroy(&s.a);
	kv_buf_free(&s.target);
	return err;
}
