/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cc.c: congestion control, pacing and the rate hint (spec 12).
 */
#ifndef MROCE_CC_H
#define MROCE_CC_H

#include <linux/skbuff.h>

struct mroce_conn;
struct mroce_path;

void mroce_cc_path_init(struct mroce_conn *conn, struct mroce_path *path);
void mroce_cc_path_restart(struct mroce_conn *conn, struct mroce_path *path);
void mroce_cc_on_ack(struct mroce_conn *conn, struct mroce_path *path,
		     u32 acked_bytes, u32 dce, u32 drx);
void mroce_cc_on_loss(struct mroce_conn *conn, struct mroce_path *path);
void mroce_cc_on_rto(struct mroce_conn *conn, struct mroce_path *path);
bool mroce_cc_window_ok(const struct mroce_path *path, u32 charge);
bool mroce_cc_pace_ok(struct mroce_conn *conn, u32 charge, ktime_t *retry_at);
void mroce_cc_pace_charge(struct mroce_conn *conn, u32 charge);
void mroce_cc_take_hint(struct mroce_conn *conn, u16 hint, u32 ack_seq);
void mroce_cc_rx_count(struct mroce_conn *conn, const struct sk_buff *skb);
u16 mroce_cc_rx_hint(struct mroce_conn *conn);
u16 mroce_hint_encode(u64 kbps);
u32 mroce_hint_decode(u16 hint);

#endif /* MROCE_CC_H */
