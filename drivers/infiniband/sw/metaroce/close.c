// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Closing (spec 6.5.4, 6.6): STREAM_CLOSE, which tells the peer at once
 * that a stream failed or is gone, so that it stops sending and its
 * requests fail at the retry budget even while the connection is busy,
 * and CONN_CLOSE, which reclaims an idle connection.
 */
#include "close.h"
#include "conn.h"
#include "lifecycle.h"
#include "net.h"
#include "path.h"
#include "pkt.h"
#include "rc_req.h"
#include "rc_resp.h"
#include "stream.h"
#include "verbs.h"

/*
 * Send qp's one STREAM_CLOSE (MRC-CONN-034, 036): SX with the QPNs and our
 * Completed SSN; SCX with the reason and the fatal NAK we sent, if that is
 * what failed the stream.  Sequenced without a QP reference: the QP may
 * be destroyed before it is acknowledged.  conn->lock held.
 */
void mroce_stream_close(struct mroce_conn *conn, struct mroce_qp *qp,
			u8 reason, struct sk_buff_head *q)
{
	struct mroce_stream *st = &qp->stream;
	struct mroce_txrec rec = {};

	lockdep_assert_held(&conn->lock);

	if (st->close_sent)
		return;
	st->close_sent = true;
	if (conn->state != MROCE_CONN_ESTABLISHED || !conn->tx.npaths ||
	    conn->life.half_open)
		return;		/* the peer cannot know the stream yet */
	rec.type = MROCE_T_STREAM_CLOSE;
	rec.flags = MROCE_F_LAST;
	rec.dqpn = qp->attr.dest_qp_num;
	rec.sqpn = qp->ibqp.qp_num;
	rec.ssn = st->completed_ssn;
	rec.rkey = (u32)reason << 24;
	if (reason == MROCE_SC_ERROR && st->fatal_code) {
		rec.rkey |= (u32)st->fatal_code << 16 | (u32)st->fatal_detail << 8;
		rec.inv_rkey = st->fatal_ssn;
	}
	mroce_path_send(conn, &rec, q);
	mroce_count(conn->mdev, STREAM_CLOSES_SENT);
}

/* The STREAM_CLOSE header rules (spec 5.5.1, 5.5.15, 5.7). */
bool mroce_stream_close_hdr_ok(const struct mroce_bth *bth)
{
	const struct mroce_sx *sx = (const struct mroce_sx *)(bth + 1);
	const struct mroce_scx *scx = (const struct mroce_scx *)(sx + 1);

	if (bth->payload_len || !(ntohs(bth->flags) & MROCE_F_LAST) ||
	    sx->msg_len || sx->offset || sx->msn ||
	    ntohl(sx->segsh_dqpn) >> 28)
		return false;
	if (scx->reason < MROCE_SC_DESTROYED || scx->reason > MROCE_SC_ERROR)
		return false;
	/* A fatal NAK code (spec 13.1), or none with no SSN. */
	if (!scx->nak_code)
		return !scx->detail && !scx->failed_ssn;
	return scx->reason == MROCE_SC_ERROR &&
	       scx->nak_code >= MROCE_NAK_REMOTE_ACCESS &&
	       scx->nak_code <= MROCE_NAK_REMOTE_OP;
}

/*
 * Is the STREAM_CLOSE with SSN ssn for qp's stream as it is now attached
 * (MRC-CONN-057)?  The SSN, the peer's Completed SSN of our requests, lies
 * from the one before our first (sq_psn - 1) to our newest, and there are
 * such SSNs only once the QP reached RTS.  Any other is a copy the peer
 * sent for an earlier incarnation of the pair, resent after a loss or
 * late, that must not close this one.
 */
static bool mroce_stream_close_current(const struct mroce_qp *qp, u32 ssn)
{
	const struct mroce_stream *st = &qp->stream;

	return st->req_live &&
	       mroce_seq_diff(ssn, qp->attr.sq_psn - 1) >= 0 &&
	       mroce_seq_diff(ssn, st->next_ssn - 1) <= 0;
}

/*
 * A STREAM_CLOSE for qp's attached stream (MRC-CONN-037): what the peer
 * completed completes; the fatal NAK it carries fails its request; if
 * anything is left, the oldest request fails with IB_WC_RETRY_EXC_ERR and
 * the QP moves to ERROR; the stream is detached.  One of an earlier
 * incarnation is ignored, as for a stream not attached (MRC-CONN-038).
 * conn->lock held.
 */
void mroce_rx_stream_close(struct mroce_conn *conn, struct mroce_qp *qp,
			   struct sk_buff *skb)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_sx *sx = (const struct mroce_sx *)(bth + 1);
	const struct mroce_scx *scx = (const struct mroce_scx *)(sx + 1);

	lockdep_assert_held(&conn->lock);

	if (!mroce_stream_close_current(qp, ntohl(sx->ssn)))
		return;
	mroce_count(conn->mdev, STREAM_CLOSES_RCVD);
	mroce_rc_peer_completed(conn, qp, ntohl(sx->ssn));
	if (scx->nak_code) {
		mroce_rc_fatal_nak(conn, qp, scx->nak_code,
				   ntohl(scx->failed_ssn));
		if (mroce_rc_incomplete(qp))
			mroce_rc_fail_all(conn, qp);
	}
	mroce_stream_gone(conn, qp);
}

/*
 * The peer's stream is gone (a STREAM_CLOSE, NAK STREAM_CLOSED): nothing
 * more is sent on it, and the stream is detached.  What is left, or posted
 * later, fails with IB_WC_RETRY_EXC_ERR once the retry budget has passed
 * from now, when an InfiniBand requester would give up on a vanished
 * responder (MRC-CONN-037): failing it sooner would overtake completions
 * that the peer made on its other streams before it closed this one, and
 * which are still on their way.  conn->lock held.
 */
void mroce_stream_gone(struct mroce_conn *conn, struct mroce_qp *qp)
{
	struct mroce_stream *st = &qp->stream;

	lockdep_assert_held(&conn->lock);

	if (qp->ibqp.srq && READ_ONCE(qp->state) == IB_QPS_ERR)
		mroce_srq_flush_bound(conn, qp);
	st->close_sent = true;	/* nothing to tell a closed peer stream */
	st->peer_closed = true;
	st->gone_at = jiffies +
		      usecs_to_jiffies(mroce_rc_retry_budget_us(qp)) + 1;
	mroce_stream_unlink(conn, qp);
	if (mroce_rc_incomplete(qp))
		mroce_qp_kick_at(qp, st->gone_at);
}

/* Send CONN_CLOSE with op (spec 5.5.14); reason 0, idle.  conn->lock held. */
void mroce_conn_close_send(struct mroce_conn *conn, u8 op,
			   struct sk_buff_head *q)
{
	struct mroce_ccx *ccx;
	struct sk_buff *skb;

	lockdep_assert_held(&conn->lock);

	skb = mroce_conn_alloc_pkt(conn, MROCE_T_CONN_CLOSE, sizeof(*ccx), 0);
	if (!skb)
		return;
	ccx = (struct mroce_ccx *)(skb->data + sizeof(struct mroce_bth));
	ccx->op = op;
	__skb_queue_tail(q, skb);
}

/* Is anything we sent on conn still unresolved at path level? */
static bool mroce_conn_unresolved(struct mroce_conn *conn)
{
	int i;

	for (i = 0; i < conn->tx.npaths; i++)
		if (conn->tx.paths[i]->live)
			return true;
	return !list_empty(&conn->tx.retxq);
}

/* A CONN_CLOSE from the peer (C11 to C14).  conn->lock held. */
void mroce_rx_conn_close(struct mroce_conn *conn, struct sk_buff *skb,
			 struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_ccx *ccx = (const struct mroce_ccx *)(bth + 1);

	lockdep_assert_held(&conn->lock);

	if (bth->hdr_len * 4 != sizeof(*bth) + sizeof(*ccx) ||
	    bth->payload_len || ccx->op < MROCE_CC_REQUEST ||
	    ccx->op > MROCE_CC_REFUSE) {
		mroce_count(conn->mdev, DROP_BAD_HEADER);
		return;
	}
	switch (ccx->op) {
	case MROCE_CC_REQUEST:
		if (conn->streams.count || mroce_conn_unresolved(conn)) {
			mroce_conn_close_send(conn, MROCE_CC_REFUSE, q);
			return;
		}
		mroce_conn_close_send(conn, MROCE_CC_ACCEPT, q);
		break;
	case MROCE_CC_ACCEPT:
		if (conn->state != MROCE_CONN_CLOSING)
			return;
		break;
	default:
		if (conn->state == MROCE_CONN_CLOSING) {
			conn->state = MROCE_CONN_ESTABLISHED;	/* C12 */
			conn->life.close_at = 0;
			mroce_conn_idle_check(conn);
		}
		return;
	}
	mroce_count(conn->mdev, CONN_CLOSED);
	mroce_conn_tombstone(conn);
}
