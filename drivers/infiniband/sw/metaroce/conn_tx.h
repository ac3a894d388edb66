/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * conn_tx.c: the connection's transmit queue and its sending (spec 4.8).
 */
#ifndef MROCE_CONN_TX_H
#define MROCE_CONN_TX_H

#include <linux/skbuff.h>

#include "tunables.h"

struct mroce_conn;

/*
 * Most packets of one batch (spec 4.8): tx_batch_pkts, at most one per
 * fragment slot of an skb (each packet is referenced as one fragment).
 */
static inline u32 mroce_tx_batch_max(void)
{
	return min_t(u32, READ_ONCE(mroce_tx_batch_pkts), MAX_SKB_FRAGS);
}

void mroce_conn_tx_commit(struct mroce_conn *conn, struct sk_buff_head *q);
void mroce_conn_xmit(struct mroce_conn *conn);
void mroce_conn_tx_init(struct mroce_conn *conn);

#endif /* MROCE_CONN_TX_H */
