// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sender's segment window (spec 10.1.2, MRC-PLC-003): segment i of a
 * multi-segment message goes only while i is below the message's lowest
 * undelivered segment plus the peer's window.  A stream sends one message
 * at a time in each direction (its requests in SSN order, its READ
 * responses in SSN order), so one window per direction and stream
 * suffices.  We track at most our own window's worth of segments: a
 * smaller window than the peer's is always allowed.  conn->lock held.
 */
#include "conn.h"
#include "path.h"
#include "rdctx.h"
#include "segwin.h"
#include "stream.h"
#include "verbs.h"

void mroce_segwin_start(struct mroce_segwin *sw, u32 ssn)
{
	sw->ssn = ssn;
	sw->base = 0;
	bitmap_zero(sw->done, MROCE_SEG_WIN);
}

bool mroce_segwin_open(const struct mroce_conn *conn,
		       const struct mroce_segwin *sw, u32 seg)
{
	u32 w = min_t(u32, BIT(conn->cx.peer_seg_win_shift), MROCE_SEG_WIN);

	return seg - sw->base < w;
}

/* Segment seg of message ssn was delivered: move the window's base. */
static void mroce_segwin_delivered(struct mroce_segwin *sw, u32 ssn, u32 seg)
{
	if (ssn != sw->ssn || seg - sw->base >= MROCE_SEG_WIN)
		return;		/* another message, or delivered before */
	__set_bit(seg % MROCE_SEG_WIN, sw->done);
	while (test_bit(sw->base % MROCE_SEG_WIN, sw->done)) {
		__clear_bit(sw->base % MROCE_SEG_WIN, sw->done);
		sw->base++;
	}
}

/* A packet rec of a stream was acknowledged at path level. */
void mroce_rc_delivered(const struct mroce_txrec *rec)
{
	struct mroce_stream *st;
	u32 seg;

	if (!rec->qp)
		return;
	st = &rec->qp->stream;
	seg = rec->offset >> (8 + rec->segshift);
	if (rec->type >= MROCE_T_SEND && rec->type <= MROCE_T_WRITE_IMM)
		mroce_segwin_delivered(&st->req_win, rec->ssn, seg);
	else if (rec->type == MROCE_T_READ_RESP)
		mroce_segwin_delivered(&st->resp_win, rec->ssn, seg);
	if (rec->type == MROCE_T_READ_RESP || rec->type == MROCE_T_ATOMIC_RESP)
		mroce_rdctx_delivered(st, rec->ssn);
}
