// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: creation, the verbs state machine, query and destruction.
 */
#include <linux/slab.h>
#include <rdma/uverbs_ioctl.h>

#include "conn.h"
#include "lifecycle.h"
#include "mr.h"
#include "rc_req.h"
#include "verbs.h"

#define MROCE_QPN_MIN		16
#define MROCE_QPN_MAX		((1U << 24) - 1)
#define MROCE_PSN_MASK		((1U << 24) - 1)

static int mroce_check_qp_init(struct mroce_dev *mdev,
			       struct ib_qp_init_attr *init,
			       struct ib_udata *udata)
{
	struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UD:
	case IB_QPT_GSI:
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	/* Receives from an SRQ: RC and UD, not the GSI QP. */
	if (init->srq && init->qp_type == IB_QPT_GSI)
		return -EOPNOTSUPP;
	if (udata && init->qp_type == IB_QPT_GSI)
		return -EINVAL;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (cap->max_send_wr > mdev->attr.max_qp_wr ||
	    (!init->srq && cap->max_recv_wr > mdev->attr.max_qp_wr) ||
	    cap->max_send_sge > mdev->attr.max_send_sge ||
	    (!init->srq && cap->max_recv_sge > mdev->attr.max_recv_sge) ||
	    cap->max_inline_data > MROCE_MAX_INLINE)
		return -EINVAL;
	return 0;
}

static int mroce_qpn_alloc(struct mroce_dev *mdev, struct mroce_qp *qp,
			   enum ib_qp_type type)
{
	u32 qpn;
	int err;

	if (type == IB_QPT_GSI) {
		err = xa_insert(&mdev->qp_xa, 1, qp->ref, GFP_KERNEL);
		if (err)
			return err;
		qp->ibqp.qp_num = 1;
		return 0;
	}
	err = xa_alloc_cyclic(&mdev->qp_xa, &qpn, qp->ref,
			      XA_LIMIT(MROCE_QPN_MIN, MROCE_QPN_MAX),
			      &mdev->qp_next, GFP_KERNEL);
	if (err < 0)
		return err;
	qp->ibqp.qp_num = qpn;
	return 0;
}

/* A user QP: map both rings into the process and tell it where they are. */
static int mroce_qp_map_rings(struct mroce_qp *qp, struct ib_udata *udata)
{
	struct metaroce_create_qp_resp resp = {};
	int err;

	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	err = mroce_ring_mmap_insert(udata, &qp->sq.ring, &qp->sq_mmap,
				     &resp.sq);
	if (err)
		return err;
	err = mroce_ring_mmap_insert(udata, &qp->rq.ring, &qp->rq_mmap,
				     &resp.rq);
	if (err)
		goto err_sq;
	resp.max_inline = qp->sq.max_inline;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_rq;
	return 0;

err_rq:
	mroce_ring_mmap_remove(&qp->rq.ring, &qp->rq_mmap);
err_sq:
	mroce_ring_mmap_remove(&qp->sq.ring, &qp->sq_mmap);
	return err;
}

/* Withdraw a user QP's ring mappings; the rings' memory goes with them. */
static void mroce_qp_unmap_rings(struct mroce_qp *qp)
{
	mroce_ring_mmap_remove(&qp->rq.ring, &qp->rq_mmap);
	mroce_ring_mmap_remove(&qp->sq.ring, &qp->sq_mmap);
}

/* The consumer's event handler, for each event the QP had (mroce_qp_to_error_event). */
static void mroce_qp_event_work(struct work_struct *work)
{
	struct mroce_qp *qp = container_of(work, struct mroce_qp, event_work);
	unsigned long events = xchg(&qp->events, 0);
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
	};
	int e;

	for_each_set_bit(e, &events, BITS_PER_LONG) {
		ev.event = e;
		if (qp->ibqp.event_handler)
			qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
}

int mroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibqp->device);
	struct mroce_qp *qp = to_mqp(ibqp);
	struct ib_qp_cap *cap = &init->cap;
	int err;

	err = mroce_check_qp_init(mdev, init, udata);
	if (err)
		return err;
	if (!mroce_get_limit(&mdev->num_qp, mdev->attr.max_qp))
		return -ENOMEM;

	qp->ref = kzalloc(sizeof(*qp->ref), GFP_KERNEL);
	if (!qp->ref) {
		err = -ENOMEM;
		goto err_limit;
	}
	refcount_set(&qp->ref->count, 1);
	qp->ref->qp = qp;
	mutex_init(&qp->state_lock);
	init_completion(&qp->released);
	INIT_DELAYED_WORK(&qp->send_work, mroce_send_worker);
	INIT_WORK(&qp->event_work, mroce_qp_event_work);
	INIT_LIST_HEAD(&qp->mws);
	mroce_rdctx_init(&qp->stream.rd);
	qp->state = IB_QPS_RESET;
	qp->sq_sig_type = init->sq_sig_type;

	err = mroce_wq_init(&qp->sq, cap->max_send_wr, cap->max_send_sge,
			    cap->max_inline_data, true);
	if (err)
		goto err_ref;
	/* On an SRQ, the RQ (ring of one slot, for the ABI) stays empty. */
	err = mroce_wq_init(&qp->rq, init->srq ? 1 : cap->max_recv_wr,
			    init->srq ? 0 : cap->max_recv_sge, 0, false);
	if (err)
		goto err_sq;
	qp->sq_mmap = NULL;
	qp->rq_mmap = NULL;
	err = mroce_qmem_charge(&qp->qmem, udata, mroce_wq_bytes(&qp->sq) +
						 mroce_wq_bytes(&qp->rq));
	if (err)
		goto err_rq;
	if (udata) {
		err = mroce_qp_map_rings(qp, udata);
		if (err)
			goto err_rq;
	}
	err = mroce_qpn_alloc(mdev, qp, init->qp_type);
	if (err)
		goto err_unmap;

	cap->max_send_wr = qp->sq.max_wr;
	cap->max_recv_wr = init->srq ? 0 : qp->rq.max_wr;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_recv_sge = init->srq ? 0 : qp->rq.max_sge;
	cap->max_inline_data = qp->sq.max_inline;
	return 0;

err_unmap:
	mroce_qp_unmap_rings(qp);
err_rq:
	mroce_qmem_uncharge(&qp->qmem, SIZE_MAX);
	mroce_wq_free(&qp->rq);
err_sq:
	mroce_wq_free(&qp->sq);
err_ref:
	kfree(qp->ref);		/* never published */
err_limit:
	atomic_dec(&mdev->num_qp);
	return err;
}

/* A reference to QP qpn for the receive path, or NULL.  Any context. */
struct mroce_qp *mroce_qp_get(struct mroce_dev *mdev, u32 qpn)
{
	struct mroce_qp_ref *ref;
	struct mroce_qp *qp = NULL;

	rcu_read_lock();
	ref = xa_load(&mdev->qp_xa, qpn);
	if (ref && refcount_inc_not_zero(&ref->count))
		qp = ref->qp;
	rcu_read_unlock();
	return qp;
}

void mroce_qp_put(struct mroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref->count))
		complete(&qp->released);
}

/*
 * The QP entered the error state: from now on a poster of receives rings
 * the receive doorbell (a user QP's provider sees the RQ ring's flag) so
 * that what it posts is flushed too; flush what is posted already.
 */
static void mroce_qp_flush_rq_err(struct mroce_qp *qp)
{
	WRITE_ONCE(qp->rq.ring.hdr->flags, METAROCE_RING_F_NEED_WAKEUP);
	/* Pairs with the poster's barrier between producing and reading it. */
	smp_mb();
	mroce_qp_flush_rq(qp);
}

/*
 * A local error the QP cannot recover from (a malformed WQE): move to the
 * error state, flush, and tell the consumer (IB_EVENT_QP_FATAL).
 */
void mroce_qp_to_error(struct mroce_qp *qp)
{
	mroce_qp_to_error_event(qp, IB_EVENT_QP_FATAL);
}

/* Move to the error state for a reason the consumer hears of as event. */
void mroce_qp_to_error_event(struct mroce_qp *qp, enum ib_event_type event)
{
	if (xchg(&qp->state, IB_QPS_ERR) == IB_QPS_ERR)
		return;
	mroce_qp_flush_rq_err(qp);
	mroce_qp_kick(qp);
	set_bit(event, &qp->events);
	mroce_notify_queue(&qp->event_work);
}

/* Schedule the send worker. */
void mroce_qp_kick(struct mroce_qp *qp)
{
	/* Now, also if a run is set for later (mroce_qp_kick_at()). */
	if (!queue_delayed_work(mroce_wq, &qp->send_work, 0) &&
	    timer_pending(&qp->send_work.timer))
		mod_delayed_work(mroce_wq, &qp->send_work, 0);
}

/* Run the send worker at jiffies when, unless a run is due before. */
void mroce_qp_kick_at(struct mroce_qp *qp, unsigned long when)
{
	queue_delayed_work(mroce_wq, &qp->send_work,
			   time_after(when, jiffies) ? when - jiffies : 0);
}

/*
 * RC state changes that touch the transport: RTR attaches the stream to the
 * connection to its peer, RTS starts the requester side, RESET detaches.
 */
static int mroce_rc_transition(struct mroce_qp *qp, enum ib_qp_state cur,
			       enum ib_qp_state new)
{
	struct mroce_conn *conn;

	if (new == IB_QPS_RESET) {
		mroce_conn_detach(qp, MROCE_SC_RESET);
		return 0;
	}
	if (new == IB_QPS_RTR && cur == IB_QPS_INIT)
		return mroce_conn_attach(qp);
	if (new == IB_QPS_RTS && cur == IB_QPS_RTR) {
		conn = mroce_stream_conn_get(qp);
		if (!conn)
			return -EINVAL;
		mroce_conn_lock_bh(conn);
		mroce_rc_requester_start(qp);
		qp->stream.req_live = true;
		mroce_conn_unlock_bh(conn);
		mroce_conn_put(conn);
	}
	return 0;
}

static int mroce_check_qp_attr(struct mroce_qp *qp, struct ib_qp_attr *attr,
			       int mask)
{
	if (mask & IB_QP_ALT_PATH)
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PORT) && attr->port_num != MROCE_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index != 0)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > MROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > MROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > MROCE_QPN_MAX)
		return -EINVAL;
	if ((mask & IB_QP_AV) &&
	    (attr->ah_attr.type != RDMA_AH_ATTR_TYPE_ROCE ||
	     !(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH)))
		return -EINVAL;
	return 0;
}

static void mroce_apply_qp_attr(struct mroce_qp *qp, struct ib_qp_attr *attr,
				int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_AV)
		mroce_av_from_attr(&qp->av, &attr->ah_attr);
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & MROCE_PSN_MASK;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & MROCE_PSN_MASK;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
}

int mroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		    int mask, struct ib_udata *udata)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	enum ib_qp_state cur, new, old;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;

	mutex_lock(&qp->state_lock);
	old = READ_ONCE(qp->state);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : old;
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (cur != old && !(cur == IB_QPS_SQE && old == IB_QPS_RTS)) {
		err = -EINVAL;
		goto out;
	}
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask)) {
		err = -EINVAL;
		goto out;
	}
	err = mroce_check_qp_attr(qp, attr, mask);
	if (err)
		goto out;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) && ibqp->qp_type == IB_QPT_RC) {
		/* Attached from RTR on (mroce_rc_transition()). */
		err = mroce_rdctx_size(&qp->stream.rd, attr->max_dest_rd_atomic,
				       cur != IB_QPS_RESET && cur != IB_QPS_INIT);
		if (err)
			goto out;
	}

	mroce_apply_qp_attr(qp, attr, mask);
	if ((mask & IB_QP_STATE) && ibqp->qp_type == IB_QPT_RC) {
		err = mroce_rc_transition(qp, cur, new);
		if (err)
			goto out;
	}
	if (mask & IB_QP_STATE) {
		/*
		 * The receive path may have failed the QP since we looked
		 * (mroce_qp_to_error_event): then it stays in the error state
		 * it was flushed in, and the transition fails.
		 */
		if (new == IB_QPS_RESET || new == IB_QPS_ERR) {
			WRITE_ONCE(qp->state, new);
		} else if (cmpxchg(&qp->state, old, new) != old) {
			err = -EINVAL;
			goto out;
		}
		if (new == IB_QPS_RESET) {
			/* No worker may be walking the queues we empty. */
			cancel_delayed_work_sync(&qp->send_work);
			mroce_wq_reset(&qp->sq);
			mroce_wq_reset(&qp->rq);
			WRITE_ONCE(qp->rq.ring.hdr->flags, 0);
			qp->last_wqe_done = false;
		} else if (new == IB_QPS_ERR) {
			mroce_qp_flush_rq_err(qp);
			mroce_qp_kick(qp);	/* the worker flushes the SQ */
		} else if (new == IB_QPS_RTS) {
			mroce_qp_kick(qp);
		}
	}
out:
	mutex_unlock(&qp->state_lock);
	return err;
}

int mroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct mroce_qp *qp = to_mqp(ibqp);

	mutex_lock(&qp->state_lock);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->port_num = attr->port_num ?: MROCE_PORT;
	attr->cap.max_send_wr = qp->sq.max_wr;
	attr->cap.max_recv_wr = ibqp->srq ? 0 : qp->rq.max_wr;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_recv_sge = ibqp->srq ? 0 : qp->rq.max_sge;
	attr->cap.max_inline_data = qp->sq.max_inline;
	if (ibqp->qp_type == IB_QPT_RC) {
		attr->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
		rdma_ah_set_port_num(&attr->ah_attr, MROCE_PORT);
		rdma_ah_set_sl(&attr->ah_attr, qp->av.sl);
		rdma_ah_set_grh(&attr->ah_attr, &qp->av.dgid,
				qp->av.flow_label, qp->av.sgid_index,
				qp->av.hop_limit, qp->av.traffic_class);
		memcpy(attr->ah_attr.roce.dmac, qp->av.dmac, ETH_ALEN);
	}
	mutex_unlock(&qp->state_lock);

	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_type;
	return 0;
}

int mroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibqp->device);
	struct mroce_qp *qp = to_mqp(ibqp);

	/*
	 * Destroying is not the error state: no LAST_WQE_REACHED, which
	 * libibverbs would wait for the process to acknowledge.
	 */
	WRITE_ONCE(qp->last_wqe_done, true);
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	mroce_conn_detach(qp, MROCE_SC_DESTROYED);

	xa_erase(&mdev->qp_xa, ibqp->qp_num);
	/* Wait for receive-path users, then stop the send worker for good. */
	mroce_qp_put(qp);
	wait_for_completion(&qp->released);
	/* A lookup that loaded ref before the erase may still read it. */
	kfree_rcu(qp->ref, rcu);
	WRITE_ONCE(qp->state, IB_QPS_RESET);
	cancel_delayed_work_sync(&qp->send_work);
	cancel_work_sync(&qp->event_work);
	/* No bind runs any more: free the type 2 windows it bound. */
	mroce_mw_qp_release(qp);
	mroce_qp_unmap_rings(qp);
	mroce_wq_free(&qp->sq);
	mroce_wq_free(&qp->rq);
	mroce_rdctx_free_all(&qp->stream.rd);
	mroce_qmem_uncharge(&qp->qmem, SIZE_MAX);
	mutex_destroy(&qp->state_lock);
	atomic_dec(&mdev->num_qp);
	return 0;
}
