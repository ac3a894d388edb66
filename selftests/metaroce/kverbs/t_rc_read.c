// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_read: RDMA_READ by a from a patterned buffer on b: sizes from 1 byte
 * to 1 MiB around the path MTU, at unaligned remote offsets, then several
 * READs in flight at once, then one scattered into 3 SGEs.  Every byte read
 * is checked and nothing past it may be written; completions report
 * IB_WC_RDMA_READ with byte_len the read length.  A zero-length READ
 * succeeds whatever its rkey.
 */
#include "kverbs.h"

#define KV_RR_SEED		300
#define KV_RR_SOURCE		(KV_BIG + 4096)
#define KV_RR_LOCAL		(KV_BIG + 4096)
#define KV_RR_BATCH		8
#define KV_RR_BATCH_LEN		4096

struct kv_rr {
	struct kv_test *t;
	struct kv_ep a, b;
	struct kv_buf source;		/* on b */
	struct kv_buf local;		/* on a */
	struct kv_rmr rmr;
	u32 n;
};

static void kv_rr_wr(struct kv_rr *s, struct ib_rdma_wr *wr,
		     struct ib_sge *sge, int nsge, u32 roff)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr.wr_id = 0x5000 + s->n++;
	wr->wr.opcode = IB_WR_RDMA_READ;
	wr->wr.send_flags = IB_SEND_SIGNALED;
	wr->wr.sg_list = sge;
	wr->wr.num_sge = nsge;
	wr->remote_addr = s->rmr.addr + roff;
	wr->rkey = s->rmr.rkey;
}

static int kv_rr_check_wc(struct kv_test *t, const struct ib_wc *wc, u32 len,
			  const char *what)
{
	if (wc->byte_len != len)
		return kv_fail(t, "%s: byte_len %u, expected %u", what,
			       wc->byte_len, len);
	return 0;
}

/* Read pieces rlen[] of the local buffer from remote offset roff. */
static int kv_rr_one(struct kv_rr *s, const u32 *rlen, int rn, u32 roff,
		     const char *what)
{
	struct ib_sge sge[KV_SGL_MAX];
	struct kv_test *t = s->t;
	struct ib_rdma_wr wr;
	struct kv_sgl l;
	struct ib_wc wc;
	int err;

	kv_sgl_layout(&l, rlen, rn);
	kv_canary(s->local.va, l.span);
	kv_buf_for_dev(&s->local);
	kv_sgl_sges(&l, &s->a, &s->local, sge);
	kv_rr_wr(s, &wr, sge, rn, roff);
	err = kv_post_send(t, &s->a, &wr.wr, what);
	if (!err)
		err = kv_expect(t, s->a.scq, &wc, wr.wr.wr_id, IB_WC_SUCCESS,
				IB_WC_RDMA_READ, what);
	if (!err)
		err = kv_rr_check_wc(t, &wc, l.total, what);
	if (err)
		return err;
	kv_buf_for_cpu(&s->local);
	return kv_sgl_check(t, &l, s->local.va, l.total, KV_RR_SEED, roff,
			    what);
}

/*
 * A zero-length READ names no memory: a key that was never valid and
 * address 0 must not matter (MRC-PLC-035), and nothing is written.
 */
static int kv_rr_zero(struct kv_rr *s)
{
	const char *what = "zero-length RDMA_READ, invalid rkey";
	struct kv_test *t = s->t;
	struct ib_rdma_wr wr;
	struct ib_wc wc;
	int err;

	kv_canary(s->local.va, s->local.len);
	kv_buf_for_dev(&s->local);
	kv_rr_wr(s, &wr, NULL, 0, 0);
	wr.remote_addr = 0;
	wr.rkey = s->rmr.rkey ^ 0x5a5a5a00;
	err = kv_post_send(t, &s->a, &wr.wr, what);
	if (!err)
		err = kv_expect(t, s->a.scq, &wc, wr.wr.wr_id, IB_WC_SUCCESS,
				IB_WC_RDMA_READ, what);
	if (!err)
		err = kv_rr_check_wc(t, &wc, 0, what);
	if (err)
		return err;
	kv_buf_for_cpu(&s->local);
	return kv_check_canary(t, s->local.va, s->local.len, what);
}

static int kv_rr_sizes(struct kv_rr *s, u32 size)
{
	static const u32 sizes[][2] = {	/* remote offset, length */
		{ 0, 1 }, { 1, 7 }, { 3, 64 }, { 100, 1023 }, { 0, 1024 },
		{ 5, 1025 }, { 9, 2048 + 1 }, { 13, 65536 + 3 },
		{ 0, KV_BIG }, { 4096 - 9, KV_BIG },
	};
	char what[48];
	u32 len;
	size_t i;
	int err;

	len = size;
	snprintf(what, sizeof(what), "RDMA_READ of %u bytes", len);
	err = kv_rr_one(s, &len, 1, 7, what);
	if (!err)
		err = kv_rr_zero(s);
	for (i = 0; i < ARRAY_SIZE(sizes) && !err; i++) {
		len = sizes[i][1];
		snprintf(what, sizeof(what), "RDMA_READ of %u bytes at +%u",
			 len, sizes[i][0]);
		err = kv_rr_one(s, &len, 1, sizes[i][0], what);
	}
	return err;
}

/* KV_RR_BATCH READs posted in one chain, completing in order. */
static int kv_rr_batch(struct kv_rr *s)
{
	const u32 stride = KV_RR_BATCH_LEN + KV_SGL_GAP;
	struct ib_rdma_wr wr[KV_RR_BATCH];
	struct ib_sge sge[KV_RR_BATCH];
	struct kv_test *t = s->t;
	struct ib_wc wc;
	int i, err;

	kv_canary(s->local.va, KV_RR_BATCH * stride);
	kv_buf_for_dev(&s->local);
	for (i = 0; i < KV_RR_BATCH; i++) {
		sge[i] = kv_sge(&s->a, &s->local, i * stride, KV_RR_BATCH_LEN);
		kv_rr_wr(s, &wr[i], &sge[i], 1, i * 5001);
		if (i)
			wr[i - 1].wr.next = &wr[i].wr;
	}
	err = kv_post_send(t, &s->a, &wr[0].wr, "8 RDMA_READs in flight");
	for (i = 0; i < KV_RR_BATCH && !err; i++) {
		err = kv_expect(t, s->a.scq, &wc, wr[i].wr.wr_id,
				IB_WC_SUCCESS, IB_WC_RDMA_READ,
				"RDMA_READ of a batch of 8");
		if (!err)
			err = kv_rr_check_wc(t, &wc, KV_RR_BATCH_LEN,
					     "RDMA_READ of a batch of 8");
	}
	if (err)
		return err;
	kv_buf_for_cpu(&s->local);
	for (i = 0; i < KV_RR_BATCH && !err; i++) {
		err = kv_check_pattern(t, s->local.va + i * stride,
				       KV_RR_BATCH_LEN, KV_RR_SEED, i * 5001,
				       "RDMA_READ of a batch of 8");
		if (!err)
			err = kv_check_canary(t, s->local.va + i * stride +
					      KV_RR_BATCH_LEN, KV_SGL_GAP,
					      "after a READ of a batch of 8");
	}
	return err;
}

int kv_test_rc_read(struct kv_test *t)
{
	struct kv_rr s = { .t = t };
	u32 three[3];
	int err;

	err = kv_rc_pair_default(t, &s.a, &s.b);
	if (!err)
		err = kv_buf_alloc(t, &s.source, s.b.dev->ibdev, KV_RR_SOURCE);
	if (!err)
		err = kv_buf_alloc(t, &s.local, s.a.dev->ibdev, KV_RR_LOCAL);
	if (err)
		goto out;
	kv_fill(s.source.va, KV_RR_SOURCE, KV_RR_SEED, 0);
	kv_buf_for_dev(&s.source);
	err = kv_rmr_reg(t, &s.b, &s.source, IB_ACCESS_REMOTE_READ, &s.rmr);
	if (!err)
		err = kv_rr_sizes(&s, t->ctx->size);
	if (!err)
		err = kv_rr_batch(&s);
	if (!err) {
		three[0] = 11;
		three[1] = t->ctx->size;
		three[2] = 1500;
		err = kv_rr_one(&s, three, 3, 77, "RDMA_READ into 3 SGEs");
	}
	if (!err) {
		kv_buf_for_cpu(&s.source);
		err = kv_check_pattern(t, s.source.va, KV_RR_SOURCE,
				       KV_RR_SEED, 0, "READ source after the READs");
	}
out:
	kv_ep_destroy(&s.b);
	kv_ep_destroy(&s.a);
	kv_buf_free(&s.local);
	kv_buf_free(&s.source);
	return err;
}
