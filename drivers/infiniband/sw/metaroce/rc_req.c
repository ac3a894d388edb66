// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The requester side of a stream (spec 10, 11.3): RC work requests get a
 * Stream Sequence Number, are cut into self-describing segments and sent on
 * the connection's path; they complete, in order, when the responder's
 * Completed SSN covers them (SEND, WRITE) or their response is in (READ,
 * ATOMIC).
 */
#include <linux/jiffies.h>
#include <linux/slab.h>

#include "close.h"
#include "conn.h"
#include "conn_tx.h"
#include "lifecycle.h"
#include "mr.h"
#include "path.h"
#include "pkt.h"
#include "rc_req.h"
#include "rc_resp.h"
#include "rdctx.h"
#include "rxpath.h"
#include "segwin.h"
#include "stream.h"
#include "sync.h"
#include "tunables.h"
#include "verbs.h"

static struct mroce_send_wqe *mroce_shadow(struct mroce_qp *qp, u32 idx)
{
	return &qp->sq.shadow[idx & qp->sq.ring.mask];
}

static bool mroce_wqe_consumes_recv(enum ib_wr_opcode op)
{
	return op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM ||
	       op == IB_WR_SEND_WITH_INV || op == IB_WR_RDMA_WRITE_WITH_IMM;
}

static bool mroce_wqe_has_response(enum ib_wr_opcode op)
{
	return op == IB_WR_RDMA_READ || op == IB_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_WR_ATOMIC_FETCH_AND_ADD;
}

static u8 mroce_wqe_type(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_SEND_WITH_IMM:
		return MROCE_T_SEND_IMM;
	case IB_WR_SEND_WITH_INV:
		return MROCE_T_SEND_INV;
	case IB_WR_RDMA_WRITE:
		return MROCE_T_WRITE;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return MROCE_T_WRITE_IMM;
	case IB_WR_RDMA_READ:
		return MROCE_T_READ_REQ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return MROCE_T_ATOMIC_CS;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return MROCE_T_ATOMIC_FA;
	default:
		return MROCE_T_SEND;
	}
}

/* The requester starts at the QP's sq_psn with nothing in flight. */
void mroce_rc_requester_start(struct mroce_qp *qp)
{
	struct mroce_stream *st = &qp->stream;

	st->next_ssn = qp->attr.sq_psn;
	st->peer_completed = qp->attr.sq_psn - 1;
	st->started_ssn = st->peer_completed;
	st->send_idx = qp->sq.fetch;
}

/* A QP moved to RTR (attach) or RTS: (re)start both halves of its stream. */
void mroce_rc_stream_reset(struct mroce_qp *qp)
{
	struct mroce_stream *st = &qp->stream;

	mroce_rc_requester_start(qp);
	st->req_live = false;		/* sq_psn comes with RTS */
	st->next_msn = 0;
	st->send_off = 0;
	st->rnr_until = 0;
	st->rnr_ssn = st->next_ssn - 1;
	st->rnr_left = qp->attr.rnr_retry;
	st->nr_first = 0;
	st->retry_left = qp->attr.retry_cnt;
	st->credit_mode = false;
	mroce_segwin_start(&st->req_win, st->next_ssn - 1);	/* none */
	st->completed_ssn = qp->attr.rq_psn - 1;
	mroce_segwin_start(&st->resp_win, st->completed_ssn);
	st->rnr_nak_ssn = st->completed_ssn;
	st->rnr_nak_until = 0;
	st->recv_msn = 0;
	mroce_rdctx_reset(st);
}

/*
 * Messages of st in flight: started and not known complete (MRC-ORD-013).
 * conn->tx.msgs_out sums this over the connection's streams; every change of
 * started_ssn or peer_completed goes through mroce_msgs_account().
 */
u32 mroce_msgs_out(const struct mroce_stream *st)
{
	s32 d = mroce_seq_diff(st->started_ssn, st->peer_completed);

	return d > 0 ? d : 0;
}

static void mroce_msgs_account(struct mroce_conn *conn,
			       const struct mroce_stream *st, u32 before)
{
	conn->tx.msgs_out = conn->tx.msgs_out - before + mroce_msgs_out(st);
}

static void mroce_wait(struct mroce_conn *conn, struct mroce_qp *qp)
{
	mroce_stream_wait(&qp->stream, &conn->streams.wait);
}

/* Complete, in order, every WQE that is done (spec 11.3). */
static void mroce_rc_complete_ready(struct mroce_conn *conn,
				    struct mroce_qp *qp)
{
	struct mroce_stream *st = &qp->stream;
	struct mroce_wq *sq = &qp->sq;
	struct mroce_send_wqe *wqe;
	enum ib_wc_status status;
	bool done;

	/* In the error state the send worker flushes what is left. */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		return;
	while (sq->ring.cons != st->send_idx) {
		wqe = mroce_shadow(qp, sq->ring.cons);
		status = wqe->status != IB_WC_SUCCESS ? wqe->status :
							wqe->rc_status;
		if (status != IB_WC_SUCCESS) {
			mroce_sq_complete(qp, wqe, status);
			mroce_qp_to_error(qp);
			return;
		}
		if (mroce_opcode_local(wqe->opcode))
			done = true;	/* executed when it was reached */
		else if (mroce_wqe_has_response(wqe->opcode))
			done = wqe->resp_done;
		else
			done = mroce_seq_diff(wqe->ssn, st->peer_completed) <= 0;
		if (!done)
			return;
		mroce_sq_complete(qp, wqe, IB_WC_SUCCESS);
	}
}

/*
 * The WQE with SSN ssn among those taken into the stream and not completed
 * (whether or not all their packets went out yet), or NULL.  One look-up,
 * not a walk: mroce_rc_fetch() files each WQE's index under its SSN.
 */
static struct mroce_send_wqe *mroce_find_ssn(struct mroce_qp *qp, u32 ssn)
{
	u32 idx = mroce_shadow(qp, ssn)->ssn_idx;
	struct mroce_send_wqe *wqe;

	if (idx - qp->sq.ring.cons >= qp->sq.fetch - qp->sq.ring.cons)
		return NULL;
	wqe = mroce_shadow(qp, idx);
	/* A local operation has no SSN of its own. */
	if (wqe->ssn != ssn || mroce_opcode_local(wqe->opcode))
		return NULL;
	return wqe;
}

static void mroce_rc_fail_wqe(struct mroce_conn *conn, struct mroce_qp *qp,
			      struct mroce_send_wqe *wqe,
			      enum ib_wc_status status)
{
	if (wqe->rc_status == IB_WC_SUCCESS)
		wqe->rc_status = status;
	mroce_rc_complete_ready(conn, qp);
}

void mroce_rc_fail(struct mroce_conn *conn, struct mroce_qp *qp, u32 ssn,
		   enum ib_wc_status status)
{
	struct mroce_send_wqe *wqe = mroce_find_ssn(qp, ssn);

	if (!wqe)
		return;		/* a responder's packet, or already done */
	mroce_rc_fail_wqe(conn, qp, wqe, status);
}

/* Is the content of rec still wanted (not completed meanwhile)? */
bool mroce_rc_still_needed(struct mroce_conn *conn,
			   const struct mroce_txrec *rec)
{
	struct mroce_qp *qp = rec->qp;
	struct mroce_send_wqe *wqe;

	if (!qp)
		return true;	/* STREAM_CLOSE: until acknowledged */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		return false;
	if (rec->type == MROCE_T_READ_RESP || rec->type == MROCE_T_ATOMIC_RESP)
		return true;
	if (mroce_seq_diff(rec->ssn, qp->stream.peer_completed) <= 0)
		return false;
	wqe = mroce_shadow(qp, rec->wqe_idx);
	return wqe->ssn == rec->ssn && !mroce_opcode_local(wqe->opcode) &&
	       !wqe->resp_done;
}

/* Payload bytes of rec, read now from their source. */
int mroce_rc_build_payload(struct mroce_conn *conn,
			   const struct mroce_txrec *rec, void *buf)
{
	struct mroce_qp *qp = rec->qp;
	struct mroce_send_wqe *wqe;

	if (rec->type == MROCE_T_READ_RESP)
		return mroce_rkey_copy(qp, rec->src_rkey,
				       rec->src_va + rec->offset, buf,
				       rec->plen, IB_ACCESS_REMOTE_READ, false) ?
		       -EACCES : 0;
	wqe = mroce_shadow(qp, rec->wqe_idx);
	if (wqe->ssn != rec->ssn || mroce_opcode_local(wqe->opcode))
		return -ESTALE;
	if (wqe->send_flags & IB_SEND_INLINE) {
		memcpy(buf, (u8 *)wqe->sge + rec->offset, rec->plen);
		return 0;
	}
	return mroce_copy_sgl(qp, wqe->sge, wqe->num_sge, rec->offset, buf,
			      rec->plen, false);
}

static u8 mroce_seg_shift(struct mroce_conn *conn, struct mroce_qp *qp)
{
	u8 shift = conn->cx.css_shift;

	/* path_mtu: IB_MTU_256 (1) is segment shift 0. */
	if (qp->attr.path_mtu)
		shift = min_t(u8, shift, qp->attr.path_mtu - 1);
	return shift;
}

/* Take the next posted WQE into the stream: SSN, MSN, local checks. */
static struct mroce_send_wqe *mroce_rc_fetch(struct mroce_qp *qp)
{
	struct mroce_stream *st = &qp->stream;
	struct mroce_send_wqe *wqe = mroce_sq_fetch(qp);
	int access;

	if (!wqe)
		return NULL;
	wqe->resp_bytes = 0;
	wqe->resp_done = false;
	wqe->rc_status = IB_WC_SUCCESS;
	if (mroce_opcode_local(wqe->opcode)) {
		/* No message: not an SSN (find_ssn skips it). */
		wqe->ssn = st->next_ssn - 1;
		wqe->msn = 0;
		return wqe;
	}
	wqe->ssn = st->next_ssn++;
	mroce_shadow(qp, wqe->ssn)->ssn_idx = qp->sq.fetch - 1;
	wqe->msn = mroce_wqe_consumes_recv(wqe->opcode) ? st->next_msn++ : 0;
	if (wqe->status != IB_WC_SUCCESS)
		return wqe;
	if (wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    wqe->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) {
		if (wqe->length < 8)
			wqe->status = IB_WC_LOC_LEN_ERR;
		wqe->length = 8;
	}
	if (wqe->send_flags & IB_SEND_INLINE)
		return wqe;
	access = mroce_wqe_has_response(wqe->opcode) ? IB_ACCESS_LOCAL_WRITE : 0;
	if (wqe->status == IB_WC_SUCCESS &&
	    mroce_check_sgl(qp, wqe->sge, wqe->num_sge, 0, wqe->length,
			    access))
		wqe->status = IB_WC_LOC_PROT_ERR;
	return wqe;
}

/*
 * Are at least limit READ and ATOMIC requests of qp sent and still waiting
 * for a response?  The walk stops at the limit, not at the end of the SQ.
 */
static bool mroce_responses_due(struct mroce_qp *qp, u32 limit)
{
	u32 idx, n = 0;

	if (!limit)
		return true;
	for (idx = qp->sq.ring.cons; idx != qp->stream.send_idx; idx++) {
		struct mroce_send_wqe *w = mroce_shadow(qp, idx);

		if (mroce_wqe_has_response(w->opcode) && !w->resp_done &&
		    w->status == IB_WC_SUCCESS && w->rc_status == IB_WC_SUCCESS &&
		    ++n >= limit)
			return true;
	}
	return false;
}

/*
 * Can the READ or ATOMIC wqe never go?  Not with max_rd_atomic 0 (none may
 * be in flight, MRC-PLC-020), nor an atomic to a peer without the ATOMIC
 * capability (MRC-PLC-028): it fails locally.
 */
static bool mroce_response_refused(struct mroce_conn *conn,
				   struct mroce_qp *qp,
				   struct mroce_send_wqe *wqe)
{
	if (!mroce_wqe_has_response(wqe->opcode))
		return false;
	if (!qp->attr.max_rd_atomic)
		return true;
	return wqe->opcode != IB_WR_RDMA_READ &&
	       conn->state == MROCE_CONN_ESTABLISHED && !conn->cx.peer_atomic;
}

/*
 * Must wqe wait for responses to earlier requests?  A fenced one waits
 * for all of them (MRC-ORD-011); a READ or ATOMIC while max_rd_atomic are
 * in flight (MRC-PLC-020).
 */
static bool mroce_held_back(struct mroce_qp *qp, struct mroce_send_wqe *wqe)
{
	if (wqe->send_flags & IB_SEND_FENCE)
		return mroce_responses_due(qp, 1);
	return mroce_wqe_has_response(wqe->opcode) &&
	       mroce_responses_due(qp, qp->attr.max_rd_atomic);
}

/*
 * Must wqe, which consumes a receive, wait for credit (MRC-ORD-016)?  Not
 * while the peer sends no CREDIT records, nor within the MSN Limit.  Past
 * it, one message may go as a probe when nothing else of the stream is in
 * flight and no credit came for rto_min_us; else the stream waits for a
 * record, or for that time.
 */
static bool mroce_credit_wait(struct mroce_conn *conn, struct mroce_qp *qp,
			      struct mroce_send_wqe *wqe)
{
	struct mroce_stream *st = &qp->stream;
	ktime_t probe_at;

	if (!st->credit_mode || mroce_seq_diff(wqe->msn, st->msn_limit) <= 0)
		return false;
	probe_at = ktime_add_us(st->credit_at, READ_ONCE(mroce_rto_min_us));
	if (qp->sq.ring.cons == st->send_idx &&
	    !ktime_before(ktime_get(), probe_at)) {
		st->credit_at = ktime_get();
		return false;
	}
	mroce_count(conn->mdev, CREDIT_WAITS);
	mroce_wait(conn, qp);
	/*
	 * Past probe_at, the stream's own messages in flight hold the probe
	 * back, and their acknowledgment runs the waiters again.  A timer
	 * at probe_at would come back at once, and again, on this CPU,
	 * without ever letting that acknowledgment in.
	 */
	if (ktime_before(ktime_get(), probe_at))
		mroce_conn_wake_at(conn, probe_at);
	return true;
}

/*
 * Work requests one push may take.  Local operations and failed WQEs need
 * no window, so a user who keeps the SQ full of them would otherwise hold
 * us here, bottom halves off, for ever: past the budget the send worker
 * goes on later.
 */
#define MROCE_PUSH_BUDGET	256

/*
 * A local operation (bind, invalidation, fast registration), in order with
 * the requests around it (MRC-VRB-011): every earlier one is segmented.  A
 * fenced one waits until every earlier one is complete: false then.
 */
static bool mroce_rc_local_wqe(struct mroce_conn *conn, struct mroce_qp *qp,
			       struct mroce_send_wqe *wqe)
{
	struct mroce_stream *st = &qp->stream;

	if ((wqe->send_flags & IB_SEND_FENCE) &&
	    qp->sq.ring.cons != st->send_idx) {
		mroce_wait(conn, qp);
		return false;
	}
	wqe->rc_status = mroce_local_op(qp, wqe);
	st->send_idx++;
	st->send_off = 0;
	mroce_rc_complete_ready(conn, qp);
	return true;
}

/* What every packet of wqe's message carries (spec 5.5). */
static void mroce_rc_wqe_rec(struct mroce_conn *conn, struct mroce_qp *qp,
			     struct mroce_send_wqe *wqe,
			     struct mroce_txrec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->qp = qp;
	rec->type = mroce_wqe_type(wqe->opcode);
	rec->segshift = mroce_seg_shift(conn, qp);
	/* Its READ_RESPs must use it (MRC-PLC-022). */
	wqe->resp_shift = rec->segshift;
	rec->dqpn = qp->attr.dest_qp_num;
	rec->ssn = wqe->ssn;
	rec->msn = wqe->msn;
	rec->msg_len = wqe->length;
	rec->va = wqe->remote_addr;
	rec->rkey = wqe->rkey;
	rec->imm = wqe->imm_data;
	rec->inv_rkey = wqe->invalidate_rkey;
	rec->swap_add = wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
			wqe->swap : wqe->compare_add;
	rec->compare = wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
		       wqe->compare_add : 0;
	rec->wqe_idx = qp->stream.send_idx;
	if ((wqe->send_flags & IB_SEND_SOLICITED) &&
	    (mroce_wqe_consumes_recv(wqe->opcode)))
		rec->flags |= MROCE_F_SE;
}

/*
 * Send wqe's message from its send_off on, while the paths and the
 * message's segment window take it.  False if it must wait for room.
 */
static bool mroce_rc_segment(struct mroce_conn *conn, struct mroce_qp *qp,
			     struct mroce_send_wqe *wqe,
			     struct mroce_txrec *rec, struct sk_buff_head *q)
{
	struct mroce_stream *st = &qp->stream;
	u32 seg = 256U << rec->segshift;

	if (!st->send_off)
		mroce_segwin_start(&st->req_win, wqe->ssn);
	do {
		if (!mroce_path_has_room(conn) ||
		    !mroce_segwin_open(conn, &st->req_win,
				       st->send_off >> (8 + rec->segshift))) {
			mroce_wait(conn, qp);
			return false;
		}
		if (!st->send_off &&
		    mroce_seq_diff(wqe->ssn, st->started_ssn) > 0) {
			u32 before = mroce_msgs_out(st);

			st->started_ssn = wqe->ssn;
			mroce_msgs_account(conn, st, before);
		}
		rec->offset = st->send_off;
		rec->flags &= ~MROCE_F_LAST;
		if (mroce_wqe_has_response(wqe->opcode)) {
			rec->plen = 0;
			rec->offset = 0;
			st->send_off = wqe->length;
		} else {
			rec->plen = min(seg, wqe->length - st->send_off);
			st->send_off += rec->plen;
		}
		if (st->send_off >= wqe->length)
			rec->flags |= MROCE_F_LAST;
		mroce_path_send(conn, rec, q);
	} while (st->send_off < wqe->length);
	return true;
}

/* Send what the window allows of qp's posted work.  conn->lock held. */
static void mroce_rc_push(struct mroce_conn *conn, struct mroce_qp *qp,
			  struct sk_buff_head *q)
{
	struct mroce_stream *st = &qp->stream;
	u32 budget = MROCE_PUSH_BUDGET;
	struct mroce_send_wqe *wqe;
	struct mroce_txrec rec;

	lockdep_assert_held(&conn->lock);

	while (READ_ONCE(qp->state) == IB_QPS_RTS) {
		if (!budget--) {
			mroce_qp_kick(qp);
			return;
		}
		if (mroce_stream_paused(st)) {
			mroce_wait(conn, qp);
			mroce_conn_wake_at(conn, st->rnr_until);
			return;
		}
		if (st->send_idx == qp->sq.fetch && !mroce_rc_fetch(qp)) {
			if (mroce_sq_idle(qp))
				return;	/* the next post rings the doorbell */
			continue;
		}
		wqe = mroce_shadow(qp, st->send_idx);
		if (wqe->status != IB_WC_SUCCESS) {
			st->send_idx++;
			st->send_off = 0;
			mroce_rc_complete_ready(conn, qp);
			continue;
		}
		if (mroce_opcode_local(wqe->opcode)) {
			if (!mroce_rc_local_wqe(conn, qp, wqe))
				return;
			continue;
		}
		if (!st->send_off && mroce_response_refused(conn, qp, wqe)) {
			wqe->status = IB_WC_LOC_QP_OP_ERR;
			continue;
		}
		if (!st->send_off && mroce_held_back(qp, wqe))
			return;		/* the response completion kicks us */
		if (!st->send_off && mroce_wqe_consumes_recv(wqe->opcode) &&
		    mroce_credit_wait(conn, qp, wqe))
			return;

		mroce_rc_wqe_rec(conn, qp, wqe, &rec);
		/* No more messages in flight than the peer has slots. */
		if (!st->send_off && conn->tx.msgs_out >= conn->cx.peer_slots) {
			mroce_count(conn->mdev, MSG_SLOTS_WAITS);
			mroce_stream_wait(st, &conn->streams.slot_waiters);
			return;
		}
		if (!mroce_rc_segment(conn, qp, wqe, &rec, q))
			return;
		st->send_idx++;
		st->send_off = 0;
	}
}

/* The SSN of the oldest request not completed yet. */
u32 mroce_rc_oldest_ssn(struct mroce_qp *qp)
{
	return mroce_shadow(qp, qp->sq.ring.cons)->ssn;
}

/* Send again from wqe's message on, from its start (an RNR resend). */
static void mroce_rc_rewind(struct mroce_qp *qp, struct mroce_send_wqe *wqe)
{
	struct mroce_stream *st = &qp->stream;
	u32 idx = wqe - qp->sq.shadow;

	st->send_idx = qp->sq.ring.cons +
		       ((idx - qp->sq.ring.cons) & qp->sq.ring.mask);
	st->send_off = 0;
}

/*
 * The retry timer expired while the oldest request is the message an RNR
 * or NOT_READY NAK was last for: send it again from its start, as after
 * the wait (MRC-PLC-040).  The responder sends one RNR NAK per wait time
 * and drops the message's other packets meanwhile; a resend that reaches
 * it within the wait of a late NAK for the previous copy is dropped
 * without a NAK, and if the receive was posted in between, the rest of
 * the message is placed and nothing would ever send the dropped part
 * again.  True if it rewound.  conn->lock held.
 */
bool mroce_rc_rnr_resend(struct mroce_conn *conn, struct mroce_qp *qp)
{
	struct mroce_stream *st = &qp->stream;
	struct mroce_send_wqe *wqe;

	lockdep_assert_held(&conn->lock);

	if (qp->sq.ring.cons == st->send_idx ||
	    st->rnr_ssn != mroce_rc_oldest_ssn(qp))
		return false;
	wqe = mroce_find_ssn(qp, st->rnr_ssn);
	if (!wqe || !mroce_wqe_consumes_recv(wqe->opcode))
		return false;
	mroce_rc_rewind(qp, wqe);
	mroce_wait(conn, qp);
	return true;
}

/*
 * Run the streams waiting for the connection, window room or a timer,
 * oldest first.  Once the connection has no room left, the rest keep
 * their place: trying each of them would only queue it again, and with
 * thousands of streams waiting that made every ACK cost a walk over all
 * of them.  No room means packets are outstanding or pacing armed the
 * timer, so an ACK, a loss or the timer runs this again.
 */
void mroce_rc_kick_waiters(struct mroce_conn *conn, struct sk_buff_head *q)
{
	struct mroce_stream *st, *tmp;
	struct mroce_qp *qp;
	u32 free_slots;
	LIST_HEAD(run);

	lockdep_assert_held(&conn->lock);

	list_splice_init(&conn->streams.wait, &run);
	/* As many slot waiters as there are free slots, oldest first. */
	free_slots = conn->tx.msgs_out < conn->cx.peer_slots ?
		     conn->cx.peer_slots - conn->tx.msgs_out : 0;
	while (free_slots-- && !list_empty(&conn->streams.slot_waiters))
		list_move_tail(conn->streams.slot_waiters.next, &run);
	list_for_each_entry_safe(st, tmp, &run, wait_entry) {
		if (!mroce_path_has_room(conn)) {
			list_splice(&run, &conn->streams.wait);
			return;
		}
		list_del_init(&st->wait_entry);
		qp = container_of(st, struct mroce_qp, stream);
		mroce_rc_resp_resume(conn, qp, q);
		mroce_rc_push(conn, qp, q);
		mroce_sync_arm(conn, qp, false);
	}
}

/*
 * Push qp's posted work on conn, its connection, or wait for the connection.
 * Any context that may take conn->lock with bottom halves off.
 */
static void mroce_rc_send_on(struct mroce_conn *conn, struct mroce_qp *qp)
{
	struct sk_buff_head q;

	__skb_queue_head_init(&q);
	mroce_conn_lock_bh(conn);
	if (qp->stream.conn != conn) {
		/* Detached meanwhile: the worker runs again for that. */
		mroce_qp_kick(qp);
	} else if (conn->state == MROCE_CONN_ESTABLISHED) {
		/*
		 * As for the worker: until the stream runs dry (and asks
		 * for the doorbell again) or waits, posters need not ring.
		 * Not in the error state: the worker's flush asked for the
		 * doorbell last, and must be the one that did.
		 */
		if (READ_ONCE(qp->state) == IB_QPS_RTS)
			WRITE_ONCE(qp->sq.ring.hdr->flags, 0);
		mroce_rc_push(conn, qp, &q);
		mroce_sync_arm(conn, qp, false);
	} else {
		mroce_wait(conn, qp);
	}
	mroce_conn_tx_commit(conn, &q);
	mroce_conn_unlock_bh(conn);
	mroce_conn_xmit(conn);
}

/*
 * The send worker's RC step: push the QP's posted work.  A stream that the
 * peer closed, or whose connection failed, has nobody to send to: what is
 * posted fails, once the retry budget has passed since the peer's stream
 * went (MRC-CONN-037, 050).  Worker only.
 */
void mroce_rc_send(struct mroce_qp *qp)
{
	struct mroce_conn *conn = mroce_stream_conn_get(qp);
	struct mroce_stream *st = &qp->stream;

	if (!conn) {
		if (st->peer_closed && st->gone_at &&
		    time_before(jiffies, st->gone_at))
			mroce_qp_kick_at(qp, st->gone_at);
		else if (st->peer_closed)
			mroce_rc_fail_all(NULL, qp);
		return;
	}
	mroce_rc_send_on(conn, qp);
	mroce_conn_put(conn);
}

/*
 * The doorbell of an RC QP in RTS whose stream is attached: push the posted
 * work from the poster's own context, with no worker hop before the first
 * packet leaves.  False if the worker must run instead: the stream is not
 * attached.  Not with interrupts off.
 */
bool mroce_rc_doorbell(struct mroce_qp *qp)
{
	struct mroce_conn *conn = mroce_stream_conn_get(qp);

	if (!conn)
		return false;
	mroce_rc_send_on(conn, qp);
	mroce_conn_put(conn);
	/*
	 * The QP may have left RTS since the poster looked: then the worker
	 * must flush what was posted.  The barrier orders the poster's ring
	 * write before this look, as the error path's xchg orders its state
	 * write before its worker reads the ring: one of us sees the other.
	 */
	smp_mb();
	if (READ_ONCE(qp->state) != IB_QPS_RTS)
		mroce_qp_kick(qp);
	return true;
}

/* Has qp a send work request that is not complete? */
bool mroce_rc_incomplete(struct mroce_qp *qp)
{
	return qp->sq.ring.cons != qp->sq.fetch || mroce_sq_posted(&qp->sq);
}

/*
 * The peer is gone: the oldest outstanding request fails with
 * IB_WC_RETRY_EXC_ERR and the QP moves to ERROR (spec 6.7.4).  Nothing
 * happens if no request is outstanding.  conn->lock held, or the stream
 * detached (conn NULL) and the caller its send worker.
 */
void mroce_rc_fail_all(struct mroce_conn *conn, struct mroce_qp *qp)
{
	struct mroce_stream *st = &qp->stream;

	if (qp->sq.ring.cons == st->send_idx) {
		if (st->send_idx == qp->sq.fetch && !mroce_rc_fetch(qp))
			return;
		st->send_idx++;
		st->send_off = 0;
	}
	mroce_rc_fail_wqe(conn, qp, mroce_shadow(qp, qp->sq.ring.cons),
			  IB_WC_RETRY_EXC_ERR);
}

/* The peer's Completed SSN for qp's requests is completed (spec 11.3). */
void mroce_rc_peer_completed(struct mroce_conn *conn, struct mroce_qp *qp,
			     u32 completed)
{
	struct mroce_stream *st = &qp->stream;
	u32 before = mroce_msgs_out(st);

	if (mroce_seq_diff(completed, st->peer_completed) > 0 &&
	    mroce_seq_diff(completed, st->next_ssn - 1) <= 0) {
		st->peer_completed = completed;
		mroce_msgs_account(conn, st, before);
		conn->life.progress_at = mroce_conn_now(conn);
		st->rnr_left = qp->attr.rnr_retry;
		st->nr_first = 0;
		mroce_rc_complete_ready(conn, qp);
		mroce_sync_arm(conn, qp, true);
	}
}

/*
 * The receive credit of a Stream Record (spec 11.5.2).  The MSN Limit
 * never goes back, so an older record, reordered, cannot lower it.  The
 * caller runs the waiting streams after the ACK's records.
 */
static void mroce_rc_rx_credit(struct mroce_stream *st, u8 flags, u32 limit)
{
	if (flags & MROCE_SRF_UNLIMITED) {
		st->credit_mode = false;
		return;
	}
	if (!(flags & MROCE_SRF_CREDIT))
		return;
	if (!st->credit_mode || mroce_seq_diff(limit, st->msn_limit) > 0) {
		st->msn_limit = limit;
		st->credit_at = ktime_get();
	}
	st->credit_mode = true;
}

/* A Stream Record from the responder (spec 8, 11.3). */
void mroce_rc_rx_sr(struct mroce_conn *conn, const struct mroce_sr *sr)
{
	u32 qpn = ntohl(sr->flags_req_qpn) & MROCE_QPN_MASK;
	u32 completed = ntohl(sr->completed_ssn);
	struct mroce_stream *st;
	struct mroce_qp *qp;

	qp = mroce_qp_get(conn->mdev, qpn);
	if (!qp)
		return;
	st = &qp->stream;
	if (qp->ibqp.qp_type == IB_QPT_RC && st->conn == conn &&
	    qp->attr.dest_qp_num == (ntohl(sr->resp_qpn) & MROCE_QPN_MASK)) {
		mroce_rc_peer_completed(conn, qp, completed);
		mroce_rc_rx_credit(st, ntohl(sr->flags_req_qpn) >> 24,
				   ntohl(sr->msn_limit));
	}
	mroce_qp_put(qp);
}

static enum ib_wc_status mroce_nak_status(u8 code)
{
	switch (code) {
	case MROCE_NAK_REMOTE_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	case MROCE_NAK_INVALID_REQ:
	case MROCE_NAK_LENGTH:
		return IB_WC_REM_INV_REQ_ERR;
	case MROCE_NAK_REMOTE_OP:
		return IB_WC_REM_OP_ERR;
	default:
		return IB_WC_RETRY_EXC_ERR;
	}
}

/* A NAK for one of our requests (spec 13). */
#define MROCE_NOT_READY_MAX_US	10000

/*
 * How long a requester waits for a peer stream that does not answer
 * before its oldest request fails, as the retry timer would make it:
 * 4.096 us * 2^timeout * (retry_cnt + 1), or conn_dead_timeout_s with
 * timeout 0 (MRC-ERR-010, MRC-CONN-037).
 */
u64 mroce_rc_retry_budget_us(const struct mroce_qp *qp)
{
	if (!qp->attr.timeout)
		return 1000000ULL * READ_ONCE(mroce_conn_dead_timeout_s);
	return div_u64(mroce_retry_ns(qp) * (qp->attr.retry_cnt + 1), 1000);
}

/*
 * NAK NOT_READY (MRC-ERR-010): the peer's QP is not in RTR yet, so nothing
 * of the stream was taken.  Stop, wait param us, doubled for each
 * consecutive NOT_READY up to 10 ms, then send every request that is not
 * complete again.  Once the budget has passed since the first of the
 * run, the oldest request fails with RETRY_EXC_ERR.  conn->lock held.
 */
static void mroce_rc_not_ready(struct mroce_conn *conn, struct mroce_qp *qp,
			       u32 param)
{
	struct mroce_stream *st = &qp->stream;
	ktime_t now = ktime_get();
	u64 wait_us;

	lockdep_assert_held(&conn->lock);

	if (mroce_stream_paused(st))
		return;			/* already paused */
	if (!st->nr_first) {
		st->nr_first = now;
		st->nr_count = 0;
	} else if (ktime_us_delta(now, st->nr_first) >
		   mroce_rc_retry_budget_us(qp)) {
		mroce_count(conn->mdev, RETRY_EXCEEDED);
		mroce_rc_fail(conn, qp, mroce_rc_oldest_ssn(qp),
			      IB_WC_RETRY_EXC_ERR);
		return;
	}
	wait_us = min_t(u64, (u64)min(param, MROCE_NOT_READY_MAX_US) <<
			     min_t(u8, st->nr_count, 16),
			MROCE_NOT_READY_MAX_US);
	st->nr_count++;
	st->send_idx = qp->sq.ring.cons;
	st->send_off = 0;
	st->rnr_ssn = mroce_rc_oldest_ssn(qp);
	st->rnr_until = ktime_add_us(now, wait_us);
	mroce_wait(conn, qp);
	mroce_conn_wake_at(conn, st->rnr_until);
}

void mroce_rc_rx_nak(struct mroce_conn *conn, const struct mroce_nkx *nkx)
{
	u32 qpn = ntohl(nkx->code_req_qpn) & MROCE_QPN_MASK;
	u8 code = ntohl(nkx->code_req_qpn) >> 24;
	u32 ssn = ntohl(nkx->ssn);
	struct mroce_sr sr = {
		.flags_req_qpn = htonl(qpn),
		.resp_qpn = nkx->detail_resp_qpn & htonl(MROCE_QPN_MASK),
		.completed_ssn = nkx->completed_ssn,
	};
	struct mroce_send_wqe *wqe;
	struct mroce_stream *st;
	struct mroce_qp *qp;

	/* Its Completed SSN first, as a Stream Record's (MRC-ERR-006). */
	mroce_rc_rx_sr(conn, &sr);
	qp = mroce_qp_get(conn->mdev, qpn);
	if (!qp)
		return;
	st = &qp->stream;
	if (qp->ibqp.qp_type != IB_QPT_RC || st->conn != conn ||
	    qp->attr.dest_qp_num != (ntohl(nkx->detail_resp_qpn) & MROCE_QPN_MASK))
		goto out;
	wqe = mroce_find_ssn(qp, ssn);
	if (!wqe)
		goto out;
	if (code == MROCE_NAK_NOT_READY) {
		mroce_count(conn->mdev, NAK_NOT_READY_RCVD);
		mroce_rc_not_ready(conn, qp, ntohl(nkx->param));
		goto out;
	}
	if (code == MROCE_NAK_RNR) {
		mroce_count(conn->mdev, NAK_RNR_RCVD);
		/* Already waiting for this message: ignore (MRC-PLC-038). */
		if (ssn == st->rnr_ssn && mroce_stream_paused(st))
			goto out;
		if (qp->attr.rnr_retry != 7 && !st->rnr_left--) {
			mroce_count(conn->mdev, RNR_RETRY_EXCEEDED);
			mroce_rc_fail(conn, qp, ssn, IB_WC_RNR_RETRY_EXC_ERR);
			goto out;
		}
		mroce_count(conn->mdev, RNR_RETRIES);
		/* Start again from that message after the wait (spec 10.7). */
		mroce_rc_rewind(qp, wqe);
		st->rnr_ssn = ssn;
		/*
		 * At least a jiffy, as when the pause was kept in jiffies: a
		 * shorter one turns an RNR into a storm of resends and NAKs
		 * that the retry timer takes for a dead peer.
		 */
		st->rnr_until = ktime_add_us(ktime_get(),
					     clamp(ntohl(nkx->param),
						   jiffies_to_usecs(1), 1000000U));
		/*
		 * The peer answered: the retry timer starts again, and so does
		 * its count (retry_cnt counts expiries in a row without an
		 * answer).  Else a resend the peer did not NAK again (it NAKs
		 * once per wait) costs a retry, and a long wait for a receive
		 * ends in RETRY_EXC_ERR although rnr_retry is 7.
		 */
		st->retries = 0;
		mroce_retry_arm(conn, qp);
		mroce_wait(conn, qp);
		mroce_conn_wake_at(conn, st->rnr_until);
		goto out;
	}
	if (code == MROCE_NAK_STREAM_CLOSED) {
		mroce_count(conn->mdev, NAK_CLOSED_RCVD);
		mroce_stream_gone(conn, qp);
		goto out;
	}
	switch (code) {
	case MROCE_NAK_REMOTE_ACCESS:
		mroce_count(conn->mdev, NAK_ACCESS_RCVD);
		break;
	case MROCE_NAK_INVALID_REQ:
		mroce_count(conn->mdev, NAK_INV_REQ_RCVD);
		break;
	case MROCE_NAK_SEQUENCE:
		mroce_count(conn->mdev, NAK_SEQ_RCVD);
		break;
	default:
		mroce_count(conn->mdev, NAK_OP_ERR_RCVD);
		break;
	}
	mroce_rc_fail(conn, qp, ssn, mroce_nak_status(code));
out:
	mroce_qp_put(qp);
}

/* The fatal NAK a STREAM_CLOSE carries (MRC-CONN-037 step 2). */
void mroce_rc_fatal_nak(struct mroce_conn *conn, struct mroce_qp *qp, u8 code,
			u32 ssn)
{
	mroce_rc_fail(conn, qp, ssn, mroce_nak_status(code));
}

/*
 * A READ or ATOMIC got its whole response: a fenced WQE behind it may go
 * now.  No ACK need follow to run the waiters, so kick the send worker
 * when there is work it held back.
 */
static void mroce_rc_unfence(struct mroce_conn *conn, struct mroce_qp *qp)
{
	mroce_wait(conn, qp);
	if (qp->stream.send_idx != qp->sq.fetch)
		mroce_qp_kick(qp);
}

/*
 * The last response to request bth->ssn, from a peer that advertised
 * CACK: the peer's Completed SSN reached the request when it sent it
 * (MRC-ACK-023), as a Stream Record would have said.
 */
static void mroce_rc_implied_completed(struct mroce_conn *conn,
				       struct mroce_qp *qp,
				       const struct mroce_bth *bth)
{
	const struct mroce_sx *sx = (const struct mroce_sx *)(bth + 1);

	if (conn->cx.peer_cack && ntohs(bth->flags) & MROCE_F_LAST)
		mroce_rc_peer_completed(conn, qp, ntohl(sx->ssn));
}

/*
 * A READ_RESP or ATOMIC_RESP for one of our requests (spec 10.4, 10.5).
 * False if it could not be taken for want of memory: not committed, the
 * peer sends it again (7.3.2).
 */
bool mroce_rc_rx_response(struct mroce_conn *conn, struct mroce_qp *qp,
			  struct sk_buff *skb)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_sx *sx = (const struct mroce_sx *)(bth + 1);
	u32 plen = ntohs(bth->payload_len), off = ntohl(sx->offset);
	u8 shift = ntohl(sx->segsh_dqpn) >> 28;
	struct mroce_send_wqe *wqe;
	u32 nseg, seg;
	u64 orig;

	wqe = mroce_find_ssn(qp, ntohl(sx->ssn));
	if (!wqe || wqe->resp_done || wqe->rc_status != IB_WC_SUCCESS) {
		mroce_stream_duplicate(conn);
		return true;
	}
	if (bth->type == MROCE_T_ATOMIC_RESP) {
		if (wqe->opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
		    wqe->opcode != IB_WR_ATOMIC_FETCH_AND_ADD)
			return true;
		orig = be64_to_cpup((const __be64 *)(sx + 1));
		if (mroce_copy_sgl(qp, wqe->sge, wqe->num_sge, 0, &orig, 8, true))
			wqe->rc_status = IB_WC_LOC_PROT_ERR;
		wqe->resp_done = true;
		mroce_rc_implied_completed(conn, qp, bth);
		mroce_rc_complete_ready(conn, qp);
		mroce_rc_unfence(conn, qp);
		return true;
	}
	/*
	 * The segment size is the request's, never the response's: the
	 * bitmap below is sized from it.  (The header rules already hold
	 * Offset + Payload Length within Message Length.)
	 */
	if (wqe->opcode != IB_WR_RDMA_READ || shift != wqe->resp_shift ||
	    ntohl(sx->msg_len) != wqe->length) {
		mroce_count(conn->mdev, DROP_BAD_HEADER);
		return true;
	}
	nseg = max(1U, DIV_ROUND_UP(wqe->length, 256U << shift));
	seg = off >> (8 + shift);
	if (!wqe->resp_segs && nseg <= BITS_PER_LONG) {
		wqe->resp_segs_small = 0;
		wqe->resp_segs = &wqe->resp_segs_small;
	} else if (!wqe->resp_segs) {
		wqe->resp_segs = bitmap_zalloc(nseg, GFP_ATOMIC);
		if (!wqe->resp_segs)
			return false;	/* not placed: the response is resent */
	}
	if (seg >= nseg || test_bit(seg, wqe->resp_segs)) {
		mroce_stream_duplicate(conn);
		return true;
	}
	mroce_rc_implied_completed(conn, qp, bth);
	if (plen && mroce_copy_sgl(qp, wqe->sge, wqe->num_sge, off,
				   mroce_rx_payload(skb), plen, true)) {
		wqe->rc_status = IB_WC_LOC_PROT_ERR;
		wqe->resp_done = true;
	} else {
		set_bit(seg, wqe->resp_segs);
		wqe->resp_bytes += plen;
		if (wqe->resp_bytes == wqe->length)
			wqe->resp_done = true;
	}
	mroce_rc_complete_ready(conn, qp);
	mroce_sync_arm(conn, qp, true);
	if (wqe->resp_done)
		mroce_rc_unfence(conn, qp);
	return true;
}
