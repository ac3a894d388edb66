/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * segwin.c: segment windows of the message being sent (spec 10.1).
 */
#ifndef MROCE_SEGWIN_H
#define MROCE_SEGWIN_H

#include "transport.h"

void mroce_segwin_start(struct mroce_segwin *sw, u32 ssn);
bool mroce_segwin_open(const struct mroce_conn *conn,
		       const struct mroce_segwin *sw, u32 seg);
void mroce_rc_delivered(const struct mroce_txrec *rec);

#endif /* MROCE_SEGWIN_H */
