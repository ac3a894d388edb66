/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * conn.c: connections: lookup, attach, receive dispatch, timers, planes
 * (spec 6).
 */
#ifndef MROCE_CONN_H
#define MROCE_CONN_H

#include "transport.h"

int mroce_conn_attach(struct mroce_qp *qp);
void mroce_conn_detach(struct mroce_qp *qp, u8 reason);
void mroce_conn_rcv(struct mroce_dev *mdev, struct sk_buff *skb);
struct sk_buff *mroce_conn_alloc_pkt(struct mroce_conn *conn, u8 type,
				     u32 ext_len, u32 payload_len);
void mroce_conn_arm_timer(struct mroce_conn *conn);
void mroce_conn_wake_at(struct mroce_conn *conn, ktime_t when);
void mroce_conn_pair_planes(struct mroce_conn *conn);
void mroce_conns_plane_event(struct mroce_dev *mdev, int plane, bool up,
			     bool removed);
void mroce_conns_plane_added(struct mroce_dev *mdev, int plane);
void mroce_conn_resend_connect(struct mroce_conn *conn, struct sk_buff_head *q);
bool mroce_conn_plane_usable(struct mroce_conn *conn, int plane);

#endif /* MROCE_CONN_H */
