// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Work queues, kernel side of the rings: decoding send WQEs into the shadow
 * queue, the send worker, receive WQE consumption, completions and flushes.
 * The producer index and every WQE byte may come from userspace: each is
 * checked when copied out, never trusted in place.
 */
#include <linux/slab.h>

#include "close.h"
#include "conn.h"
#include "conn_tx.h"
#include "lifecycle.h"
#include "mr.h"
#include "rc_req.h"
#include "rc_resp.h"
#include "verbs.h"

int mroce_wq_init(struct mroce_wq *wq, u32 max_wr, u32 max_sge,
		  u32 max_inline, bool send)
{
	u32 hdr = send ? sizeof(struct metaroce_send_wqe) :
			 sizeof(struct metaroce_recv_wqe);
	u32 data = max_t(u32, max_sge * sizeof(struct metaroce_sge), max_inline);
	int err;

	spin_lock_init(&wq->lock);
	spin_lock_init(&wq->post_lock);
	wq->max_sge = max_sge;
	wq->max_inline = max_inline;
	err = mroce_ring_init(&wq->ring, max_wr, ALIGN(hdr + data, 16));
	if (err)
		return err;
	wq->max_wr = mroce_ring_slots(&wq->ring);
	wq->fetch = 0;
	wq->shadow = NULL;
	wq->shadow_data = NULL;
	if (!send)
		return 0;

	wq->shadow_stride = ALIGN(data, 16);
	/* Sized by the creator: charged to its memory cgroup. */
	wq->shadow = kvcalloc(wq->max_wr, sizeof(*wq->shadow),
			      GFP_KERNEL_ACCOUNT);
	wq->shadow_data = kvcalloc(wq->max_wr, wq->shadow_stride,
				   GFP_KERNEL_ACCOUNT);
	if (!wq->shadow || !wq->shadow_data) {
		mroce_wq_free(wq);
		return -ENOMEM;
	}
	return 0;
}

/* Memory of wq: its ring, and for a send queue its shadow. */
size_t mroce_wq_bytes(const struct mroce_wq *wq)
{
	size_t bytes = wq->ring.size;

	if (wq->shadow)
		bytes += (size_t)wq->max_wr *
			 (sizeof(*wq->shadow) + wq->shadow_stride);
	return bytes;
}

/* Give up a READ WQE's response segment bitmap. */
void mroce_wqe_free_segs(struct mroce_send_wqe *wqe)
{
	if (wqe->resp_segs != &wqe->resp_segs_small)
		bitmap_free(wqe->resp_segs);
	wqe->resp_segs = NULL;
}

/* Free what shadow WQEs still own: WQEs taken but never completed. */
static void mroce_wq_release_shadow(struct mroce_wq *wq)
{
	u32 i;

	for (i = 0; wq->shadow && i < wq->max_wr; i++)
		mroce_wqe_free_segs(&wq->shadow[i]);
}

void mroce_wq_free(struct mroce_wq *wq)
{
	mroce_wq_release_shadow(wq);
	kvfree(wq->shadow);
	kvfree(wq->shadow_data);
	wq->shadow = NULL;
	wq->shadow_data = NULL;
	mroce_ring_free(&wq->ring);
}

/* Discard every posted WQE without a completion (transition to RESET). */
void mroce_wq_reset(struct mroce_wq *wq)
{
	unsigned long flags;

	spin_lock_irqsave(&wq->lock, flags);
	mroce_wq_release_shadow(wq);
	mroce_ring_reset(&wq->ring);
	wq->fetch = 0;
	spin_unlock_irqrestore(&wq->lock, flags);
}

bool mroce_opcode_ok(enum ib_qp_type type, u32 op)
{
	if (type != IB_QPT_RC)
		return op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM;
	switch (op) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_REG_MR:
	case IB_WR_LOCAL_INV:
	case IB_WR_BIND_MW:
		return true;
	default:
		return false;
	}
}

/* Local operations: executed by the send queue, no packet (spec 15.5). */
bool mroce_opcode_local(u32 op)
{
	return op == IB_WR_REG_MR || op == IB_WR_LOCAL_INV ||
	       op == IB_WR_BIND_MW;
}

/*
 * Who may post op: fast registration is for kernel QPs (a user QP has no
 * fast-registration MR, nor an ib_mr to name), window binding for user QPs
 * (the kernel has no memory window API).
 */
static bool mroce_opcode_allowed(struct mroce_qp *qp, u32 op)
{
	if (!mroce_opcode_ok(qp->ibqp.qp_type, op))
		return false;
	if (op == IB_WR_REG_MR)
		return !qp->ibqp.uobject;
	if (op == IB_WR_BIND_MW)
		return qp->ibqp.uobject;
	return true;
}

static void mroce_decode_bind(const struct metaroce_send_wqe *src,
			      struct mroce_send_wqe *wqe)
{
	struct metaroce_wqe_bind *b = &wqe->bind;

	b->addr = READ_ONCE(src->bind.addr);
	b->length = READ_ONCE(src->bind.length);
	b->mw_rkey = READ_ONCE(src->bind.mw_rkey);
	b->new_rkey = READ_ONCE(src->bind.new_rkey);
	b->mr_lkey = READ_ONCE(src->bind.mr_lkey);
	b->access = READ_ONCE(src->bind.access);
	b->type = READ_ONCE(src->bind.type);
}

/* Check and copy a WQE the poster wrote; sets wqe->status on nonsense. */
static void mroce_decode_send_wqe(struct mroce_qp *qp,
				  const struct metaroce_send_wqe *src,
				  struct mroce_send_wqe *wqe, u8 *data)
{
	struct mroce_wq *sq = &qp->sq;
	u32 n;

	wqe->wr_id = READ_ONCE(src->wr_id);
	wqe->opcode = READ_ONCE(src->opcode);
	wqe->send_flags = READ_ONCE(src->send_flags);
	wqe->num_sge = READ_ONCE(src->num_sge);
	wqe->inline_len = READ_ONCE(src->inline_len);
	wqe->imm_data = (__force __be32)READ_ONCE(src->imm_data);
	wqe->invalidate_rkey = READ_ONCE(src->invalidate_rkey);
	wqe->remote_addr = READ_ONCE(src->remote_addr);
	wqe->rkey = READ_ONCE(src->rkey);
	wqe->ah_num = READ_ONCE(src->ah_num);
	wqe->remote_qpn = READ_ONCE(src->remote_qpn) & 0xffffff;
	wqe->remote_qkey = READ_ONCE(src->remote_qkey);
	wqe->compare_add = READ_ONCE(src->compare_add);
	wqe->swap = READ_ONCE(src->swap);
	wqe->sge = (struct metaroce_sge *)data;
	wqe->status = IB_WC_SUCCESS;

	if (!mroce_opcode_allowed(qp, wqe->opcode)) {
		wqe->status = IB_WC_LOC_QP_OP_ERR;
		wqe->num_sge = 0;
		wqe->inline_len = 0;
		return;
	}
	if (mroce_opcode_local(wqe->opcode)) {
		wqe->num_sge = 0;
		wqe->inline_len = 0;
		wqe->length = 0;
		if (wqe->opcode == IB_WR_BIND_MW)
			mroce_decode_bind(src, wqe);
		return;
	}
	if (wqe->send_flags & IB_SEND_INLINE) {
		if (wqe->inline_len > sq->max_inline) {
			wqe->status = IB_WC_LOC_LEN_ERR;
			wqe->inline_len = 0;
		}
		memcpy(data, src->sge, wqe->inline_len);
		wqe->num_sge = 0;
		wqe->length = wqe->inline_len;
		return;
	}
	wqe->inline_len = 0;
	if (wqe->num_sge > sq->max_sge) {
		wqe->status = IB_WC_LOC_LEN_ERR;
		wqe->num_sge = 0;
	}
	n = wqe->num_sge;
	memcpy(data, src->sge, n * sizeof(struct metaroce_sge));
	wqe->length = mroce_sgl_len(wqe->sge, n) > U32_MAX ? U32_MAX :
		      mroce_sgl_len(wqe->sge, n);
	if (wqe->length > MROCE_MAX_MSG_SIZE)
		wqe->status = IB_WC_LOC_LEN_ERR;
}

/*
 * Is a posted send WQE waiting to be fetched?  Counted from the oldest WQE
 * not completed, so that a producer index run ahead by a user cannot make
 * fetch lap a shadow slot still in use.
 */
bool mroce_sq_posted(struct mroce_wq *sq)
{
	return mroce_ring_produced(&sq->ring, sq->ring.cons) >
	       sq->fetch - sq->ring.cons;
}

/* Decode the next posted send WQE into the shadow queue, or NULL. */
struct mroce_send_wqe *mroce_sq_fetch(struct mroce_qp *qp)
{
	struct mroce_wq *sq = &qp->sq;
	u32 i = sq->fetch & sq->ring.mask;
	struct mroce_send_wqe *wqe = &sq->shadow[i];

	if (!mroce_sq_posted(sq))
		return NULL;
	mroce_decode_send_wqe(qp, mroce_ring_slot(&sq->ring, sq->fetch), wqe,
			      sq->shadow_data + (size_t)i * sq->shadow_stride);
	sq->fetch++;
	return wqe;
}

static enum ib_wc_opcode mroce_wc_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	default:
		return IB_WC_SEND;
	}
}

/*
 * Complete the oldest outstanding send WQE, which must be wqe, and give its
 * slot back.  Successes are reported only when signalled.  The SQ's one
 * consumer at a time: the worker, or (RC, stream attached) whoever holds
 * the connection lock.
 */
void mroce_sq_complete(struct mroce_qp *qp, struct mroce_send_wqe *wqe,
		       enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_id = wqe->wr_id,
		.status = status,
		.opcode = mroce_wc_opcode(wqe->opcode),
		.byte_len = wqe->length,
		.qp = &qp->ibqp,
	};
	bool signal = status != IB_WC_SUCCESS ||
		      qp->sq_sig_type == IB_SIGNAL_ALL_WR ||
		      (wqe->send_flags & IB_SEND_SIGNALED);

	/*
	 * The slot goes back before the completion is visible: whoever polls
	 * it may post again at once.  (wc holds all we need of wqe.)
	 */
	mroce_wqe_free_segs(wqe);
	mroce_ring_consume(&qp->sq.ring);
	if (signal)
		mroce_cq_complete(to_mcq(qp->ibqp.send_cq), &wc, false);
}

/* Complete every send WQE not yet completed with IB_WC_WR_FLUSH_ERR. */
static void mroce_qp_flush_sq(struct mroce_qp *qp)
{
	struct mroce_wq *sq = &qp->sq;
	/* A user may post as fast as we flush: the caller loops. */
	u32 n = 2 * mroce_ring_slots(&sq->ring);
	struct mroce_send_wqe *wqe;

	while (n-- && (sq->ring.cons != sq->fetch || mroce_sq_fetch(qp))) {
		wqe = &sq->shadow[sq->ring.cons & sq->ring.mask];
		mroce_sq_complete(qp, wqe, IB_WC_WR_FLUSH_ERR);
	}
}

/*
 * The send worker found nothing to do: ask posters for a doorbell, then look
 * once more.  Returns true if the worker may stop.
 */
bool mroce_sq_idle(struct mroce_qp *qp)
{
	struct metaroce_ring_hdr *hdr = qp->sq.ring.hdr;

	WRITE_ONCE(hdr->flags, METAROCE_RING_F_NEED_WAKEUP);
	/* Pairs with the poster's barrier between producing and reading the
	 * flag: one of us sees the other's write.
	 */
	smp_mb();
	if (!mroce_sq_posted(&qp->sq))
		return true;
	WRITE_ONCE(hdr->flags, 0);
	return false;
}

/* RC, error state: flush, and the stream has nothing left to send. */
static void mroce_rc_flush_sq(struct mroce_qp *qp)
{
	mroce_qp_flush_sq(qp);
	qp->stream.send_idx = qp->sq.fetch;
	qp->stream.send_off = 0;
}

/*
 * An SRQ QP in the error state whose taken receives are all flushed: tell
 * the consumer, once, that no receive of the QP will complete any more
 * (IB_EVENT_QP_LAST_WQE_REACHED).  Worker only.
 */
static void mroce_qp_last_wqe(struct mroce_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_LAST_WQE_REACHED,
	};

	if (!qp->ibqp.srq || READ_ONCE(qp->last_wqe_done))
		return;
	WRITE_ONCE(qp->last_wqe_done, true);
	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/*
 * RC, error state, stream attached: flush under the connection lock the
 * SQ and the receives an SRQ QP's messages took, and tell the peer that
 * the stream failed (MRC-CONN-034).  False if the stream is not attached.
 */
static bool mroce_rc_flush_attached(struct mroce_qp *qp)
{
	struct mroce_conn *conn = mroce_stream_conn_get(qp);
	struct sk_buff_head q;

	if (!conn)
		return false;
	__skb_queue_head_init(&q);
	mroce_conn_lock_bh(conn);
	if (qp->stream.conn == conn) {
		mroce_rc_flush_sq(qp);
		if (qp->ibqp.srq)
			mroce_srq_flush_bound(conn, qp);
		mroce_stream_close(conn, qp, MROCE_SC_ERROR, &q);
	} else {
		mroce_rc_flush_sq(qp);
	}
	mroce_conn_tx_commit(conn, &q);
	mroce_conn_unlock_bh(conn);
	mroce_conn_xmit(conn);
	mroce_conn_put(conn);
	return true;
}

/*
 * RC: the stream takes WQEs as the window allows; completions come from the
 * receive path.  In the error state, flush.
 */
static void mroce_rc_worker(struct mroce_qp *qp)
{
	for (;;) {
		if (READ_ONCE(qp->state) != IB_QPS_ERR) {
			/* The stream asks for a doorbell when it runs dry. */
			if (READ_ONCE(qp->state) == IB_QPS_RTS)
				mroce_rc_send(qp);
			return;
		}
		if (!mroce_rc_flush_attached(qp))
			mroce_rc_flush_sq(qp);
		mroce_qp_last_wqe(qp);
		if (mroce_sq_idle(qp))
			return;
		cond_resched();
	}
}

/*
 * The send worker: runs WQEs in order while the QP can send and flushes
 * them in the error state.  For an RC QP whose stream is attached, the
 * doorbell and the ACK path push under the connection lock too.
 */
void mroce_send_worker(struct work_struct *work)
{
	struct mroce_qp *qp = container_of(to_delayed_work(work),
					   struct mroce_qp, send_work);
	struct metaroce_ring_hdr *hdr = qp->sq.ring.hdr;
	struct mroce_send_wqe *wqe;
	enum ib_qp_state state;

	/* While we run, posters need not ring the doorbell. */
	WRITE_ONCE(hdr->flags, 0);
	if (qp->ibqp.qp_type == IB_QPT_RC) {
		mroce_rc_worker(qp);
		return;
	}
	for (;;) {
		state = READ_ONCE(qp->state);
		if (state == IB_QPS_ERR) {
			/* What a user posts in the error state is flushed too. */
			mroce_qp_flush_sq(qp);
			/* The receive path takes no WQE any more (ud.c). */
			mroce_qp_last_wqe(qp);
			if (mroce_sq_idle(qp))
				return;
			cond_resched();
			continue;
		}
		if (state != IB_QPS_RTS)
			return;
		wqe = mroce_sq_fetch(qp);
		if (!wqe) {
			if (mroce_sq_idle(qp))
				return;
			continue;
		}
		if (wqe->status != IB_WC_SUCCESS) {
			mroce_sq_complete(qp, wqe, wqe->status);
			mroce_qp_to_error(qp);
			continue;
		}
		mroce_ud_send(qp, wqe);
		cond_resched();
	}
}

/*
 * Receive side: copy the oldest posted receive WQE out of the RQ ring into
 * *wqe, checked.  Returns false if none is posted.  Caller holds rq.lock.
 */
bool mroce_rq_peek(struct mroce_qp *qp, struct mroce_recv_wqe *wqe)
{
	lockdep_assert_held(&qp->rq.lock);

	return mroce_wq_peek_recv(&qp->rq, wqe);
}

/* The same for any receive ring (RQ or SRQ).  Caller holds wq->lock. */
bool mroce_wq_peek_recv(struct mroce_wq *rq, struct mroce_recv_wqe *wqe)
{
	const struct metaroce_recv_wqe *src;

	lockdep_assert_held(&rq->lock);

	if (!mroce_ring_produced(&rq->ring, rq->ring.cons))
		return false;
	src = mroce_ring_slot(&rq->ring, rq->ring.cons);
	wqe->wr_id = READ_ONCE(src->wr_id);
	wqe->num_sge = min(READ_ONCE(src->num_sge), rq->max_sge);
	memcpy(wqe->sge, src->sge, wqe->num_sge * sizeof(struct metaroce_sge));
	return true;
}

/* Complete the oldest receive WQE with *wc.  Caller holds rq.lock. */
void mroce_rq_complete(struct mroce_qp *qp, struct ib_wc *wc, bool solicited)
{
	lockdep_assert_held(&qp->rq.lock);

	/* Slot first, as for the SQ: the WQE was copied out by the peek. */
	mroce_ring_consume(&qp->rq.ring);
	mroce_cq_complete(to_mcq(qp->ibqp.recv_cq), wc, solicited);
}

/*
 * Take the receive WQE for a message that completes at once (UD): the
 * oldest of the QP's RQ, or one from its SRQ, whose slot is free at once.
 * Caller holds qp->rq.lock, which keeps the QP's completions in order, and
 * completes it with mroce_recv_complete() before dropping the lock.
 */
bool mroce_recv_take(struct mroce_qp *qp, struct mroce_recv_wqe *wqe)
{
	lockdep_assert_held(&qp->rq.lock);

	if (qp->ibqp.srq)
		return mroce_srq_take(to_msrq(qp->ibqp.srq), wqe);
	return mroce_rq_peek(qp, wqe);
}

void mroce_recv_complete(struct mroce_qp *qp, struct ib_wc *wc, bool solicited)
{
	if (qp->ibqp.srq)
		mroce_cq_complete(to_mcq(qp->ibqp.recv_cq), wc, solicited);
	else
		mroce_rq_complete(qp, wc, solicited);
}

/* Complete every posted receive WQE with IB_WC_WR_FLUSH_ERR, in order. */
void mroce_qp_flush_rq(struct mroce_qp *qp)
{
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
	};
	struct mroce_recv_wqe *wqe = &qp->rq_scratch;
	/* A user may produce as fast as we flush: one ring's worth per call. */
	u32 n = mroce_ring_slots(&qp->rq.ring);
	unsigned long flags;

	spin_lock_irqsave(&qp->rq.lock, flags);
	while (n-- && mroce_rq_peek(qp, wqe)) {
		wc.wr_id = wqe->wr_id;
		mroce_rq_complete(qp, &wc, false);
	}
	spin_unlock_irqrestore(&qp->rq.lock, flags);
}
