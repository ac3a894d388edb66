// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder side of a stream (spec 10, 11.1, 11.2): every request
 * packet is checked against its whole message, placed where it says, and
 * counted in the message's tracker; messages complete in SSN order, and
 * READ and ATOMIC run once every earlier message is complete.
 */
#include <linux/slab.h>

#include "conn.h"
#include "conn_tx.h"
#include "lifecycle.h"
#include "mr.h"
#include "path.h"
#include "pkt.h"
#include "rc_resp.h"
#include "rdctx.h"
#include "rxpath.h"
#include "segwin.h"
#include "stream.h"
#include "sync.h"
#include "tunables.h"
#include "verbs.h"

static unsigned long mroce_tkey(u32 qpn, u32 ssn)
{
	return (unsigned long)qpn << 32 | ssn;
}

static bool mroce_is_recv_type(u8 type)
{
	return mroce_ptype_is(type, MROCE_PT_RECV);
}

/* A request a READ_RESP or ATOMIC_RESP answers. */
static bool mroce_is_resp_type(u8 type)
{
	return mroce_ptype_is(type, MROCE_PT_RESP);
}

static u32 mroce_rq_posted(struct mroce_qp *qp)
{
	return mroce_ring_produced(&qp->rq.ring, qp->rq.ring.cons);
}

void mroce_rc_fill_sr(struct mroce_qp *qp, struct mroce_sr *sr)
{
	struct mroce_stream *st = &qp->stream;
	u8 flags = qp->ibqp.srq ? MROCE_SRF_UNLIMITED : MROCE_SRF_CREDIT;

	if (st->sr_sync)
		flags |= MROCE_SRF_SYNC_REPLY;	/* once, answering a SYNC */
	st->sr_sync = false;

	sr->flags_req_qpn = htonl((u32)flags << 24 | qp->attr.dest_qp_num);
	sr->resp_qpn = htonl(qp->ibqp.qp_num);
	sr->completed_ssn = htonl(st->completed_ssn);
	/* With an SRQ (MRC-ACK-013) the limit is the message slots'. */
	sr->msn_limit = htonl(st->recv_msn - 1 + (qp->ibqp.srq ?
						  st->conn->cx.rx_slots :
						  mroce_rq_posted(qp)));
	if (!qp->ibqp.srq && !mroce_rq_posted(qp) && !st->credit_blocked) {
		/* The requester is blocked: hear of the next receive. */
		st->credit_blocked = true;
		WRITE_ONCE(qp->rq.ring.hdr->flags, METAROCE_RING_F_NEED_WAKEUP);
	}
}

/*
 * Receives were posted to qp.  If the last record told the requester it
 * had none, report the new credit at once (MRC-ORD-017), in an ACK of our
 * path its latest request came on (MRC-ACK-012).
 */
void mroce_rc_credit(struct mroce_qp *qp)
{
	struct mroce_stream *st = &qp->stream;
	struct mroce_conn *conn;
	struct sk_buff_head q;

	if (!READ_ONCE(st->credit_blocked))
		return;
	/* A RESET or STREAM_CLOSE may free the connection meanwhile. */
	conn = mroce_stream_conn_get(qp);
	if (!conn)
		return;
	__skb_queue_head_init(&q);
	mroce_conn_lock_bh(conn);
	if (st->conn == conn && st->credit_blocked && mroce_rq_posted(qp)) {
		st->credit_blocked = false;
		if (READ_ONCE(qp->state) != IB_QPS_ERR)
			WRITE_ONCE(qp->rq.ring.hdr->flags, 0);
		mroce_sr_pending_add(conn, qp);
		mroce_ack_unsolicited(conn, st->rx_path, qp, &q);
	}
	mroce_conn_tx_commit(conn, &q);
	mroce_conn_unlock_bh(conn);
	mroce_conn_xmit(conn);
	mroce_conn_put(conn);
}

/* Send the NAK n as a reply to in (spec 5.5.9, 13.1). */
void mroce_nak_send(struct mroce_conn *conn, const struct sk_buff *in,
		    const struct mroce_nak_info *n, struct sk_buff_head *q)
{
	const struct mroce_bth *ib = (const struct mroce_bth *)in->data;
	struct mroce_nkx *nkx;
	struct mroce_bth *bth;
	struct sk_buff *skb;
	u8 code = n->code;

	lockdep_assert_held(&conn->lock);

	conn->rx.ack_now = true;	/* MRC-ACK-006 rule 7 */
	/* Per connection at most nak_rate a second (spec 16.4). */
	if (mroce_rate_full(&conn->life.nak_rl, READ_ONCE(mroce_nak_rate))) {
		mroce_count(conn->mdev, DROP_RATE_LIMITED);
		return;
	}
	conn->life.nak_rl.n++;
	skb = mroce_conn_alloc_pkt(conn, MROCE_T_NAK, sizeof(*nkx), 0);
	if (!skb)
		return;
	bth = (struct mroce_bth *)skb->data;
	bth->psn = htonl(conn->rx.ack_seq++);
	bth->path_id = ib->path_id;
	nkx = (struct mroce_nkx *)(bth + 1);
	nkx->code_req_qpn = htonl((u32)code << 24 | (n->req & MROCE_QPN_MASK));
	nkx->detail_resp_qpn = htonl((u32)n->detail << 24 |
				     (n->resp & MROCE_QPN_MASK));
	nkx->ssn = htonl(n->ssn);
	nkx->msn = htonl(n->msn);
	nkx->param = htonl(n->param);
	nkx->completed_ssn = htonl(n->completed);
	mroce_reply_to(skb, in);
	__skb_queue_tail(q, skb);
	switch (code) {
	case MROCE_NAK_RNR:
		mroce_count(conn->mdev, NAK_RNR_SENT);
		break;
	case MROCE_NAK_REMOTE_ACCESS:
		mroce_count(conn->mdev, NAK_ACCESS_SENT);
		break;
	case MROCE_NAK_INVALID_REQ:
		mroce_count(conn->mdev, NAK_INV_REQ_SENT);
		break;
	case MROCE_NAK_LENGTH:
		mroce_count(conn->mdev, NAK_LENGTH_SENT);
		break;
	case MROCE_NAK_SEQUENCE:
		mroce_count(conn->mdev, NAK_SEQ_SENT);
		break;
	case MROCE_NAK_STREAM_CLOSED:
		mroce_count(conn->mdev, NAK_CLOSED_SENT);
		break;
	case MROCE_NAK_NOT_READY:
		mroce_count(conn->mdev, NAK_NOT_READY_SENT);
		break;
	default:
		mroce_count(conn->mdev, NAK_OP_ERR_SENT);
		break;
	}
}

/*
 * NAK the request in (spec 13.1): its QPNs, SSN and, if it consumes a
 * receive, MSN; the Completed SSN of its stream, if it has one here.
 */
void mroce_send_nak(struct mroce_conn *conn, const struct sk_buff *in,
		    u8 code, u8 detail, u32 param, struct sk_buff_head *q)
{
	const struct mroce_bth *ib = (const struct mroce_bth *)in->data;
	const struct mroce_sx *sx = (const struct mroce_sx *)(ib + 1);
	struct mroce_nak_info n = {
		.code = code, .detail = detail, .param = param,
		.req = ntohl(sx->sqpn) & MROCE_QPN_MASK,
		.resp = ntohl(sx->segsh_dqpn) & MROCE_QPN_MASK,
		.ssn = ntohl(sx->ssn),
		.msn = mroce_is_recv_type(ib->type) ? ntohl(sx->msn) : 0,
	};
	struct mroce_qp *qp = mroce_qp_get(conn->mdev, n.resp);

	lockdep_assert_held(&conn->lock);

	if (qp) {
		if (qp->ibqp.qp_type == IB_QPT_RC && qp->stream.conn == conn)
			n.completed = qp->stream.completed_ssn;
		mroce_qp_put(qp);
	}
	mroce_nak_send(conn, in, &n, q);
}

static void mroce_tracker_free(struct mroce_conn *conn, u32 qpn,
			       struct mroce_tracker *t)
{
	xa_erase(&conn->rx.trackers, mroce_tkey(qpn, t->ssn));
	conn->rx.ntrackers--;
	if (!t->rwqe && !conn->rx.spare_tracker)
		conn->rx.spare_tracker = t;
	else
		kfree(t);
}

void mroce_trackers_drop_qp(struct mroce_conn *conn, u32 qpn)
{
	struct mroce_tracker *t;
	unsigned long idx;

	xa_for_each_range(&conn->rx.trackers, idx, t, mroce_tkey(qpn, 0),
			  mroce_tkey(qpn, U32_MAX))
		mroce_tracker_free(conn, qpn, t);
}

/* The IB RNR timer encoding (min_rnr_timer) in microseconds. */
static u32 mroce_rnr_us(u8 timer)
{
	static const u32 us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
		960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
		30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
		491520
	};

	return us[timer & 31];
}

/* The receive WQE that message msn lands in, copied, or false. */
static bool mroce_recv_for_msn(struct mroce_qp *qp, u32 msn,
			       struct mroce_recv_wqe *wqe)
{
	struct mroce_wq *rq = &qp->rq;
	const struct metaroce_recv_wqe *src;
	u32 k = msn - qp->stream.recv_msn;

	if (k >= mroce_rq_posted(qp))
		return false;
	src = mroce_ring_slot(&rq->ring, rq->ring.cons + k);
	wqe->wr_id = READ_ONCE(src->wr_id);
	wqe->num_sge = min(READ_ONCE(src->num_sge), rq->max_sge);
	memcpy(wqe->sge, src->sge, wqe->num_sge * sizeof(struct metaroce_sge));
	return true;
}

/*
 * SRQ: complete the receive WQE bound to t's message with status now (an
 * error, or a flush) on the QP's receive CQ.
 */
static void mroce_srq_complete(struct mroce_qp *qp, struct mroce_tracker *t,
			       enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_id = t->rwqe->wr_id,
		.status = status,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
		.src_qp = qp->attr.dest_qp_num,
		.port_num = MROCE_PORT,
	};

	t->bound = false;
	mroce_cq_complete(to_mcq(qp->ibqp.recv_cq), &wc, false);
}

/*
 * An SRQ QP in the error state: flush, in SSN order, the receive WQEs its
 * messages took from the SRQ.  Caller holds conn->lock.
 */
void mroce_srq_flush_bound(struct mroce_conn *conn, struct mroce_qp *qp)
{
	u32 qpn = qp->ibqp.qp_num, from = qp->stream.completed_ssn + 1;
	struct mroce_tracker *t;
	unsigned long idx;

	lockdep_assert_held(&conn->lock);

	xa_for_each_range(&conn->rx.trackers, idx, t, mroce_tkey(qpn, from),
			  mroce_tkey(qpn, U32_MAX))
		if (t->bound)
			mroce_srq_complete(qp, t, IB_WC_WR_FLUSH_ERR);
	if (!from)
		return;
	xa_for_each_range(&conn->rx.trackers, idx, t, mroce_tkey(qpn, 0),
			  mroce_tkey(qpn, from - 1))
		if (t->bound)
			mroce_srq_complete(qp, t, IB_WC_WR_FLUSH_ERR);
}

/* Deliver the receive completion of a completed message (spec 11.2). */
static void mroce_deliver_recv(struct mroce_qp *qp, struct mroce_tracker *t)
{
	struct ib_wc wc = {
		.status = IB_WC_SUCCESS,
		.opcode = t->type == MROCE_T_WRITE_IMM ?
			  IB_WC_RECV_RDMA_WITH_IMM : IB_WC_RECV,
		.byte_len = t->msg_len,
		.qp = &qp->ibqp,
		.src_qp = qp->attr.dest_qp_num,
		.port_num = MROCE_PORT,
	};
	unsigned long flags;

	if (t->type == MROCE_T_SEND_IMM || t->type == MROCE_T_WRITE_IMM) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = t->imm;
	} else if (t->type == MROCE_T_SEND_INV) {
		/*
		 * Invalidated before the completion (MRC-PLC-018).  Checked
		 * at the first packet; if its consumer invalidated or freed
		 * it since, it is invalid all the same.
		 */
		mroce_invalidate(qp, t->inv_rkey, true);
		wc.wc_flags |= IB_WC_WITH_INVALIDATE;
		wc.ex.invalidate_rkey = t->inv_rkey;
	}
	if (qp->ibqp.srq) {
		/* Bound when its first packet was placed. */
		if (t->bound) {
			t->bound = false;
			wc.wr_id = t->rwqe->wr_id;
			mroce_cq_complete(to_mcq(qp->ibqp.recv_cq), &wc,
					  t->flags & MROCE_F_SE);
		}
		qp->stream.recv_msn++;
		return;
	}
	spin_lock_irqsave(&qp->rq.lock, flags);
	if (mroce_rq_peek(qp, &qp->rq_scratch)) {
		wc.wr_id = qp->rq_scratch.wr_id;
		mroce_rq_complete(qp, &wc, t->flags & MROCE_F_SE);
	}
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	qp->stream.recv_msn++;
}

/*
 * Queue READ_RESP packets of t while the path and segment windows have
 * room; true when all are queued.
 */
static bool mroce_read_respond(struct mroce_conn *conn, struct mroce_qp *qp,
			       struct mroce_tracker *t, struct sk_buff_head *q)
{
	u32 seg = 256U << t->segshift;
	struct mroce_txrec rec = {
		.qp = qp,
		.type = MROCE_T_READ_RESP,
		.segshift = t->segshift,
		.dqpn = qp->attr.dest_qp_num,
		.ssn = t->ssn,
		.msg_len = t->msg_len,
		.src_va = t->va,
		.src_rkey = t->rkey,
	};

	lockdep_assert_held(&conn->lock);

	do {
		if (!mroce_path_has_room(conn) ||
		    !mroce_segwin_open(conn, &qp->stream.resp_win,
				       t->seg_base >> (8 + t->segshift)))
			return false;
		rec.offset = t->seg_base;	/* bytes sent so far */
		rec.plen = min(seg, t->msg_len - rec.offset);
		rec.flags = rec.offset + rec.plen == t->msg_len ? MROCE_F_LAST : 0;
		mroce_path_send(conn, &rec, q);
		t->seg_base += rec.plen;
	} while (t->seg_base < t->msg_len);
	return true;
}

static void mroce_atomic_respond(struct mroce_conn *conn, struct mroce_qp *qp,
				 u32 ssn, u64 orig, struct sk_buff_head *q)
{
	struct mroce_txrec rec = {
		.qp = qp,
		.type = MROCE_T_ATOMIC_RESP,
		.flags = MROCE_F_LAST,
		.dqpn = qp->attr.dest_qp_num,
		.ssn = ssn,
		.msg_len = 8,
		.swap_add = orig,
	};

	lockdep_assert_held(&conn->lock);

	mroce_path_send(conn, &rec, q);
}

/*
 * Execute a READ or ATOMIC whose turn it is.  Returns false if it has to
 * wait for window room; *answered tells whether a response went.
 */
static bool mroce_execute(struct mroce_conn *conn, struct mroce_qp *qp,
			  struct mroce_tracker *t, struct sk_buff_head *q,
			  bool *answered)
{
	struct mroce_stream *st = &qp->stream;
	u64 orig = 0;
	int slot;

	lockdep_assert_held(&conn->lock);

	*answered = true;
	if (t->type == MROCE_T_READ_REQ) {
		if (!t->executed) {
			t->executed = true;
			t->seg_base = 0;
			mroce_segwin_start(&st->resp_win, t->ssn);
		}
		return mroce_read_respond(conn, qp, t, q);
	}
	if (!mroce_path_has_room(conn))
		return false;
	if (mroce_rkey_atomic(qp, t->rkey, t->va, t->type == MROCE_T_ATOMIC_CS,
			      t->swap_add, t->compare, &orig)) {
		/* Checked on arrival; MR gone since: no reply. */
		mroce_rdctx_delivered(st, t->ssn);
		*answered = false;
		return true;
	}
	slot = mroce_rdctx_atomic_slot(&st->rd, t->ssn);
	st->rd.atomic_ssn[slot] = t->ssn;
	st->rd.atomic_orig[slot] = orig;
	mroce_atomic_respond(conn, qp, t->ssn, orig, q);
	return true;
}

/*
 * Advance the Completed SSN over every finished message (spec 11.2), and
 * report it in a Stream Record, unless only READs and ATOMICs advanced it
 * and their responses went to a peer that takes them for the record
 * (MRC-ACK-023).
 */
static void mroce_rc_advance(struct mroce_conn *conn, struct mroce_qp *qp,
			     struct sk_buff_head *q)
{
	struct mroce_stream *st = &qp->stream;
	bool implied = conn->cx.peer_cack, answered;
	u32 qpn = qp->ibqp.qp_num;
	u32 before = st->completed_ssn;
	struct mroce_tracker *t;

	lockdep_assert_held(&conn->lock);

	/*
	 * A QP in the error state executes and delivers nothing more: its
	 * receive WQEs were completed in error or flushed (mroce_rq_fail()).
	 */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		return;
	for (;;) {
		t = xa_load(&conn->rx.trackers,
			    mroce_tkey(qpn, st->completed_ssn + 1));
		if (!t || !t->complete || t->failed)
			break;
		if (!mroce_is_resp_type(t->type)) {
			implied = false;
		} else if (!mroce_execute(conn, qp, t, q, &answered)) {
			mroce_stream_wait(st, &conn->streams.wait);
			break;
		} else if (!answered) {
			implied = false;
		}
		if (mroce_is_recv_type(t->type))
			mroce_deliver_recv(qp, t);
		st->completed_ssn++;
		mroce_tracker_free(conn, qpn, t);
	}
	if (st->completed_ssn != before && !implied)
		mroce_sr_pending_add(conn, qp);
}

void mroce_rc_resp_resume(struct mroce_conn *conn, struct mroce_qp *qp,
			  struct sk_buff_head *q)
{
	lockdep_assert_held(&conn->lock);

	mroce_rc_advance(conn, qp, q);
}

/* A new tracker for the message of skb, its first packet to arrive. */
static struct mroce_tracker *mroce_tracker_new(struct mroce_conn *conn,
					       struct mroce_qp *qp,
					       const struct sk_buff *skb)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_sx *sx = (const struct mroce_sx *)(bth + 1);
	size_t size = sizeof(struct mroce_tracker);
	u32 ssn = ntohl(sx->ssn), qpn = qp->ibqp.qp_num;
	const void *ext = sx + 1;
	struct mroce_tracker *t;

	if (conn->rx.ntrackers >= conn->cx.rx_slots)
		return ERR_PTR(-ENOBUFS);
	/* With an SRQ, the receive WQE it takes lives with the tracker. */
	if (qp->ibqp.srq && mroce_is_recv_type(bth->type))
		size += sizeof(struct mroce_recv_wqe);
	if (size == sizeof(*t) && conn->rx.spare_tracker) {
		t = conn->rx.spare_tracker;
		conn->rx.spare_tracker = NULL;
		memset(t, 0, size);
	} else {
		t = kzalloc(size, GFP_ATOMIC);
		if (!t)
			return ERR_PTR(-ENOMEM);
	}
	if (size > sizeof(*t))
		t->rwqe = (struct mroce_recv_wqe *)(t + 1);
	t->ssn = ssn;
	t->type = bth->type;
	t->segshift = ntohl(sx->segsh_dqpn) >> 28;
	t->flags = ntohs(bth->flags) & MROCE_F_SE;
	t->msn = ntohl(sx->msn);
	t->msg_len = ntohl(sx->msg_len);
	/* READ_REQ and atomics are one packet whatever their length. */
	if (bth->type == MROCE_T_READ_REQ || bth->type == MROCE_T_ATOMIC_CS ||
	    bth->type == MROCE_T_ATOMIC_FA)
		t->nseg = 1;
	else
		t->nseg = max(1U, DIV_ROUND_UP(t->msg_len, 256U << t->segshift));
	switch (bth->type) {
	case MROCE_T_WRITE:
	case MROCE_T_WRITE_IMM:
	case MROCE_T_READ_REQ: {
		const struct mroce_rx *rx = ext;

		t->va = be64_to_cpu(rx->va);
		t->rkey = ntohl(rx->rkey);
		if (bth->type == MROCE_T_WRITE_IMM)
			t->imm = *(const __be32 *)(rx + 1);
		break;
	}
	case MROCE_T_SEND_IMM:
		t->imm = *(const __be32 *)ext;
		break;
	case MROCE_T_SEND_INV:
		t->inv_rkey = ntohl(*(const __be32 *)ext);
		break;
	case MROCE_T_ATOMIC_CS:
	case MROCE_T_ATOMIC_FA: {
		const struct mroce_atx *atx = ext;

		t->va = be64_to_cpu(atx->va);
		t->rkey = ntohl(atx->rkey);
		t->swap_add = be64_to_cpu(atx->swap_add);
		t->compare = be64_to_cpu(atx->compare);
		break;
	}
	}
	if (xa_insert(&conn->rx.trackers, mroce_tkey(qpn, ssn), t,
		      GFP_ATOMIC)) {
		kfree(t);
		return ERR_PTR(-ENOMEM);
	}
	conn->rx.ntrackers++;
	return t;
}

/* Every packet of a message must agree with its first (spec 10.1.4). */
static bool mroce_tracker_agrees(const struct mroce_tracker *t,
				 const struct sk_buff *skb)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_sx *sx = (const struct mroce_sx *)(bth + 1);
	const struct mroce_rx *rx = (const struct mroce_rx *)(sx + 1);

	if (t->type != bth->type || t->msg_len != ntohl(sx->msg_len) ||
	    t->segshift != ntohl(sx->segsh_dqpn) >> 28 ||
	    t->msn != ntohl(sx->msn) ||
	    t->flags != (ntohs(bth->flags) & MROCE_F_SE))
		return false;
	if (bth->type == MROCE_T_WRITE || bth->type == MROCE_T_WRITE_IMM)
		return t->va == be64_to_cpu(rx->va) && t->rkey == ntohl(rx->rkey);
	return true;
}

/*
 * A fatal condition (spec 13.2): NAK the message; the responder QP moves to
 * the error state, so no later packet of the stream is placed.
 */
static void mroce_fail_msg(struct mroce_conn *conn, struct mroce_qp *qp,
			   struct mroce_tracker *t, const struct sk_buff *skb,
			   u8 code, u8 detail, u32 param,
			   struct sk_buff_head *q)
{
	enum ib_event_type ev = IB_EVENT_QP_FATAL;

	lockdep_assert_held(&conn->lock);

	t->failed = true;
	mroce_send_nak(conn, skb, code, detail, param, q);
	if (!qp->stream.fatal_code) {
		/* Its STREAM_CLOSE carries it (MRC-CONN-034). */
		qp->stream.fatal_code = code;
		qp->stream.fatal_detail = detail;
		qp->stream.fatal_ssn = t->ssn;
		qp->stream.nak_at = ktime_get();
	}
	if (code == MROCE_NAK_REMOTE_ACCESS)
		ev = IB_EVENT_QP_ACCESS_ERR;
	else if (code == MROCE_NAK_INVALID_REQ || code == MROCE_NAK_LENGTH)
		ev = IB_EVENT_QP_REQ_ERR;
	mroce_qp_to_error_event(qp, ev);
}

/*
 * SRQ: bind a receive WQE to t's message when its first packet that needs
 * one arrives (MRC-PLC-012, 014).  0, -EAGAIN if the SRQ is empty (RNR),
 * or -EINVAL if the message failed.
 */
static int mroce_srq_bind(struct mroce_conn *conn, struct mroce_qp *qp,
			  struct mroce_tracker *t, const struct sk_buff *skb,
			  struct sk_buff_head *q)
{
	lockdep_assert_held(&conn->lock);

	if (t->bound)
		return 0;
	if (!t->rwqe || !mroce_srq_take(to_msrq(qp->ibqp.srq), t->rwqe))
		return -EAGAIN;
	t->bound = true;
	if (t->type != MROCE_T_WRITE_IMM &&
	    mroce_sgl_len(t->rwqe->sge, t->rwqe->num_sge) < t->msg_len) {
		mroce_srq_complete(qp, t, IB_WC_LOC_LEN_ERR);
		mroce_fail_msg(conn, qp, t, skb, MROCE_NAK_LENGTH, 0, 0, q);
		return -EINVAL;
	}
	return 0;
}

/* SRQ: place a SEND segment into the bound WQE. */
static bool mroce_place_srq(struct mroce_conn *conn, struct mroce_qp *qp,
			    struct mroce_tracker *t, const struct sk_buff *skb,
			    struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_sx *sx = (const struct mroce_sx *)(bth + 1);
	void *payload = mroce_rx_payload(skb);

	lockdep_assert_held(&conn->lock);

	if (mroce_srq_bind(conn, qp, t, skb, q))
		return false;	/* RNR, or t->failed */
	if (mroce_copy_sgl(qp, t->rwqe->sge, t->rwqe->num_sge,
			   ntohl(sx->offset), payload, ntohs(bth->payload_len),
			   true)) {
		mroce_srq_complete(qp, t, IB_WC_LOC_PROT_ERR);
		mroce_fail_msg(conn, qp, t, skb, MROCE_NAK_REMOTE_OP, 1, 0, q);
		return false;
	}
	return true;
}

/*
 * A SEND failed at its receive WQE, that of message msn: complete the WQE
 * with status (IB_WC_LOC_LEN_ERR: too short; IB_WC_LOC_PROT_ERR: an L_Key
 * or address the WQE may not use), as InfiniBand does, before the QP's
 * error state flushes the rest.  Receive completions keep the order of
 * the WQEs: older ones, whose messages have not been delivered (not
 * complete, or complete behind one that is not: they may arrive after a
 * later one), are flushed first.  Caller holds rq.lock.
 */
static void mroce_rq_fail(struct mroce_qp *qp, u32 msn,
			  enum ib_wc_status status)
{
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
		.src_qp = qp->attr.dest_qp_num,
		.port_num = MROCE_PORT,
	};
	u32 k = msn - qp->stream.recv_msn;

	lockdep_assert_held(&qp->rq.lock);

	if (k >= mroce_rq_posted(qp))
		return;
	while (mroce_rq_peek(qp, &qp->rq_scratch)) {
		wc.wr_id = qp->rq_scratch.wr_id;
		if (!k--)
			wc.status = status;
		mroce_rq_complete(qp, &wc, false);
		qp->stream.recv_msn++;
		if (wc.status == status)
			break;
	}
}

/* Place a WRITE or SEND segment; false if the message failed. */
static bool mroce_place(struct mroce_conn *conn, struct mroce_qp *qp,
			struct mroce_tracker *t, const struct sk_buff *skb,
			struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_sx *sx = (const struct mroce_sx *)(bth + 1);
	void *payload = mroce_rx_payload(skb);
	u32 off = ntohl(sx->offset), plen = ntohs(bth->payload_len);
	struct mroce_recv_wqe *wqe = &qp->rq_scratch;
	unsigned long flags;
	int err;

	lockdep_assert_held(&conn->lock);

	if (qp->ibqp.srq && bth->type != MROCE_T_WRITE) {
		if (bth->type != MROCE_T_WRITE_IMM)
			return mroce_place_srq(conn, qp, t, skb, q);
		/* WRITE_IMM takes its receive before placing (MRC-PLC-009). */
		if (mroce_srq_bind(conn, qp, t, skb, q))
			return false;
	}
	if (bth->type == MROCE_T_WRITE_IMM && !qp->ibqp.srq) {
		/* Its receive must be there before data lands (MRC-PLC-036). */
		spin_lock_irqsave(&qp->rq.lock, flags);
		err = !mroce_recv_for_msn(qp, t->msn, wqe);
		spin_unlock_irqrestore(&qp->rq.lock, flags);
		if (err)
			return false;	/* RNR: handled by the caller */
	}
	if (bth->type == MROCE_T_WRITE || bth->type == MROCE_T_WRITE_IMM) {
		/* A zero-length WRITE names no memory (MRC-PLC-035). */
		err = !t->msg_len ? 0 :
		      mroce_rkey_copy(qp, t->rkey, t->va + off, payload, plen,
				      IB_ACCESS_REMOTE_WRITE, true);
		if (err)
			mroce_fail_msg(conn, qp, t, skb, MROCE_NAK_REMOTE_ACCESS,
				       err, off, q);
		return !err;
	}

	spin_lock_irqsave(&qp->rq.lock, flags);
	if (!mroce_recv_for_msn(qp, t->msn, wqe)) {
		spin_unlock_irqrestore(&qp->rq.lock, flags);
		return false;	/* RNR: handled by the caller */
	}
	if (mroce_sgl_len(wqe->sge, wqe->num_sge) < t->msg_len) {
		mroce_rq_fail(qp, t->msn, IB_WC_LOC_LEN_ERR);
		spin_unlock_irqrestore(&qp->rq.lock, flags);
		mroce_fail_msg(conn, qp, t, skb, MROCE_NAK_LENGTH, 0, 0, q);
		return false;
	}
	err = mroce_copy_sgl(qp, wqe->sge, wqe->num_sge, off, payload, plen,
			     true);
	if (err)
		mroce_rq_fail(qp, t->msn, IB_WC_LOC_PROT_ERR);
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	if (err)
		mroce_fail_msg(conn, qp, t, skb, MROCE_NAK_REMOTE_OP, 1, 0, q);
	return !err;
}

/* The first packet of a message: check the whole target (spec 10.6). */
static bool mroce_check_target(struct mroce_conn *conn, struct mroce_qp *qp,
			       struct mroce_tracker *t,
			       const struct sk_buff *skb,
			       struct sk_buff_head *q)
{
	int access = mroce_ptypes[t->type].access;
	int detail;

	lockdep_assert_held(&conn->lock);

	/* The key a SEND_INV names, before any byte is placed (10.3.4). */
	if (t->type == MROCE_T_SEND_INV && mroce_inv_check(qp, t->inv_rkey)) {
		mroce_fail_msg(conn, qp, t, skb, MROCE_NAK_INVALID_REQ, 6, 0, q);
		return false;
	}
	if (!access)
		return true;
	if ((qp->attr.qp_access_flags & access) != access ||
	    (access != IB_ACCESS_REMOTE_WRITE &&
	     !qp->attr.max_dest_rd_atomic)) {
		mroce_fail_msg(conn, qp, t, skb, MROCE_NAK_INVALID_REQ, 1, 0, q);
		return false;
	}
	/* A zero-length WRITE or READ names no memory (MRC-PLC-035). */
	if (!t->msg_len && access != IB_ACCESS_REMOTE_ATOMIC)
		return true;
	if (access == IB_ACCESS_REMOTE_ATOMIC && (t->va & 7)) {
		mroce_fail_msg(conn, qp, t, skb, MROCE_NAK_INVALID_REQ, 2, 0, q);
		return false;
	}
	detail = mroce_rkey_check(qp, t->rkey, t->va, t->msg_len, access);
	if (detail) {
		/* Parameter: the Offset of the packet that found it (5.5.9). */
		mroce_fail_msg(conn, qp, t, skb, MROCE_NAK_REMOTE_ACCESS, detail,
			       ntohl(((const struct mroce_sx *)(skb->data +
					sizeof(struct mroce_bth)))->offset), q);
		return false;
	}
	return true;
}

/* Packets of the response to t, a READ or ATOMIC request. */
static u32 mroce_response_pkts(const struct mroce_tracker *t)
{
	if (t->type != MROCE_T_READ_REQ)
		return 1;
	return max(1U, DIV_ROUND_UP(t->msg_len, 256U << t->segshift));
}

/*
 * A request for a stream that failed or is not ready: nothing is placed,
 * the packet is committed; the fatal NAK that failed the stream, else
 * STREAM_CLOSED, once per rto_min_us (MRC-CONN-035).
 */
static void mroce_rx_failed_stream(struct mroce_conn *conn,
				   struct mroce_qp *qp,
				   const struct sk_buff *skb,
				   struct sk_buff_head *q)
{
	struct mroce_stream *st = &qp->stream;

	if (st->nak_at && ktime_us_delta(ktime_get(), st->nak_at) <
			  READ_ONCE(mroce_rto_min_us))
		return;
	st->nak_at = ktime_get();
	if (st->fatal_code)
		mroce_send_nak(conn, skb, st->fatal_code, st->fatal_detail, 0,
			       q);
	else
		mroce_send_nak(conn, skb, MROCE_NAK_STREAM_CLOSED, 0, 0, q);
}

/*
 * Is ssn a message not completed yet, within our message slots?  A
 * completed one is a duplicate (an ATOMIC's is answered again from the
 * result cache); one past the slots gets NAK SEQUENCE.
 */
static bool mroce_rx_ssn_new(struct mroce_conn *conn, struct mroce_qp *qp,
			     const struct sk_buff *skb, u32 ssn,
			     struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	struct mroce_stream *st = &qp->stream;
	s32 d = mroce_seq_diff(ssn, st->completed_ssn);
	u32 slot;

	if (d <= 0) {
		mroce_stream_duplicate(conn);
		slot = mroce_rdctx_atomic_slot(&st->rd, ssn);
		if ((bth->type == MROCE_T_ATOMIC_CS ||
		     bth->type == MROCE_T_ATOMIC_FA) &&
		    st->rd.atomic_ssn[slot] == ssn && mroce_path_has_room(conn)) {
			mroce_count(conn->mdev, ATOMIC_REPLAYS);
			mroce_atomic_respond(conn, qp, ssn,
					     st->rd.atomic_orig[slot], q);
		}
		return false;
	}
	if (d > conn->cx.rx_slots) {
		mroce_send_nak(conn, skb, MROCE_NAK_SEQUENCE, 0, 0, q);
		return false;
	}
	return true;
}

/*
 * The tracker of the message skb belongs to, made at its first packet to
 * arrive, with a READ/ATOMIC context if it needs one (MRC-PLC-024), and
 * checked against the packet, the message slots (MRC-PLC-013) and the
 * target.  ERR_PTR(-ENOSPC): refused for lack of resources, not to be
 * committed; NULL: the message failed, the packet is committed.
 */
static struct mroce_tracker *mroce_rx_tracker(struct mroce_conn *conn,
					      struct mroce_qp *qp,
					      struct sk_buff *skb, u32 ssn,
					      struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	struct mroce_rdctx *ctx = NULL;
	struct mroce_tracker *t;
	bool first;

	t = xa_load(&conn->rx.trackers, mroce_tkey(qp->ibqp.qp_num, ssn));
	first = !t;
	if (first && mroce_is_resp_type(bth->type) &&
	    qp->attr.max_dest_rd_atomic) {
		ctx = mroce_rdctx_free(qp);
		if (!ctx) {
			mroce_count(conn->mdev, DROP_NO_RESOURCE);
			return ERR_PTR(-ENOSPC);
		}
	}
	if (first)
		t = mroce_tracker_new(conn, qp, skb);
	if (IS_ERR(t)) {
		mroce_count(conn->mdev, DROP_NO_RESOURCE);
		return ERR_PTR(-ENOSPC);
	}
	if (ctx)
		mroce_rdctx_take(&qp->stream.rd, ctx, ssn,
				 mroce_response_pkts(t));
	if (!first && !mroce_tracker_agrees(t, skb)) {
		mroce_fail_msg(conn, qp, t, skb, MROCE_NAK_INVALID_REQ, 5, 0, q);
		return NULL;
	}
	if (t->failed)
		return NULL;
	if (first && mroce_is_recv_type(t->type) &&
	    (u32)(t->msn - qp->stream.recv_msn) >= conn->cx.rx_slots) {
		mroce_fail_msg(conn, qp, t, skb, MROCE_NAK_INVALID_REQ, 5, 0, q);
		return NULL;
	}
	if (first && !mroce_check_target(conn, qp, t, skb, q))
		return NULL;
	return t;
}

/*
 * Place a SEND's or WRITE's segment.  False if it was not placed: the
 * message failed, or no receive WQE is posted, which gets RNR once per
 * message per wait (MRC-PLC-036), and the requester starts it over.
 */
static bool mroce_rx_place(struct mroce_conn *conn, struct mroce_qp *qp,
			   struct mroce_tracker *t, struct sk_buff *skb,
			   u32 ssn, struct sk_buff_head *q)
{
	struct mroce_stream *st = &qp->stream;
	ktime_t now;
	u32 wait;

	if (mroce_place(conn, qp, t, skb, q))
		return true;
	if (t->failed)
		return false;
	wait = mroce_rnr_us(qp->attr.min_rnr_timer);
	/*
	 * In ktime, as the requester's pause is: in jiffies, a resend after
	 * the whole pause could still fall in the same tick (a late tick
	 * under emulation) and get no NAK.
	 */
	now = ktime_get();
	if (st->rnr_nak_ssn != ssn || !ktime_before(now, st->rnr_nak_until)) {
		mroce_send_nak(conn, skb, MROCE_NAK_RNR, 0, wait, q);
		st->rnr_nak_ssn = ssn;
		st->rnr_nak_until = ktime_add_us(now, wait);
	}
	mroce_tracker_free(conn, qp->ibqp.qp_num, t);
	return false;
}

/* Segment seg_base + rel of t arrived: slide its window (spec 10.1). */
static void mroce_tracker_seg_done(struct mroce_tracker *t, u32 rel)
{
	set_bit(rel, t->segs);
	t->placed++;
	while (test_bit(0, t->segs)) {
		bitmap_shift_right(t->segs, t->segs, 1, MROCE_SEG_WIN);
		t->seg_base++;
	}
	if (t->placed >= t->nseg)
		t->complete = true;
	if (t->type == MROCE_T_READ_REQ) {
		/* seg_base becomes the READ responder's send offset. */
		t->seg_base = 0;
	}
}

/*
 * A request packet for stream qp (spec 10).  False if it was refused for
 * lack of a tracker or beyond the segment window: then it must not be
 * committed at path level (MRC-PLC-002, MRC-PLC-004).
 */
bool mroce_rc_rx_request(struct mroce_conn *conn, struct mroce_qp *qp,
			 struct sk_buff *skb, struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_sx *sx = (const struct mroce_sx *)(bth + 1);
	enum ib_qp_state state = READ_ONCE(qp->state);
	u32 ssn = ntohl(sx->ssn), seg, rel;
	struct mroce_tracker *t;

	lockdep_assert_held(&conn->lock);

	qp->stream.rx_path = bth->path_id;
	if (state < IB_QPS_RTR || state == IB_QPS_ERR) {
		mroce_rx_failed_stream(conn, qp, skb, q);
		return true;
	}
	if (!mroce_rx_ssn_new(conn, qp, skb, ssn, q))
		return true;
	t = mroce_rx_tracker(conn, qp, skb, ssn, q);
	if (IS_ERR(t))
		return false;
	if (!t)
		return true;

	seg = ntohl(sx->offset) >> (8 + t->segshift);
	if (seg < t->seg_base) {
		mroce_stream_duplicate(conn);
		return true;
	}
	/* The window first: segs holds MROCE_SEG_WIN bits, no more. */
	rel = seg - t->seg_base;
	if (rel >= MROCE_SEG_WIN) {
		mroce_count(conn->mdev, DROP_SEG_WINDOW);
		return false;
	}
	if (t->type != MROCE_T_READ_REQ && test_bit(rel, t->segs)) {
		mroce_stream_duplicate(conn);
		return true;
	}
	if ((mroce_is_recv_type(t->type) || t->type == MROCE_T_WRITE) &&
	    !mroce_rx_place(conn, qp, t, skb, ssn, q))
		return true;
	if (seg != t->seg_base)
		mroce_count(conn->mdev, OOO_ARRIVALS);
	mroce_tracker_seg_done(t, rel);
	mroce_rc_advance(conn, qp, q);
	return true;
}
