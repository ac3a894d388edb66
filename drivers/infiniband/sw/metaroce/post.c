// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Posting work requests from kernel consumers: each WR becomes a WQE in the
 * QP's ring, in the same format userspace writes (metaroce-abi.h).  Any
 * context.  An RC QP in RTS sends from the poster's context where it may
 * (mroce_rc_doorbell()); else the send worker sends, or flushes.
 */
#include "mr.h"
#include "rc_req.h"
#include "rc_resp.h"
#include "verbs.h"

static int mroce_check_send_wr(struct mroce_qp *qp,
			       const struct ib_send_wr *wr, u32 *inline_len)
{
	bool ud = qp->ibqp.qp_type != IB_QPT_RC;
	u64 len = 0;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > qp->sq.max_sge)
		return -EINVAL;
	/* The same opcode rules the send worker applies to user WQEs. */
	if (!mroce_opcode_ok(qp->ibqp.qp_type, wr->opcode) ||
	    wr->opcode == IB_WR_BIND_MW)
		return -EINVAL;
	if (ud && !ud_wr(wr)->ah)
		return -EINVAL;
	if (wr->opcode == IB_WR_REG_MR &&
	    (!reg_wr(wr)->mr || reg_wr(wr)->mr->pd != qp->ibqp.pd))
		return -EINVAL;

	*inline_len = 0;
	if (wr->send_flags & IB_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > qp->sq.max_inline)
			return -EINVAL;
		*inline_len = len;
	}
	return 0;
}

static void mroce_write_send_wqe(struct mroce_qp *qp,
				 struct metaroce_send_wqe *wqe,
				 const struct ib_send_wr *wr, u32 inline_len)
{
	u8 *inl = (u8 *)wqe->sge;
	int i;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;
	if (wr->opcode == IB_WR_SEND_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		wqe->imm_data = (__force u32)wr->ex.imm_data;
	if (wr->opcode == IB_WR_SEND_WITH_INV ||
	    wr->opcode == IB_WR_LOCAL_INV)
		wqe->invalidate_rkey = wr->ex.invalidate_rkey;
	switch (wr->opcode) {
	case IB_WR_REG_MR:
		/* What the MR is now, as ULPs expect it to be registered. */
		wqe->ah_num = to_mmr(reg_wr(wr)->mr)->index;
		wqe->remote_addr = reg_wr(wr)->mr->iova;
		wqe->compare_add = reg_wr(wr)->mr->length;
		wqe->rkey = reg_wr(wr)->key;
		wqe->swap = (u32)reg_wr(wr)->access;
		return;
	case IB_WR_LOCAL_INV:
		return;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->remote_addr = atomic_wr(wr)->remote_addr;
		wqe->rkey = atomic_wr(wr)->rkey;
		wqe->compare_add = atomic_wr(wr)->compare_add;
		wqe->swap = atomic_wr(wr)->swap;
		break;
	default:
		break;
	}
	if (qp->ibqp.qp_type != IB_QPT_RC) {
		wqe->ah_num = to_mah(ud_wr(wr)->ah)->ah_num;
		wqe->remote_qpn = ud_wr(wr)->remote_qpn;
		wqe->remote_qkey = ud_wr(wr)->remote_qkey;
	}
	if (!(wr->send_flags & IB_SEND_INLINE)) {
		wqe->num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			wqe->sge[i].addr = wr->sg_list[i].addr;
			wqe->sge[i].length = wr->sg_list[i].length;
			wqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
		return;
	}
	/* Kernel inline data: sg_list addresses are kernel pointers. */
	wqe->inline_len = inline_len;
	for (i = 0; i < wr->num_sge; i++) {
		memcpy(inl, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		inl += wr->sg_list[i].length;
	}
}

int mroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	struct mroce_ring *ring = &qp->sq.ring;
	unsigned long flags;
	u32 inline_len;
	int err = 0;

	if (READ_ONCE(qp->state) < IB_QPS_RTS) {
		*bad_wr = wr;
		return -EINVAL;
	}
	/*
	 * A user QP's process writes its SQ ring itself and sends no work
	 * requests, only the doorbell: POST_SEND with none.
	 */
	if (ibqp->uobject && wr) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (!wr)
		mroce_count(to_mdev(ibqp->device), DOORBELLS);

	spin_lock_irqsave(&qp->sq.lock, flags);
	for (; wr; wr = wr->next) {
		err = mroce_check_send_wr(qp, wr, &inline_len);
		if (!err && mroce_ring_full(ring))
			err = -ENOMEM;
		if (err) {
			*bad_wr = wr;
			break;
		}
		mroce_write_send_wqe(qp, mroce_ring_slot(ring, ring->prod), wr,
				     inline_len);
		mroce_ring_produce(ring);
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);

	/*
	 * An RC QP sends from here where it may: not from hard interrupts,
	 * nor with interrupts off (bottom halves go off and on again), nor,
	 * on PREEMPT_RT (where the connection lock sleeps), unpreemptible.
	 * Else the worker sends, or flushes in the error state.
	 */
	if (ibqp->qp_type == IB_QPT_RC && READ_ONCE(qp->state) == IB_QPS_RTS &&
	    !in_hardirq() && !irqs_disabled() &&
	    (!IS_ENABLED(CONFIG_PREEMPT_RT) || preemptible()) &&
	    mroce_rc_doorbell(qp))
		return err;
	mroce_qp_kick(qp);
	return err;
}

/* Write receive WRs into a receive ring (RQ or SRQ). */
int mroce_wq_post_recv(struct mroce_wq *rq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct mroce_ring *ring = &rq->ring;
	struct metaroce_recv_wqe *wqe;
	unsigned long flags;
	int err = 0, i;

	spin_lock_irqsave(&rq->post_lock, flags);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || wr->num_sge > rq->max_sge)
			err = -EINVAL;
		else if (mroce_ring_full(ring))
			err = -ENOMEM;
		if (err) {
			*bad_wr = wr;
			break;
		}
		wqe = mroce_ring_slot(ring, ring->prod);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			wqe->sge[i].addr = wr->sg_list[i].addr;
			wqe->sge[i].length = wr->sg_list[i].length;
			wqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
		mroce_ring_produce(ring);
	}
	spin_unlock_irqrestore(&rq->post_lock, flags);
	return err;
}

int mroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	int err;

	/* A QP on an SRQ has no receive queue of its own. */
	if (READ_ONCE(qp->state) == IB_QPS_RESET || ibqp->srq) {
		*bad_wr = wr;
		return -EINVAL;
	}
	/* User QPs: only the doorbell (POST_RECV with no work requests). */
	if (ibqp->uobject && wr) {
		*bad_wr = wr;
		return -EINVAL;
	}

	err = mroce_wq_post_recv(&qp->rq, wr, bad_wr);
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		mroce_qp_flush_rq(qp);
	else if (ibqp->qp_type == IB_QPT_RC)
		mroce_rc_credit(qp);
	return err;
}
