/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sync.c: Stream Records, SYNC and the stream retry timer (spec 8.3, 9.5).
 */
#ifndef MROCE_SYNC_H
#define MROCE_SYNC_H

#include <linux/skbuff.h>

#include "wire.h"

struct mroce_conn;
struct mroce_qp;
struct mroce_stream;

void mroce_sr_pending_add(struct mroce_conn *conn, struct mroce_qp *qp);
void mroce_sr_forget(struct mroce_conn *conn, struct mroce_stream *st);
u8 mroce_sr_fill(struct mroce_conn *conn, struct mroce_qp *qp,
		 struct mroce_sr *sr);
u8 mroce_sr_count(struct mroce_conn *conn, struct mroce_qp *qp);
void mroce_sync_arm(struct mroce_conn *conn, struct mroce_qp *qp,
		    bool progress);
void mroce_sync_tick(struct mroce_conn *conn, ktime_t now,
		     struct sk_buff_head *q);
void mroce_rx_sync(struct mroce_conn *conn, struct sk_buff *skb,
		   struct sk_buff_head *q);
u64 mroce_retry_ns(const struct mroce_qp *qp);
void mroce_retry_arm(struct mroce_conn *conn, struct mroce_qp *qp);

#endif /* MROCE_SYNC_H */
