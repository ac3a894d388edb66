// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The receive state of the peer's paths (spec 7.3.2): cumulative PSN and
 * 256-bit SACK bitmap per Path ID, created on the first packet of a path;
 * the ACKs that report it (spec 8) and the answers to PROBEs (spec 7.6).
 */
#include <linux/slab.h>

#include "cc.h"
#include "conn.h"
#include "net.h"
#include "path.h"
#include "pkt.h"
#include "rxpath.h"
#include "sync.h"
#include "tunables.h"
#include "verbs.h"

static void mroce_rxpath_advance(struct mroce_rxpath *rx, u32 n)
{
	if (n >= MROCE_SACK_BITS)
		bitmap_zero(rx->sack, MROCE_SACK_BITS);
	else
		bitmap_shift_right(rx->sack, rx->sack, n, MROCE_SACK_BITS);
	rx->cum += n;
}

static void mroce_rxpath_settle(struct mroce_rxpath *rx)
{
	u32 n = find_first_zero_bit(rx->sack, MROCE_SACK_BITS);

	if (n)
		mroce_rxpath_advance(rx, n);
}

/* The state of path id, created from plw if it has none (spec 7.3.2). */
static struct mroce_rxpath *mroce_rxpath_get(struct mroce_conn *conn, u8 id,
					     u32 plw)
{
	struct mroce_rxpath *rx = conn->rx.paths[id];

	if (rx)
		return rx;
	rx = kzalloc(sizeof(*rx), GFP_ATOMIC | __GFP_NOWARN);
	if (!rx)
		return NULL;
	rx->cum = plw - 1;
	rx->high = rx->cum;
	conn->rx.paths[id] = rx;
	return rx;
}

/* Apply a PLW: everything below it is resolved.  False: out of window. */
static bool mroce_rxpath_apply_plw(struct mroce_rxpath *rx, u32 plw)
{
	s32 d = mroce_seq_diff(plw - 1, rx->cum);

	if (d > 65536)
		return false;
	if (d > 0) {
		mroce_rxpath_advance(rx, d);
		mroce_rxpath_settle(rx);
	}
	return true;
}

/*
 * Receiver side of a sequenced packet (spec 7.3.2): apply its PLW, then
 * classify its PSN.  Returns 1 for a new packet, 2 for a late one (below
 * the PLW: its content may still be needed, the stream level removes
 * duplicates), 0 for a duplicate, -1 for one dropped and counted.  The
 * packet is recorded only by mroce_rxpath_commit(), once the stream level
 * has not refused it.
 */
int mroce_rxpath_accept(struct mroce_conn *conn, const struct sk_buff *skb)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	u32 psn = ntohl(bth->psn), plw = ntohl(bth->plw);
	struct mroce_rxpath *rx;
	s32 e;

	if (bth->path_id >= MROCE_MAX_RX_PATHS) {
		mroce_count(conn->mdev, DROP_BAD_HEADER);
		return -1;
	}
	if (mroce_seq_diff(psn, plw) < 0 ||
	    mroce_seq_diff(psn, plw) >= MROCE_TX_WINDOW) {
		mroce_count(conn->mdev, DROP_OUT_OF_WINDOW);
		return -1;
	}
	rx = mroce_rxpath_get(conn, bth->path_id, plw);
	if (!rx) {
		mroce_count(conn->mdev, DROP_NO_RESOURCE);
		return -1;
	}
	if (!mroce_rxpath_apply_plw(rx, plw)) {
		mroce_count(conn->mdev, DROP_OUT_OF_WINDOW);
		return -1;
	}
	e = mroce_seq_diff(psn, rx->cum);
	if (e > MROCE_SACK_BITS || e <= -65536) {
		mroce_count(conn->mdev, DROP_OUT_OF_WINDOW);
		return -1;
	}
	if (e <= 0)
		return 2;
	return test_bit(e - 1, rx->sack) ? 0 : 1;
}

/* Record a packet that mroce_rxpath_accept() classified as class. */
void mroce_rxpath_commit(struct mroce_conn *conn, const struct sk_buff *skb,
			 int class)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	struct mroce_rxpath *rx = conn->rx.paths[bth->path_id];
	u32 psn = ntohl(bth->psn);
	bool ce;

	rx->reply_sport = udp_hdr(skb)->source;
	rx->reply_plane = ((const struct mroce_skb_cb *)skb->cb)->plane;
	rx->rx_count++;
	ce = mroce_rx_ce(skb);
	if (ce) {
		rx->ce_count++;
		if (!rx->last_ce)
			rx->ack_now = true;	/* MRC-ACK-006 rule 3 */
	}
	rx->last_ce = ce;
	if (class == 2) {
		mroce_count(conn->mdev, LATE_ARRIVALS);
		rx->ack_now = true;		/* rule 5 */
		return;
	}
	if (class == 0) {
		mroce_count(conn->mdev, PATH_DUPLICATES);
		rx->ack_now = true;
		return;
	}
	if (psn != rx->high + 1)
		rx->ack_now = true;		/* rule 2: out of order */
	if (mroce_seq_diff(psn, rx->high) < 0) {
		mroce_count(conn->mdev, PATH_REORDER);
		rx->reordered = true;		/* MRC-ACK-018 */
	}
	if (mroce_seq_diff(psn, rx->high) > 0) {
		rx->high = psn;
		rx->high_at = mroce_conn_now(conn);
	}
	set_bit(mroce_seq_diff(psn, rx->cum) - 1, rx->sack);
	mroce_rxpath_settle(rx);
}

/*
 * Fill an AKX for rx, or a NO_STATE one, but for its Rate Hint (8.1), as
 * of now (its ACK Delay).
 */
static void mroce_fill_akx_state(struct mroce_rxpath *rx,
				 struct mroce_akx *akx, ktime_t now)
{
	s64 delay;
	u32 i;

	if (!rx) {
		akx->ack_flags = MROCE_ACKF_NO_STATE;
		return;
	}
	akx->cum_psn = htonl(rx->cum);
	akx->ce_count = htonl(rx->ce_count);
	akx->rx_count = htonl(rx->rx_count);
	delay = rx->high_at ? ktime_us_delta(now, rx->high_at) : 0;
	akx->ack_delay = htons(clamp_t(s64, delay, 0, 65535));
	for_each_set_bit(i, rx->sack, MROCE_SACK_BITS)
		akx->sack[i / 8] |= 0x80 >> (i % 8);
	if (rx->reordered)
		akx->ack_flags |= MROCE_ACKF_REORDERED;
	rx->reordered = false;
}

/* Fill the AKX of an ACK-class packet; returns its ECE flag (8.1). */
static u16 mroce_fill_akx(struct mroce_conn *conn, struct mroce_rxpath *rx,
			  struct mroce_akx *akx, u16 hint)
{
	akx->rate_hint = htons(hint);
	mroce_fill_akx_state(rx, akx, mroce_conn_now(conn));
	if (!rx || rx->ce_count == rx->ce_acked)
		return 0;
	rx->ce_acked = rx->ce_count;
	return MROCE_F_ECE;
}

/* An ACK for rx is due at the latest our Max ACK Delay from now. */
static void mroce_ack_due_in(struct mroce_conn *conn,
			     struct mroce_rxpath *rx)
{
	rx->ack_due = ktime_add_us(mroce_conn_now(conn), conn->cx.max_ack_delay);
	if (!conn->rx.ack_due || ktime_before(rx->ack_due, conn->rx.ack_due)) {
		conn->rx.ack_due = rx->ack_due;
		mroce_conn_arm_timer(conn);
	}
}

/*
 * An ACK for the peer's path id, with qp's stream record first if qp (8),
 * sent with entropy sport on plane.  It reports everything: no ACK of the
 * path is owed after it, except for Stream Records that did not fit and
 * were never sent: the next ACK of the path follows within our Max ACK
 * Delay (MRC-ACK-010).
 */
static void mroce_build_ack(struct mroce_conn *conn, u8 id,
			    struct mroce_qp *qp, __be16 sport, u8 plane,
			    struct sk_buff_head *q)
{
	struct mroce_rxpath *rx = id < MROCE_MAX_RX_PATHS ?
				  conn->rx.paths[id] : NULL;
	struct mroce_bth *bth;
	struct mroce_akx *akx;
	struct sk_buff *skb;
	u8 nsr;
	u16 hint;

	lockdep_assert_held(&conn->lock);

	conn->rx.ack_now = false;
	if (rx) {
		rx->unacked = 0;
		rx->ack_now = false;
		rx->sr_more = false;
		rx->reply_sport = sport;
		rx->reply_plane = plane;
	}
	hint = mroce_cc_rx_hint(conn);
	if (hint)
		conn->rx.hinted_at = jiffies;
	nsr = mroce_sr_count(conn, qp);
	skb = mroce_conn_alloc_pkt(conn, MROCE_T_ACK,
				   sizeof(*akx) + nsr * sizeof(struct mroce_sr), 0);
	if (!skb)
		return;
	bth = (struct mroce_bth *)skb->data;
	bth->psn = htonl(conn->rx.ack_seq++);
	bth->path_id = id;
	akx = (struct mroce_akx *)(bth + 1);
	bth->flags = htons(mroce_fill_akx(conn, rx, akx, hint));
	akx->num_sr = mroce_sr_fill(conn, qp, (struct mroce_sr *)(akx + 1));
	mroce_cb(skb)->sport = sport;
	mroce_cb(skb)->plane = plane;
	__skb_queue_tail(q, skb);
	mroce_count(conn->mdev, ACKS_SENT);
	if (rx && conn->streams.sr_unsent) {
		rx->sr_more = true;
		mroce_ack_due_in(conn, rx);
	}
}

/* Acknowledge the peer's path of in now, with qp's stream record if qp. */
void mroce_send_ack(struct mroce_conn *conn, const struct sk_buff *in,
		    struct mroce_qp *qp, struct sk_buff_head *q)
{
	lockdep_assert_held(&conn->lock);

	mroce_build_ack(conn, ((const struct mroce_bth *)in->data)->path_id,
			qp, udp_hdr(in)->source,
			((const struct mroce_skb_cb *)in->cb)->plane, q);
}

/*
 * An ACK with qp's Stream Record for path id when no packet is there to
 * answer (MRC-ACK-012): addressed like a reply to the path's latest one.
 */
void mroce_ack_unsolicited(struct mroce_conn *conn, u8 id,
			   struct mroce_qp *qp, struct sk_buff_head *q)
{
	struct mroce_rxpath *rx = id < MROCE_MAX_RX_PATHS ?
				  conn->rx.paths[id] : NULL;

	lockdep_assert_held(&conn->lock);

	if (rx)
		mroce_build_ack(conn, id, qp, rx->reply_sport, rx->reply_plane,
				q);
}

/*
 * May a sequenced packet of len bytes (headers and payload), about to be
 * built, carry an AKX (8.6), and for which of the peer's paths?  Only to a
 * peer that advertised CACK, and within the size of a full data packet of
 * its message's segment size seg (MRC-ACK-019: the QP's path MTU holds).
 * First choice: the path of the packet in hand, whose ACK its processing
 * may make due (mroce_ack_committed() then sends none); else a path whose
 * coalesced ACK is owed, while no Stream Record waits for an ACK (a
 * carried AKX has none).  The AKX itself is filled when the packet is
 * committed, so that it reports the latest state.  Returns MROCE_NO_CARRY
 * for none.  conn->lock held.
 */
u8 mroce_ack_carry_pick(struct mroce_conn *conn,
			const struct mroce_path *path, u32 len, u32 seg,
			u16 flags)
{
	struct mroce_rxpath *rx;
	int i;

	lockdep_assert_held(&conn->lock);

	/*
	 * Not on a resend, nor on a path in trouble: the ACK would share
	 * its fate.  Not when the peer's rate hint would go stale: a
	 * carried AKX has none, so an ACK of its own goes at least every
	 * half hint_ttl_ms.
	 */
	if (!conn->cx.peer_cack || flags & MROCE_F_RETX ||
	    path->state != MROCE_PATH_ACTIVE || path->backoff ||
	    len + sizeof(struct mroce_akx) > MROCE_SEQ_HDR_MAX + seg ||
	    (conn->cx.hints &&
	     time_after(jiffies, conn->rx.hinted_at +
			msecs_to_jiffies(READ_ONCE(mroce_hint_ttl_ms)) / 2)))
		return MROCE_NO_CARRY;
	if (conn->rx.carry_for != MROCE_NO_CARRY) {
		if (conn->rx.carried)
			return MROCE_NO_CARRY;
		conn->rx.carried = true;
		return conn->rx.carry_for;
	}
	if (!conn->rx.ack_due || !list_empty(&conn->streams.sr_pending))
		return MROCE_NO_CARRY;
	for (i = 0; i < MROCE_MAX_RX_PATHS; i++) {
		rx = conn->rx.paths[i];
		if (rx && rx->unacked && !rx->sr_more) {
			/* This packet reports the path: no ACK is owed. */
			rx->unacked = 0;
			rx->ack_now = false;
			return i;
		}
	}
	return MROCE_NO_CARRY;
}

/* The packet that was to carry id's AKX was not built: an ACK is owed. */
void mroce_ack_carry_undo(struct mroce_conn *conn, u8 id)
{
	struct mroce_rxpath *rx;

	if (id == MROCE_NO_CARRY)
		return;
	if (id == conn->rx.carry_for) {
		conn->rx.carried = false;
		return;
	}
	rx = conn->rx.paths[id];
	if (rx && !rx->unacked)
		rx->unacked = 1;	/* its ack_due still stands */
}

/*
 * Fill the carried AKXs of the packets in q, about to be committed: each
 * reports its path as it is now (8.6).  conn->lock held.
 */
void mroce_ack_fill_carried(struct mroce_conn *conn, struct sk_buff_head *q)
{
	struct mroce_bth *bth;
	struct mroce_akx *akx;
	struct sk_buff *skb;
	u8 id;

	lockdep_assert_held(&conn->lock);

	skb_queue_walk(q, skb) {
		if (!mroce_cb(skb)->carry)
			continue;
		mroce_cb(skb)->carry = false;
		bth = (struct mroce_bth *)skb->data;
		id = mroce_cb(skb)->carry_id;
		akx = (struct mroce_akx *)(skb->data + sizeof(*bth) +
					   mroce_ext_len(bth->type));
		akx->acked_path_id = id;
		mroce_fill_akx_state(conn->rx.paths[id], akx,
				     mroce_conn_now(conn));
		mroce_count(conn->mdev, ACKS_CARRIED);
	}
	conn->rx.carrying = 0;
}

/* Content received again at stream level: counted, ACKed at once (8.2). */
void mroce_stream_duplicate(struct mroce_conn *conn)
{
	mroce_count(conn->mdev, DUPLICATES);
	conn->rx.ack_now = true;
}

/*
 * Acknowledge a committed sequenced packet (spec 8.2): at once when a rule
 * of MRC-ACK-006 holds, otherwise when ack_coalesce_pkts NEW packets wait
 * or our Max ACK Delay after the first of them, whichever comes first.
 */
void mroce_ack_committed(struct mroce_conn *conn, const struct sk_buff *skb,
			 struct mroce_qp *qp, struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	struct mroce_rxpath *rx = conn->rx.paths[bth->path_id];

	lockdep_assert_held(&conn->lock);

	/*
	 * A packet its processing sent carries the path's AKX: that is the
	 * ACK, unless Stream Records wait for one, to be sent or repeated
	 * (MRC-ACK-021).
	 */
	if (rx && conn->rx.carried && list_empty(&conn->streams.sr_pending)) {
		rx->unacked = 0;
		rx->ack_now = false;
		conn->rx.ack_now = false;
		return;
	}
	if (!rx || rx->ack_now || conn->rx.ack_now ||
	    ntohs(bth->flags) & (MROCE_F_AR | MROCE_F_LAST) ||
	    ++rx->unacked >= READ_ONCE(mroce_ack_coalesce_pkts)) {
		mroce_send_ack(conn, skb, qp, q);
		return;
	}
	rx->reply_sport = udp_hdr(skb)->source;
	rx->reply_plane = ((const struct mroce_skb_cb *)skb->cb)->plane;
	if (rx->unacked > 1 || rx->sr_more)
		return;			/* an ACK is due already */
	mroce_ack_due_in(conn, rx);
}

/* Send the coalesced ACKs that are due (MRC-ACK-005, MRC-ACK-007). */
void mroce_ack_tick(struct mroce_conn *conn, ktime_t now,
		    struct sk_buff_head *q)
{
	struct mroce_rxpath *rx;
	ktime_t next = 0;
	int i;

	lockdep_assert_held(&conn->lock);

	if (!conn->rx.ack_due || ktime_after(conn->rx.ack_due, now))
		return;
	for (i = 0; i < MROCE_MAX_RX_PATHS; i++) {
		rx = conn->rx.paths[i];
		if (!rx || (!rx->unacked && !rx->sr_more))
			continue;
		if (!ktime_after(rx->ack_due, now))
			mroce_build_ack(conn, i, NULL, rx->reply_sport,
					rx->reply_plane, q);
		/* Stream Records left: the ACK set a new deadline. */
		if ((rx->unacked || rx->sr_more) &&
		    (!next || ktime_before(rx->ack_due, next)))
			next = rx->ack_due;
	}
	conn->rx.ack_due = next;
}

/* Answer a PROBE with a PROBE_REPLY (spec 7.6, MRC-PATH-015/026). */
void mroce_rx_probe(struct mroce_conn *conn, struct sk_buff *skb,
		    struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_pbx *pbx = (const struct mroce_pbx *)(bth + 1);
	u32 plen = ntohs(bth->payload_len);
	struct mroce_rxpath *rx;
	struct mroce_bth *rbth;
	struct mroce_pbx *rpbx;
	struct sk_buff *reply;
	u16 hint;

	lockdep_assert_held(&conn->lock);

	if (bth->hdr_len * 4 != sizeof(*bth) + sizeof(*pbx) ||
	    bth->path_id >= MROCE_MAX_RX_PATHS ||
	    plen > (256U << conn->cx.css_shift) + 24 ||
	    (plen && !(pbx->probe_flags & MROCE_PBF_MTU))) {
		mroce_count(conn->mdev, DROP_BAD_HEADER);
		return;
	}
	rx = mroce_rxpath_get(conn, bth->path_id, ntohl(bth->plw));
	if (rx && !mroce_rxpath_apply_plw(rx, ntohl(bth->plw))) {
		mroce_count(conn->mdev, DROP_OUT_OF_WINDOW);
		return;
	}
	/* At most probe_reply_rate replies per second (spec 16.4). */
	if (mroce_rate_full(&conn->life.probe_rl,
			    READ_ONCE(mroce_probe_reply_rate))) {
		mroce_count(conn->mdev, DROP_RATE_LIMITED);
		return;
	}
	conn->life.probe_rl.n++;
	hint = mroce_cc_rx_hint(conn);
	if (hint)
		conn->rx.hinted_at = jiffies;
	reply = mroce_conn_alloc_pkt(conn, MROCE_T_PROBE_REPLY,
				     sizeof(*rpbx) + sizeof(struct mroce_akx), 0);
	if (!reply)
		return;
	rbth = (struct mroce_bth *)reply->data;
	rbth->psn = htonl(conn->rx.ack_seq++);
	rbth->path_id = bth->path_id;
	rpbx = (struct mroce_pbx *)(rbth + 1);
	rpbx->probe_id = pbx->probe_id;
	rpbx->probe_flags = pbx->probe_flags;
	rpbx->timestamp = pbx->timestamp;
	rbth->flags = htons(mroce_fill_akx(conn, rx,
					   (struct mroce_akx *)(rpbx + 1), hint));
	mroce_reply_to(reply, skb);
	__skb_queue_tail(q, reply);
	mroce_count(conn->mdev, ACKS_SENT);
}

void mroce_rxpaths_free(struct mroce_conn *conn)
{
	int i;

	for (i = 0; i < MROCE_MAX_RX_PATHS; i++) {
		kfree(conn->rx.paths[i]);
		conn->rx.paths[i] = NULL;
	}
}
