/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdctx.c: the responder's READ and ATOMIC contexts (spec 10.4) and its
 * atomic result cache, part of a stream: under conn->lock once the stream
 * is attached; sized by mroce_rdctx_size() while it is not.
 */
#ifndef MROCE_RDCTX_H
#define MROCE_RDCTX_H

#include <linux/types.h>

struct mroce_qp;
struct mroce_stream;

/* A responder's READ or ATOMIC context; left 0: free. */
struct mroce_rdctx {
	u32 ssn;
	u32 left;			/* response packets not delivered */
};

/*
 * Contexts held inside the stream: max_dest_rd_atomic up to 16 needs no
 * allocation; more (up to MROCE_MAX_RD_ATOMIC) takes one of its own.
 */
#define MROCE_RD_CTX_INLINE	32

struct mroce_rdctxs {
	struct mroce_rdctx *ctx;	/* cap contexts: inline_ctx or kmalloc'd */
	u32 *atomic_ssn;		/* atomic result cache, cap / 2 ... */
	u64 *atomic_orig;		/* ... entries, by SSN modulo */
	u16 cap;
	u16 limit;			/* 2 * max_dest_rd_atomic */
	u16 used;			/* contexts with left > 0 */
	u16 last;			/* the context taken last */
	u16 seek;			/* the context delivered to last */
	struct mroce_rdctx inline_ctx[MROCE_RD_CTX_INLINE];
	u32 inline_ssn[MROCE_RD_CTX_INLINE / 2];
	u64 inline_orig[MROCE_RD_CTX_INLINE / 2];
};

void mroce_rdctx_init(struct mroce_rdctxs *rd);
int mroce_rdctx_size(struct mroce_rdctxs *rd, u32 max_dest_rd_atomic,
		     bool attached);
void mroce_rdctx_free_all(struct mroce_rdctxs *rd);
struct mroce_rdctx *mroce_rdctx_free(struct mroce_qp *qp);
void mroce_rdctx_take(struct mroce_rdctxs *rd, struct mroce_rdctx *ctx,
		      u32 ssn, u32 pkts);
void mroce_rdctx_delivered(struct mroce_stream *st, u32 ssn);
void mroce_rdctx_reset(struct mroce_stream *st);
u32 mroce_rdctx_atomic_slot(const struct mroce_rdctxs *rd, u32 ssn);

#endif /* MROCE_RDCTX_H */
