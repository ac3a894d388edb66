// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_send: SEND, SEND_WITH_IMM, a 3-SGE gather into a 3-SGE scatter with
 * other boundaries, zero-length SENDs and a 1 MiB SEND, a->b over RC.
 * Checks the completions on both sides and every received byte, and that
 * nothing past the message was written.
 */
#include "kverbs.h"

#define KV_RS_IMM		0x5e4d0000

struct kv_rs {
	struct kv_test *t;
	struct kv_ep a, b;
	u32 n;				/* messages so far */
};

static int kv_rs_check_recv(struct kv_rs *s, const struct ib_wc *wc,
			    u32 bytes, bool imm, const char *what)
{
	struct kv_test *t = s->t;

	if (wc->byte_len != bytes)
		return kv_fail(t, "%s: receive byte_len %u, expected %u", what,
			       wc->byte_len, bytes);
	if (wc->qp != s->b.qp)
		return kv_fail(t, "%s: receive wc.qp is not the QP", what);
	if (!!(wc->wc_flags & IB_WC_WITH_IMM) != imm)
		return kv_fail(t, "%s: receive wc_flags 0x%x, IB_WC_WITH_IMM expected %s",
			       what, wc->wc_flags, imm ? "set" : "clear");
	if (imm && be32_to_cpu(wc->ex.imm_data) != KV_RS_IMM + s->n)
		return kv_fail(t, "%s: imm 0x%x, expected 0x%x", what,
			       be32_to_cpu(wc->ex.imm_data), KV_RS_IMM + s->n);
	return 0;
}

/*
 * One message: gathered from pieces slen[] of a buffer on a, scattered
 * into pieces rlen[] of a buffer on b.
 */
static int kv_rs_msg(struct kv_rs *s, bool imm, const u32 *slen, int sn,
		     const u32 *rlen, int rn, const char *what)
{
	struct ib_sge ssge[KV_SGL_MAX], rsge[KV_SGL_MAX];
	struct kv_buf sb = {}, rb = {};
	struct ib_send_wr swr = {};
	struct ib_recv_wr rwr = {};
	struct kv_test *t = s->t;
	struct kv_sgl ls, lr;
	u32 seed = 100 + s->n;
	struct ib_wc wc;
	int err;

	kv_sgl_layout(&ls, slen, sn);
	kv_sgl_layout(&lr, rlen, rn);
	err = kv_buf_alloc(t, &sb, s->a.dev->ibdev, ls.span);
	if (!err)
		err = kv_buf_alloc(t, &rb, s->b.dev->ibdev, lr.span);
	if (err)
		goto out;
	kv_sgl_fill(&ls, sb.va, seed, 0);
	kv_buf_for_dev(&sb);
	kv_canary(rb.va, lr.span);
	kv_buf_for_dev(&rb);

	kv_sgl_sges(&lr, &s->b, &rb, rsge);
	rwr.wr_id = 0x1000 + s->n;
	rwr.sg_list = rsge;
	rwr.num_sge = rn;
	err = kv_post_recv(t, &s->b, &rwr, what);
	if (err)
		goto out;

	kv_sgl_sges(&ls, &s->a, &sb, ssge);
	swr.wr_id = 0x2000 + s->n;
	swr.opcode = imm ? IB_WR_SEND_WITH_IMM : IB_WR_SEND;
	swr.ex.imm_data = cpu_to_be32(KV_RS_IMM + s->n);
	swr.sg_list = sn ? ssge : NULL;
	swr.num_sge = sn;
	err = kv_send_wait(t, &s->a, &swr, IB_WC_SEND, what);
	if (!err)
		err = kv_expect(t, s->b.rcq, &wc, rwr.wr_id, IB_WC_SUCCESS,
				IB_WC_RECV, what);
	if (!err)
		err = kv_rs_check_recv(s, &wc, ls.total, imm, what);
	if (err)
		goto out;
	kv_buf_for_cpu(&rb);
	err = kv_sgl_check(t, &lr, rb.va, ls.total, seed, 0, what);
	if (!err)
		err = kv_sgl_check(t, &ls, sb.va, ls.total, seed, 0,
				   "send buffer after the SEND");
out:
	/* The QPs go first if anything is still posted. */
	if (err) {
		kv_ep_destroy(&s->b);
		kv_ep_destroy(&s->a);
	}
	kv_buf_free(&rb);
	kv_buf_free(&sb);
	s->n++;
	return err;
}

static int kv_rs_all(struct kv_rs *s, u32 size)
{
	const u32 one[] = { size }, one_big[] = { size + KV_SGL_GAP };
	const u32 three[] = { 17, size, 333 };
	const u32 rthree[] = { 100, 7 + size / 2,
			       (17 + size + 333) - 107 - size / 2 + 32 };
	const u32 small[] = { 64 }, big[] = { KV_BIG };
	int err;

	err = kv_rs_msg(s, false, one, 1, one_big, 1, "SEND");
	if (!err)
		err = kv_rs_msg(s, true, one, 1, one, 1, "SEND_WITH_IMM");
	if (!err)
		err = kv_rs_msg(s, false, three, 3, rthree, 3,
				"SEND, 3 SGEs to 3 SGEs");
	if (!err)
		err = kv_rs_msg(s, false, NULL, 0, small, 1,
				"zero-length SEND");
	if (!err)
		err = kv_rs_msg(s, true, NULL, 0, small, 1,
				"zero-length SEND_WITH_IMM");
	if (!err)
		err = kv_rs_msg(s, false, big, 1, big, 1, "1 MiB SEND");
	return err;
}

int kv_test_rc_send(struct kv_test *t)
{
	struct kv_rs s = { .t = t };
	int err;

	err = kv_rc_pair_default(t, &s.a, &s.b);
	if (!err)
		err = kv_rs_all(&s, t->ctx->size);
	kv_ep_destroy(&s.b);
	kv_ep_destroy(&s.a);
	return err;
}
