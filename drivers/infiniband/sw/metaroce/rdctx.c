// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder's READ and ATOMIC contexts (spec 10.4.2, MRC-PLC-024): a
 * stream holds at most 2 * max_dest_rd_atomic READ or ATOMIC requests from
 * their arrival until every packet of their response is delivered.  A peer
 * that sends more gets them refused (not committed at path level, counted
 * in drop_no_resource) until a context is free, so what it can make us
 * hold does not grow with what it sends (spec 16.4).  Taking a context and
 * delivering to one cost O(1) while requests come and go in SSN order:
 * contexts are taken round the array and looked for from the last one
 * delivered to.  conn->lock held once the stream is attached.
 */
#include <linux/slab.h>

#include "conn.h"
#include "rdctx.h"
#include "stream.h"
#include "verbs.h"

static void mroce_rdctx_set(struct mroce_rdctxs *rd, struct mroce_rdctx *ctx,
			    u32 *ssn, u64 *orig, u32 cap)
{
	rd->ctx = ctx;
	rd->atomic_ssn = ssn;
	rd->atomic_orig = orig;
	rd->cap = cap;
}

/* No context held, no atomic result cached. */
static void mroce_rdctx_clear(struct mroce_rdctxs *rd)
{
	memset(rd->ctx, 0, rd->cap * sizeof(*rd->ctx));
	memset(rd->atomic_ssn, 0, rd->cap / 2 * sizeof(u32));
	memset(rd->atomic_orig, 0, rd->cap / 2 * sizeof(u64));
	rd->used = 0;
	rd->last = rd->cap - 1;
	rd->seek = 0;
}

/* The context after s, round the array. */
static u32 mroce_rdctx_next(const struct mroce_rdctxs *rd, u32 s)
{
	return s + 1 == rd->cap ? 0 : s + 1;
}

/* At QP creation: the inline contexts, for max_dest_rd_atomic 0. */
void mroce_rdctx_init(struct mroce_rdctxs *rd)
{
	mroce_rdctx_set(rd, rd->inline_ctx, rd->inline_ssn, rd->inline_orig,
			MROCE_RD_CTX_INLINE);
	rd->limit = 0;
	mroce_rdctx_clear(rd);
}

void mroce_rdctx_free_all(struct mroce_rdctxs *rd)
{
	if (rd->ctx != rd->inline_ctx)
		kfree(rd->ctx);
	mroce_rdctx_init(rd);
}

/*
 * Room for 2 * n contexts (modify_qp, qp->state_lock held).  While the
 * stream is attached to a connection the contexts cannot move: a larger n
 * than they hold is refused there (-EINVAL; only INIT to RTR sets it for
 * RC, so a detached stream is the normal case).
 */
int mroce_rdctx_size(struct mroce_rdctxs *rd, u32 n, bool attached)
{
	u32 cap = max_t(u32, 2 * n, MROCE_RD_CTX_INLINE);
	struct mroce_rdctx *ctx;
	u64 *orig;

	BUILD_BUG_ON(2 * MROCE_MAX_RD_ATOMIC > U16_MAX);
	if (2 * n <= rd->cap) {
		WRITE_ONCE(rd->limit, 2 * n);
		return 0;
	}
	if (attached)
		return -EINVAL;
	/* One block: the contexts (what kfree() takes), results, SSNs. */
	ctx = kmalloc(cap * sizeof(*ctx) + cap / 2 * (sizeof(u64) + sizeof(u32)),
		      GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	orig = (u64 *)(ctx + cap);
	mroce_rdctx_free_all(rd);
	mroce_rdctx_set(rd, ctx, (u32 *)(orig + cap / 2), orig, cap);
	rd->limit = 2 * n;
	mroce_rdctx_clear(rd);
	return 0;
}

/* A free context of qp's stream if it may take one more, else NULL. */
struct mroce_rdctx *mroce_rdctx_free(struct mroce_qp *qp)
{
	struct mroce_rdctxs *rd = &qp->stream.rd;
	u32 i, s = rd->last;

	if (rd->used >= READ_ONCE(rd->limit))
		return NULL;
	for (i = 0; i < rd->cap; i++) {
		s = mroce_rdctx_next(rd, s);
		if (!rd->ctx[s].left)
			return &rd->ctx[s];
	}
	return NULL;
}

/* ctx, from mroce_rdctx_free(), holds request ssn until pkts are delivered. */
void mroce_rdctx_take(struct mroce_rdctxs *rd, struct mroce_rdctx *ctx,
		      u32 ssn, u32 pkts)
{
	ctx->ssn = ssn;
	ctx->left = pkts;
	rd->last = ctx - rd->ctx;
	if (pkts)
		rd->used++;
}

/* A response packet of request ssn was delivered. */
void mroce_rdctx_delivered(struct mroce_stream *st, u32 ssn)
{
	struct mroce_rdctxs *rd = &st->rd;
	u32 i, s = rd->seek;

	for (i = 0; i < rd->cap; i++, s = mroce_rdctx_next(rd, s)) {
		struct mroce_rdctx *c = &rd->ctx[s];

		if (c->left && c->ssn == ssn) {
			if (!--c->left)
				rd->used--;
			rd->seek = s;
			return;
		}
	}
}

/* The atomic result cache entry of ssn. */
u32 mroce_rdctx_atomic_slot(const struct mroce_rdctxs *rd, u32 ssn)
{
	return ssn % (rd->cap / 2);
}

/* The stream (re)starts: no context held, no atomic result cached. */
void mroce_rdctx_reset(struct mroce_stream *st)
{
	mroce_rdctx_clear(&st->rd);
}
