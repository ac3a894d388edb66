/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * close.c: STREAM_CLOSE and CONN_CLOSE (spec 6.5.4, 6.6).
 */
#ifndef MROCE_CLOSE_H
#define MROCE_CLOSE_H

#include <linux/skbuff.h>

#include "wire.h"

struct mroce_conn;
struct mroce_qp;

void mroce_stream_close(struct mroce_conn *conn, struct mroce_qp *qp,
			u8 reason, struct sk_buff_head *q);
void mroce_rx_stream_close(struct mroce_conn *conn, struct mroce_qp *qp,
			   struct sk_buff *skb);
bool mroce_stream_close_hdr_ok(const struct mroce_bth *bth);
void mroce_conn_close_send(struct mroce_conn *conn, u8 op,
			   struct sk_buff_head *q);
void mroce_rx_conn_close(struct mroce_conn *conn, struct sk_buff *skb,
			 struct sk_buff_head *q);
void mroce_stream_gone(struct mroce_conn *conn, struct mroce_qp *qp);

#endif /* MROCE_CLOSE_H */
