/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxpath.c: receive state of the peer's paths, ACKs and probe replies (spec
 * 7.3, 8).
 */
#ifndef MROCE_RXPATH_H
#define MROCE_RXPATH_H

#include "transport.h"

int mroce_rxpath_accept(struct mroce_conn *conn, const struct sk_buff *skb);
void mroce_rxpath_commit(struct mroce_conn *conn, const struct sk_buff *skb,
			 int class);
void mroce_ack_unsolicited(struct mroce_conn *conn, u8 id,
			   struct mroce_qp *qp, struct sk_buff_head *q);
void mroce_send_ack(struct mroce_conn *conn, const struct sk_buff *in,
		    struct mroce_qp *qp, struct sk_buff_head *q);
void mroce_stream_duplicate(struct mroce_conn *conn);
void mroce_ack_committed(struct mroce_conn *conn, const struct sk_buff *skb,
			 struct mroce_qp *qp, struct sk_buff_head *q);
void mroce_ack_tick(struct mroce_conn *conn, ktime_t now,
		    struct sk_buff_head *q);
void mroce_rx_probe(struct mroce_conn *conn, struct sk_buff *skb,
		    struct sk_buff_head *q);
void mroce_rxpaths_free(struct mroce_conn *conn);

#endif /* MROCE_RXPATH_H */
