/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * reset.c: RESET (spec 6.7).
 */
#ifndef MROCE_RESET_H
#define MROCE_RESET_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

struct mroce_conn;
struct mroce_dev;

void mroce_reset_stateless(struct mroce_dev *mdev, struct sk_buff *in,
			   const union ib_gid *local,
			   const union ib_gid *peer, u8 reason, u16 retry_ms);
u64 mroce_rx_reset(struct mroce_conn *conn, struct sk_buff *skb,
		   struct sk_buff_head *q);

#endif /* MROCE_RESET_H */
