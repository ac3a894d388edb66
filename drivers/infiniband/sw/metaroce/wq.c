// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel work queues: posting send and receive work requests, and flushing
 * them with IB_WC_WR_FLUSH_ERR when the QP enters the error state.
 */
#include <linux/log2.h>
#include <linux/slab.h>

#include "verbs.h"

int mroce_wq_init(struct mroce_wq *wq, u32 max_wr, u32 max_sge,
		  size_t wqe_hdr)
{
	u32 slots = roundup_pow_of_two(max(max_wr, 1U));

	spin_lock_init(&wq->lock);
	wq->max_sge = max_sge;
	wq->wqe_size = wqe_hdr + max_sge * sizeof(struct mroce_sge);
	wq->buf = kvcalloc(slots, wq->wqe_size, GFP_KERNEL);
	if (!wq->buf)
		return -ENOMEM;
	wq->mask = slots - 1;
	wq->max_wr = slots;
	wq->head = 0;
	wq->tail = 0;
	return 0;
}

void mroce_wq_free(struct mroce_wq *wq)
{
	kvfree(wq->buf);
	wq->buf = NULL;
}

/* Discard every posted WQE without a completion (transition to RESET). */
void mroce_wq_reset(struct mroce_wq *wq)
{
	unsigned long flags;

	spin_lock_irqsave(&wq->lock, flags);
	wq->head = 0;
	wq->tail = 0;
	spin_unlock_irqrestore(&wq->lock, flags);
}

void *mroce_wq_slot(struct mroce_wq *wq, u32 index)
{
	return wq->buf + (size_t)(index & wq->mask) * wq->wqe_size;
}

static bool mroce_wq_full(const struct mroce_wq *wq)
{
	return wq->tail - wq->head >= wq->max_wr;
}

static void mroce_copy_sges(struct mroce_sge *dst, const struct ib_sge *src,
			    int num)
{
	int i;

	for (i = 0; i < num; i++) {
		dst[i].addr = src[i].addr;
		dst[i].length = src[i].length;
		dst[i].lkey = src[i].lkey;
	}
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
	default:
		return IB_WC_SEND;
	}
}

/* Complete every posted receive WQE with IB_WC_WR_FLUSH_ERR, in order. */
void mroce_qp_flush_rq(struct mroce_qp *qp)
{
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
	};
	struct mroce_recv_wqe *rwqe;
	unsigned long flags;

	spin_lock_irqsave(&qp->rq.lock, flags);
	while (qp->rq.head != qp->rq.tail) {
		rwqe = mroce_wq_slot(&qp->rq, qp->rq.head++);
		wc.wr_id = rwqe->wr_id;
		mroce_cq_complete(to_mcq(qp->ibqp.recv_cq), &wc, false);
	}
	spin_unlock_irqrestore(&qp->rq.lock, flags);
}

/* Complete send WQEs from head on with IB_WC_WR_FLUSH_ERR.  Worker only. */
static void mroce_qp_flush_sq(struct mroce_qp *qp)
{
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp = &qp->ibqp,
	};
	struct mroce_send_wqe *swqe;
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	while (qp->sq.head != qp->sq.tail) {
		swqe = mroce_wq_slot(&qp->sq, qp->sq.head++);
		wc.wr_id = swqe->wr_id;
		wc.opcode = mroce_wc_opcode(swqe->opcode);
		mroce_cq_complete(to_mcq(qp->ibqp.send_cq), &wc, false);
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

/*
 * The send worker: the only consumer of the send queue.  Runs WQEs in order
 * while the QP can send and flushes them once it is in the error state.
 */
void mroce_send_worker(struct work_struct *work)
{
	struct mroce_qp *qp = container_of(work, struct mroce_qp, send_work);
	struct mroce_send_wqe *wqe;
	enum ib_qp_state state;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&qp->sq.lock, flags);
		state = READ_ONCE(qp->state);
		if (qp->sq.head == qp->sq.tail ||
		    (state != IB_QPS_RTS && state != IB_QPS_ERR)) {
			spin_unlock_irqrestore(&qp->sq.lock, flags);
			return;
		}
		wqe = mroce_wq_slot(&qp->sq, qp->sq.head);
		spin_unlock_irqrestore(&qp->sq.lock, flags);

		if (state == IB_QPS_ERR) {
			mroce_qp_flush_sq(qp);
			continue;
		}
		/* The slot stays ours: posters only write at the tail. */
		mroce_ud_send(qp, wqe);
		spin_lock_irqsave(&qp->sq.lock, flags);
		qp->sq.head++;
		spin_unlock_irqrestore(&qp->sq.lock, flags);
		cond_resched();
	}
}

static int mroce_check_send_wr(struct mroce_qp *qp,
			       const struct ib_send_wr *wr)
{
	bool ud = qp->ibqp.qp_type != IB_QPT_RC;
	u64 len = 0;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > qp->sq.max_sge)
		return -EINVAL;
	if (wr->send_flags & IB_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > qp->sq.max_sge * sizeof(struct mroce_sge) ||
		    len > MROCE_MAX_INLINE)
			return -EINVAL;
	}
	/* The RC transport (streams over connections) is not there yet. */
	if (!ud)
		return -EOPNOTSUPP;
	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return ud && !ud_wr(wr)->ah ? -EINVAL : 0;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return ud ? -EINVAL : 0;
	default:
		return -EINVAL;
	}
}

static void mroce_fill_send_wqe(struct mroce_qp *qp,
				struct mroce_send_wqe *wqe,
				const struct ib_send_wr *wr)
{
	u8 *inl = (u8 *)wqe->sge;
	int i;

	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;
	wqe->num_sge = wr->num_sge;
	wqe->imm_data = 0;
	wqe->invalidate_rkey = 0;
	wqe->inline_len = 0;
	if (qp->ibqp.qp_type != IB_QPT_RC) {
		wqe->ah = ud_wr(wr)->ah;
		wqe->remote_qpn = ud_wr(wr)->remote_qpn;
		wqe->remote_qkey = ud_wr(wr)->remote_qkey;
	}
	if (wr->opcode == IB_WR_SEND_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		wqe->imm_data = wr->ex.imm_data;
	if (wr->opcode == IB_WR_SEND_WITH_INV)
		wqe->invalidate_rkey = wr->ex.invalidate_rkey;
	if (!(wr->send_flags & IB_SEND_INLINE)) {
		mroce_copy_sges(wqe->sge, wr->sg_list, wr->num_sge);
		return;
	}
	/* Kernel inline data: sg_list addresses are kernel pointers. */
	for (i = 0; i < wr->num_sge; i++) {
		memcpy(inl, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		inl += wr->sg_list[i].length;
		wqe->inline_len += wr->sg_list[i].length;
	}
	wqe->num_sge = 0;
}

int mroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	enum ib_qp_state state = READ_ONCE(qp->state);
	unsigned long flags;
	int err = 0;

	if (state < IB_QPS_RTS) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->sq.lock, flags);
	for (; wr; wr = wr->next) {
		err = mroce_check_send_wr(qp, wr);
		if (!err && mroce_wq_full(&qp->sq))
			err = -ENOMEM;
		if (err) {
			*bad_wr = wr;
			break;
		}
		mroce_fill_send_wqe(qp, mroce_wq_slot(&qp->sq, qp->sq.tail), wr);
		qp->sq.tail++;
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);

	/* The worker sends, or flushes in the error state. */
	mroce_qp_kick(qp);
	return err;
}

int mroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	struct mroce_recv_wqe *wqe;
	unsigned long flags;
	int err = 0;

	if (READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->rq.lock, flags);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || wr->num_sge > qp->rq.max_sge)
			err = -EINVAL;
		else if (mroce_wq_full(&qp->rq))
			err = -ENOMEM;
		if (err) {
			*bad_wr = wr;
			break;
		}
		wqe = mroce_wq_slot(&qp->rq, qp->rq.tail);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = wr->num_sge;
		mroce_copy_sges(wqe->sge, wr->sg_list, wr->num_sge);
		qp->rq.tail++;
	}
	spin_unlock_irqrestore(&qp->rq.lock, flags);

	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		mroce_qp_flush_rq(qp);
	return err;
}
