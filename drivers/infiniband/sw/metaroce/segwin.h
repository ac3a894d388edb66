/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * segwin.c: segment windows of the message being sent (spec 10.1), part of
 * a stream: under conn->lock.
 */
#ifndef MROCE_SEGWIN_H
#define MROCE_SEGWIN_H

#include <linux/bitmap.h>

struct mroce_conn;
struct mroce_txrec;

#define MROCE_SEG_WIN_SHIFT	11
#define MROCE_SEG_WIN		BIT(MROCE_SEG_WIN_SHIFT)

/*
 * The segment window of the message a stream is sending (spec 10.1.2,
 * segwin.c): its SSN, its lowest segment not delivered yet, and which
 * segments from there on are (bit seg % MROCE_SEG_WIN).
 */
struct mroce_segwin {
	u32 ssn;
	u32 base;
	DECLARE_BITMAP(done, MROCE_SEG_WIN);
};

void mroce_segwin_start(struct mroce_segwin *sw, u32 ssn);
bool mroce_segwin_open(const struct mroce_conn *conn,
		       const struct mroce_segwin *sw, u32 seg);
void mroce_rc_delivered(const struct mroce_txrec *rec);

#endif /* MROCE_SEGWIN_H */
