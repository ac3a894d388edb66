// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder's READ and ATOMIC contexts (spec 10.4.2, MRC-PLC-024): a
 * stream holds at most 2 * max_dest_rd_atomic READ or ATOMIC requests from
 * their arrival until every packet of their response is delivered.  A peer
 * that sends more gets them refused (not committed at path level, counted
 * in drop_no_resource) until a context is free, so what it can make us
 * hold does not grow with what it sends (spec 16.4).  conn->lock held.
 */
#include "conn.h"
#include "rdctx.h"
#include "stream.h"
#include "verbs.h"

/* A free context of qp's stream if it may take one more, else NULL. */
struct mroce_rdctx *mroce_rdctx_free(struct mroce_qp *qp)
{
	struct mroce_stream *st = &qp->stream;
	u32 limit = 2 * qp->attr.max_dest_rd_atomic, used = 0, i;
	struct mroce_rdctx *free = NULL;

	BUILD_BUG_ON(MROCE_RD_CTX != 2 * MROCE_MAX_RD_ATOMIC);
	for (i = 0; i < ARRAY_SIZE(st->rd_ctx); i++) {
		if (st->rd_ctx[i].left)
			used++;
		else if (!free)
			free = &st->rd_ctx[i];
	}
	return used < limit ? free : NULL;
}

/* A response packet of request ssn was delivered. */
void mroce_rdctx_delivered(struct mroce_stream *st, u32 ssn)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(st->rd_ctx); i++) {
		if (st->rd_ctx[i].left && st->rd_ctx[i].ssn == ssn) {
			st->rd_ctx[i].left--;
			return;
		}
	}
}

void mroce_rdctx_reset(struct mroce_stream *st)
{
	memset(st->rd_ctx, 0, sizeof(st->rd_ctx));
}
