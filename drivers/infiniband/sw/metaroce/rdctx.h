/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdctx.c: the responder's READ and ATOMIC contexts (spec 10.4), part of a
 * stream: under conn->lock.
 */
#ifndef MROCE_RDCTX_H
#define MROCE_RDCTX_H

#include <linux/types.h>

struct mroce_qp;
struct mroce_stream;

/* A responder's READ or ATOMIC context (rdctx.c); left 0: free. */
#define MROCE_RD_CTX	32	/* 2 * MROCE_MAX_RD_ATOMIC */
struct mroce_rdctx {
	u32 ssn;
	u32 left;			/* response packets not delivered */
};

struct mroce_rdctx *mroce_rdctx_free(struct mroce_qp *qp);
void mroce_rdctx_delivered(struct mroce_stream *st, u32 ssn);
void mroce_rdctx_reset(struct mroce_stream *st);

#endif /* MROCE_RDCTX_H */
