// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Stream-level recovery (spec 8.3, 9.5.1): the responder's pending Stream
 * Record set, so a completion lost with its ACK is reported again, and the
 * requester's SYNC, which asks the responder for a stream's records when a
 * request stays incomplete although all its content was delivered.
 */
#include <linux/slab.h>

#include "conn.h"
#include "net.h"
#include "path.h"
#include "pkt.h"
#include "rc_req.h"
#include "rc_resp.h"
#include "rxpath.h"
#include "stream.h"
#include "sync.h"
#include "tunables.h"
#include "verbs.h"

#define MROCE_SR_REPEAT		2	/* ACKs that carry an advanced record */
#define MROCE_ACK_MAX_SR	58	/* records per ACK (MRC-HDR-015) */
#define MROCE_SYNC_MAX		64	/* entries per SYNC (spec 5.5.11) */

/* A SYNC entry (spec 5.5.11). */
struct mroce_sye {
	__be32 req;
	__be32 resp;
	__be32 ssn;
} __packed;

/*
 * The stream's Completed SSN advanced, or a SYNC asked (MRC-ACK-009).
 * conn->streams.sr_unsent counts the pending records no ACK carried yet.
 */
void mroce_sr_pending_add(struct mroce_conn *conn, struct mroce_qp *qp)
{
	struct mroce_stream *st = &qp->stream;

	if (list_empty(&st->sr_entry)) {
		list_add_tail(&st->sr_entry, &conn->streams.sr_pending);
		conn->streams.sr_unsent++;
	} else if (st->sr_left != MROCE_SR_REPEAT) {
		conn->streams.sr_unsent++;
	}
	st->sr_left = MROCE_SR_REPEAT;
	conn->rx.ack_now = true;		/* MRC-ACK-006 rule 6 */
}

/* st's pending record is on its way or gone: it no longer counts as unsent. */
static void mroce_sr_mark_sent(struct mroce_conn *conn, struct mroce_stream *st)
{
	if (st->sr_left == MROCE_SR_REPEAT)
		conn->streams.sr_unsent--;
}

static void mroce_sr_sent(struct mroce_conn *conn, struct mroce_stream *st)
{
	if (list_empty(&st->sr_entry))
		return;
	mroce_sr_mark_sent(conn, st);
	if (!--st->sr_left)
		list_del_init(&st->sr_entry);
}

/* The stream leaves its connection: no record of it is pending. */
void mroce_sr_forget(struct mroce_conn *conn, struct mroce_stream *st)
{
	if (list_empty(&st->sr_entry))
		return;
	mroce_sr_mark_sent(conn, st);
	list_del_init(&st->sr_entry);
}

/*
 * Records an ACK of conn may carry: 58, and no larger than a data packet
 * of a full segment, 72 header bytes + CSS (MRC-HDR-015).  Thousands of
 * streams completing at once drain in few ACKs.
 */
static u8 mroce_ack_max_sr(const struct mroce_conn *conn)
{
	u32 n = ((256U << conn->cx.css_shift) - 16) / sizeof(struct mroce_sr);

	return min_t(u32, n, MROCE_ACK_MAX_SR);
}

/*
 * Fill the Stream Records of an ACK: qp's first if given, then pending
 * ones, oldest first (MRC-ACK-010).  Returns how many; sr has room for
 * mroce_ack_max_sr().
 */
u8 mroce_sr_fill(struct mroce_conn *conn, struct mroce_qp *qp,
		 struct mroce_sr *sr)
{
	struct mroce_stream *st, *tmp;
	u8 max = mroce_ack_max_sr(conn), n = 0;

	if (qp) {
		mroce_rc_fill_sr(qp, &sr[n++]);
		mroce_sr_sent(conn, &qp->stream);
	}
	list_for_each_entry_safe(st, tmp, &conn->streams.sr_pending, sr_entry) {
		if (n == max)
			break;
		if (qp && st == &qp->stream)
			continue;
		mroce_rc_fill_sr(container_of(st, struct mroce_qp, stream),
				 &sr[n++]);
		mroce_sr_sent(conn, st);
	}
	return n;
}

u8 mroce_sr_count(struct mroce_conn *conn, struct mroce_qp *qp)
{
	struct mroce_stream *st;
	u8 max = mroce_ack_max_sr(conn), n = qp ? 1 : 0;

	list_for_each_entry(st, &conn->streams.sr_pending, sr_entry) {
		if (n == max)
			break;
		if (!qp || st != &qp->stream)
			n++;
	}
	return n;
}

/* The SYNC timeout: max(2 smallest srtt, 20 us), doubled (MRC-LOSS-013). */
static u32 mroce_sync_timeout(struct mroce_conn *conn, u8 backoff)
{
	u32 srtt = 0;
	u64 t;
	int i;

	for (i = 0; i < conn->tx.npaths; i++)
		if (conn->tx.paths[i]->state == MROCE_PATH_ACTIVE &&
		    conn->tx.paths[i]->srtt_us &&
		    (!srtt || conn->tx.paths[i]->srtt_us < srtt))
			srtt = conn->tx.paths[i]->srtt_us;
	t = srtt ? max(2 * srtt, 20U) : READ_ONCE(mroce_rto_initial_us);
	return min_t(u64, t << min_t(u8, backoff, 16),
		     READ_ONCE(mroce_rto_max_us));
}

static bool mroce_stream_waiting(struct mroce_qp *qp)
{
	return qp->sq.ring.cons != qp->stream.send_idx ||
	       qp->stream.send_off;
}

/*
 * A stream timer of conn (SYNC or retry) is due at when.  conn->streams.due
 * stays at or before the earliest one, so that the timer walks the streams
 * only when one may be due, not at every pacing or ACK wakeup.
 */
static void mroce_stream_timer_at(struct mroce_conn *conn, ktime_t when)
{
	if (!conn->streams.due || ktime_before(when, conn->streams.due))
		conn->streams.due = when;
	mroce_conn_wake_at(conn, when);
}

/*
 * The requester's SYNC timer for qp: after progress (a completion, a
 * response or newly delivered content) it restarts; it stops once nothing
 * is outstanding.  conn->lock held.
 */
void mroce_sync_arm(struct mroce_conn *conn, struct mroce_qp *qp,
		    bool progress)
{
	struct mroce_stream *st = &qp->stream;

	lockdep_assert_held(&conn->lock);

	if (!mroce_stream_waiting(qp)) {
		st->sync_at = 0;
		st->sync_backoff = 0;
		st->retry_at = 0;
		st->retries = 0;
		return;
	}
	if (progress || !st->retry_at) {
		if (progress)
			st->retries = 0;
		mroce_retry_arm(conn, qp);
	}
	if (progress)
		st->sync_backoff = 0;
	if (!progress && st->sync_at)
		return;
	st->sync_at = ktime_add_us(mroce_conn_now(conn),
				   mroce_sync_timeout(conn, st->sync_backoff));
	mroce_stream_timer_at(conn, st->sync_at);
}

/*
 * The retry timer: 4.096 us * 2^timeout after the last progress; the QP
 * attribute timeout 0 turns it off (MRC-LOSS-016).
 */
u64 mroce_retry_ns(const struct mroce_qp *qp)
{
	return 4096ULL << min_t(u8, qp->attr.timeout, 31);
}

void mroce_retry_arm(struct mroce_conn *conn, struct mroce_qp *qp)
{
	if (!qp->attr.timeout) {
		qp->stream.retry_at = 0;
		return;
	}
	qp->stream.retry_at = ktime_add_ns(mroce_conn_now(conn),
					   mroce_retry_ns(qp));
	mroce_stream_timer_at(conn, qp->stream.retry_at);
}

/*
 * The retry timer of st expired (MRC-LOSS-017): past retry_cnt expiries
 * without progress the oldest request fails; before that, ask again.
 * Returns true if the stream should get a SYNC entry.
 */
static bool mroce_retry_expired(struct mroce_conn *conn, struct mroce_qp *qp)
{
	struct mroce_stream *st = &qp->stream;

	/*
	 * Not while it waits for an RNR pause, or locally for window room,
	 * pacing or its turn, nor while the connection delivers other
	 * content or completes other streams' messages: the peer is alive
	 * and the stream's turn comes (MRC-LOSS-018).  The SYNC timer still
	 * asks for lost records.
	 */
	if (mroce_stream_paused(st) ||
	    !list_empty(&st->wait_entry) || !list_empty(&conn->tx.retxq) ||
	    ktime_after(conn->life.progress_at,
			ktime_sub_ns(st->retry_at, mroce_retry_ns(qp)))) {
		mroce_retry_arm(conn, qp);
		return false;
	}
	if (++st->retries > qp->attr.retry_cnt) {
		st->retry_at = 0;
		mroce_count(conn->mdev, RETRY_EXCEEDED);
		mroce_rc_fail(conn, qp, mroce_rc_oldest_ssn(qp),
			      IB_WC_RETRY_EXC_ERR);
		return false;
	}
	mroce_count(conn->mdev, STREAM_RETRIES);
	mroce_retry_arm(conn, qp);
	/* A message that drew an RNR NAK goes again instead of a SYNC. */
	return !mroce_rc_rnr_resend(conn, qp);
}

/* The ACTIVE path with the smallest srtt, else path 0. */
static struct mroce_path *mroce_sync_path(struct mroce_conn *conn)
{
	struct mroce_path *best = conn->tx.paths[0], *p;
	int i;

	for (i = 0; i < conn->tx.npaths; i++) {
		p = conn->tx.paths[i];
		if (p->state != MROCE_PATH_ACTIVE)
			continue;
		if (best->state != MROCE_PATH_ACTIVE ||
		    (p->srtt_us && p->srtt_us < best->srtt_us))
			best = p;
	}
	return best;
}

/* Send one SYNC for the streams whose timers expired (MRC-LOSS-014). */
void mroce_sync_tick(struct mroce_conn *conn, ktime_t now,
		     struct sk_buff_head *q)
{
	struct mroce_sye ent[MROCE_SYNC_MAX];
	struct mroce_path *path;
	struct mroce_stream *st;
	struct mroce_bth *bth;
	struct mroce_qp *qp;
	struct sk_buff *skb;
	ktime_t next = 0;
	u32 n = 0;

	lockdep_assert_held(&conn->lock);

	if (!conn->tx.npaths || !conn->streams.due)
		return;
	if (ktime_after(conn->streams.due, now)) {
		mroce_conn_wake_at(conn, conn->streams.due);
		return;
	}
	list_for_each_entry(st, &conn->streams.list, conn_entry) {
		qp = container_of(st, struct mroce_qp, stream);
		/*
		 * Nothing outstanding: no timer.  A retry timer left past due
		 * would be the connection timer's next deadline, at once and
		 * for ever.
		 */
		if (!mroce_stream_waiting(qp)) {
			st->sync_at = 0;
			st->retry_at = 0;
			continue;
		}
		if (st->retry_at && !ktime_after(st->retry_at, now) &&
		    mroce_retry_expired(conn, qp) && n < MROCE_SYNC_MAX)
			st->sync_at = now;	/* a SYNC goes now */
		if (st->retry_at && (!next || ktime_before(st->retry_at, next)))
			next = st->retry_at;
		if (!st->sync_at)
			continue;
		/*
		 * A stream that waits to send has content the peer cannot
		 * have delivered yet: nothing to ask about (MRC-LOSS-013).
		 */
		if (!ktime_after(st->sync_at, now) &&
		    !list_empty(&st->wait_entry)) {
			u32 t = mroce_sync_timeout(conn, st->sync_backoff);

			st->sync_at = ktime_add_us(now, t);
		}
		if (ktime_after(st->sync_at, now) || n == MROCE_SYNC_MAX) {
			if (!next || ktime_before(st->sync_at, next))
				next = st->sync_at;
			continue;
		}
		ent[n].req = htonl(qp->ibqp.qp_num);
		ent[n].resp = htonl(qp->attr.dest_qp_num);
		ent[n].ssn = htonl(qp->sq.ring.cons == st->send_idx ?
				   st->next_ssn - 1 :
				   mroce_rc_oldest_ssn(qp));
		n++;
		if (st->sync_backoff < 16)
			st->sync_backoff++;
		st->sync_at = ktime_add_us(now,
					   mroce_sync_timeout(conn,
							      st->sync_backoff));
		if (!next || ktime_before(st->sync_at, next))
			next = st->sync_at;
	}
	conn->streams.due = next;
	if (next)
		mroce_conn_wake_at(conn, next);
	if (!n)
		return;
	skb = mroce_conn_alloc_pkt(conn, MROCE_T_SYNC, 4 + n * sizeof(ent[0]),
				   0);
	if (!skb)
		return;
	path = mroce_sync_path(conn);
	bth = (struct mroce_bth *)skb->data;
	bth->path_id = path->id;
	*((u8 *)(bth + 1)) = n;
	memcpy((u8 *)(bth + 1) + 4, ent, n * sizeof(ent[0]));
	mroce_cb(skb)->sport = path->sport;
	mroce_cb(skb)->plane = path->plane;
	__skb_queue_tail(q, skb);
	mroce_count(conn->mdev, SYNCS_SENT);
}

/*
 * One SYNC entry (MRC-LOSS-015): an attached stream is reported with
 * SYNC_REPLY, and NAKed SEQUENCE if the requester waits for a request
 * beyond the next one; any other stream gets the NAK of the attach rules
 * (6.5.2): NOT_READY before RTR, STREAM_CLOSED otherwise.  Only the
 * first NAK of a SYNC goes (*nak_sent): one packet must not make many
 * (spec 16.4); the requester SYNCs the other streams again.
 */
static void mroce_sync_entry(struct mroce_conn *conn, struct sk_buff *skb,
			     const __be32 *e, struct sk_buff_head *q,
			     bool *nak_sent)
{
	struct mroce_nak_info n = {
		.req = ntohl(e[0]) & MROCE_QPN_MASK,
		.resp = ntohl(e[1]) & MROCE_QPN_MASK,
		.ssn = ntohl(e[2]),
		.code = MROCE_NAK_STREAM_CLOSED,
	};
	struct mroce_qp *qp = mroce_qp_get(conn->mdev, n.resp);
	enum ib_qp_state state;

	lockdep_assert_held(&conn->lock);

	if (qp && qp->ibqp.qp_type == IB_QPT_RC &&
	    qp->attr.dest_qp_num == n.req) {
		state = READ_ONCE(qp->state);
		if (state < IB_QPS_RTR) {
			n.code = MROCE_NAK_NOT_READY;
			n.param = READ_ONCE(mroce_not_ready_wait_us);
		} else if (state != IB_QPS_ERR && qp->stream.conn == conn) {
			qp->stream.sr_sync = true;
			mroce_sr_pending_add(conn, qp);
			n.completed = qp->stream.completed_ssn;
			n.code = mroce_seq_diff(n.ssn, n.completed) > 1 ?
				 MROCE_NAK_SEQUENCE : 0;
		}
	}
	if (qp)
		mroce_qp_put(qp);
	if (!n.code)
		return;
	if (*nak_sent) {
		mroce_count(conn->mdev, DROP_RATE_LIMITED);
		return;
	}
	*nak_sent = true;
	mroce_nak_send(conn, skb, &n, q);
}

/* A SYNC from the peer: report the streams it names (MRC-LOSS-015). */
void mroce_rx_sync(struct mroce_conn *conn, struct sk_buff *skb,
		   struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const u8 *syx = (const u8 *)(bth + 1);
	const __be32 *e = (const __be32 *)(syx + 4);
	bool nak_sent = false;
	u32 n, i;

	lockdep_assert_held(&conn->lock);

	/* The count is read only once the packet is known to hold it. */
	n = bth->hdr_len * 4 >= sizeof(*bth) + 4 ? syx[0] : 0;
	if (!n || n > MROCE_SYNC_MAX || bth->payload_len ||
	    bth->hdr_len * 4 != sizeof(*bth) + 4 + 12 * n ||
	    bth->path_id >= MROCE_MAX_RX_PATHS) {
		mroce_count(conn->mdev, DROP_BAD_HEADER);
		return;
	}
	mroce_count(conn->mdev, SYNCS_RCVD);
	for (i = 0; i < n; i++, e += 3)
		mroce_sync_entry(conn, skb, e, q, &nak_sent);
	mroce_send_ack(conn, skb, NULL, q);
}
