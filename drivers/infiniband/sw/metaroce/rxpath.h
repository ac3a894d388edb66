/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rxpath.c: receive state of the peer's paths, ACKs and probe replies (spec
 * 7.3, 8).  Under conn->lock.
 */
#ifndef MROCE_RXPATH_H
#define MROCE_RXPATH_H

#include <linux/bitmap.h>
#include <linux/ktime.h>
#include <linux/skbuff.h>

#include "wire.h"

struct mroce_conn;
struct mroce_qp;

/* The receiver side of a peer's path (spec 7.3). */
struct mroce_rxpath {
	u32 cum;		/* all PSNs up to cum are resolved */
	u32 high;		/* highest PSN received */
	u32 ce_count;
	u32 rx_count;
	u32 ce_acked;		/* CE Count in the last ACK for the path */
	ktime_t high_at;	/* arrival of high: the ACK Delay */
	ktime_t ack_due;	/* a coalesced ACK is due; 0: none (8.2) */
	u16 unacked;		/* NEW packets since the last ACK */
	bool ack_now;		/* the packet in hand needs an ACK now */
	bool last_ce;		/* the previous committed packet was CE */
	bool reordered;		/* a NEW packet came below high since the last ACK */
	bool sr_more;		/* Stream Records left after its last ACK */
	u8 reply_plane;		/* where a coalesced ACK goes: the plane */
	__be16 reply_sport;	/* and entropy of the latest packet */
	DECLARE_BITMAP(sack, MROCE_SACK_BITS);	/* bit i: PSN cum + 1 + i */
};

#define MROCE_NO_CARRY	0xff	/* conn->rx.carry_for: no packet in hand */

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
struct mroce_path;

u8 mroce_ack_carry_pick(struct mroce_conn *conn,
			const struct mroce_path *path, u32 len, u32 seg,
			u16 flags);
void mroce_ack_carry_undo(struct mroce_conn *conn, u8 id);
void mroce_ack_fill_carried(struct mroce_conn *conn, struct sk_buff_head *q);
void mroce_ack_tick(struct mroce_conn *conn, ktime_t now,
		    struct sk_buff_head *q);
void mroce_rx_probe(struct mroce_conn *conn, struct sk_buff *skb,
		    struct sk_buff_head *q);
void mroce_rxpaths_free(struct mroce_conn *conn);

#endif /* MROCE_RXPATH_H */
