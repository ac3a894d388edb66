// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp.c - queue pairs.
 *
 * The kernel maps a QP's send and receive rings into the process
 * (<rdma/metaroce-abi.h>).  Posting writes WQEs into them and publishes the
 * producer index (wq.c); a system call happens only when the kernel asked
 * for one:
 *   - SQ: its send worker went idle and set NEED_WAKEUP, so we ring the
 *     doorbell, a POST_SEND command carrying no work requests;
 *   - RQ: the QP is in the error state, so we ring a POST_RECV doorbell
 *     for the kernel to flush what we posted.
 * Create, modify, query and destroy are commands.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metaroce.h"

static void metaroce_unmap_qp(struct metaroce_qp *qp)
{
	metaroce_uring_unmap(&qp->sq.ring);
	metaroce_uring_unmap(&qp->rq.ring);
}

static int metaroce_map_qp(struct ibv_context *context,
			   struct metaroce_qp *qp,
			   const struct ibv_qp_cap *cap,
			   const struct metaroce_create_qp_resp *resp)
{
	const size_t shdr = sizeof(struct metaroce_send_wqe);
	const size_t rhdr = sizeof(struct metaroce_recv_wqe);
	uint32_t max_inline;
	int ret;

	ret = metaroce_uring_map(context, &qp->sq.ring, &resp->sq, shdr);
	if (ret)
		return ret;
	ret = metaroce_uring_map(context, &qp->rq.ring, &resp->rq, rhdr);
	if (ret) {
		metaroce_uring_unmap(&qp->sq.ring);
		return ret;
	}

	/*
	 * The limits are what the kernel granted (in attr->cap since the
	 * command), capped by what a slot can hold: we never write past one.
	 */
	qp->sq.max_sge = metaroce_wq_max_sge(&qp->sq.ring, shdr,
					     cap->max_send_sge);
	max_inline = resp->max_inline;
	if (max_inline > resp->sq.slot_size - shdr)
		max_inline = resp->sq.slot_size - shdr;
	qp->sq.max_inline = max_inline;
	qp->rq.max_sge = metaroce_wq_max_sge(&qp->rq.ring, rhdr,
					     cap->max_recv_sge);
	return 0;
}

/*
 * The end of creating a QP, once the CREATE_QP command returned ret: map
 * the rings the response describes, set up the locks and write the usable
 * capabilities to cap (what applications read back: ibv_ud_pingpong
 * decides on inline by it).  On a failure, the command's too, undo what
 * was done, free qp and set errno.  Returns 0 or that errno value.
 */
int metaroce_qp_finish_create(struct ibv_context *context,
			      struct metaroce_qp *qp, int ret,
			      struct ibv_qp_cap *cap,
			      const struct metaroce_create_qp_resp *resp)
{
	if (ret)
		goto err_free;
	ret = metaroce_map_qp(context, qp, cap, resp);
	if (ret)
		goto err_destroy;
	ret = pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_unmap;
	ret = pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);
	if (ret) {
		pthread_spin_destroy(&qp->sq.lock);
		goto err_unmap;
	}
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_recv_sge = qp->rq.max_sge;
	cap->max_inline_data = qp->sq.max_inline;
	return 0;

err_unmap:
	metaroce_unmap_qp(qp);
err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return ret;
}

struct ibv_qp *metaroce_create_qp(struct ibv_pd *pd,
				  struct ibv_qp_init_attr *attr)
{
	struct metaroce_create_qp_resp_full resp;
	struct ibv_create_qp cmd;
	struct metaroce_qp *qp;
	int ret;

	switch (attr->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UD:
		break;
	default:
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (metaroce_qp_finish_create(pd->context, qp, ret, &attr->cap,
				      &resp.drv_payload))
		return NULL;
	return &qp->vqp.qp;
}

int metaroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		       int attr_mask)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	struct ibv_modify_qp cmd;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret || !(attr_mask & IBV_QP_STATE) ||
	    attr->qp_state != IBV_QPS_RESET)
		return ret;

	/*
	 * The kernel emptied both rings: start over at index 0.  (Posting
	 * while the QP is reset is a bug of the application.)
	 */
	pthread_spin_lock(&qp->sq.lock);
	qp->sq.ring.idx = 0;
	pthread_spin_unlock(&qp->sq.lock);
	pthread_spin_lock(&qp->rq.lock);
	qp->rq.ring.idx = 0;
	pthread_spin_unlock(&qp->rq.lock);
	return 0;
}

int metaroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int metaroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;

	metaroce_unmap_qp(qp);
	pthread_spin_destroy(&qp->sq.lock);
	pthread_spin_destroy(&qp->rq.lock);
	free(qp);
	return 0;
}

/* Posting is allowed from RTS on (including SQD, SQE and ERR). */
bool metaroce_can_send(const struct ibv_qp *ibqp)
{
	switch (ibqp->state) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		return false;
	default:
		return true;
	}
}

bool metaroce_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	if (type == IBV_QPT_UD)
		return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
		return true;
	default:
		return false;
	}
}

/* Check one work request as ibv_post_send(3) wants; 0 or an errno value. */
static int metaroce_check_send_wr(struct metaroce_qp *qp,
				  const struct ibv_send_wr *wr, uint64_t *len)
{
	enum ibv_qp_type type = qp->vqp.qp.qp_type;
	bool atomic = wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		      wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;
	if (!metaroce_opcode_ok(type, wr->opcode))
		return EINVAL;
	if (wr->send_flags & ~METAROCE_SEND_FLAGS)
		return EINVAL;
	if (type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;

	*len = 0;
	/* Local operations: no data, no SGEs. */
	if (wr->opcode == IBV_WR_LOCAL_INV || wr->opcode == IBV_WR_BIND_MW) {
		if (wr->send_flags & (IBV_SEND_INLINE | IBV_SEND_SOLICITED))
			return EINVAL;
		if (wr->opcode == IBV_WR_LOCAL_INV)
			return 0;
		/* Type 2 only: type 1 windows are bound by ibv_bind_mw(). */
		return metaroce_bind_check(&qp->vqp.qp, wr->bind_mw.mw,
					   IBV_MW_TYPE_2,
					   &wr->bind_mw.bind_info);
	}
	for (i = 0; i < wr->num_sge; i++)
		*len += wr->sg_list[i].length;

	if (atomic && (wr->num_sge != 1 || *len != 8 ||
		       (wr->wr.atomic.remote_addr & 7)))
		return EINVAL;
	if (wr->send_flags & IBV_SEND_INLINE) {
		if (atomic || wr->opcode == IBV_WR_RDMA_READ)
			return EINVAL;
		if (*len > qp->sq.max_inline)
			return EINVAL;
	}
	return 0;
}

static void metaroce_write_send_wqe(struct metaroce_qp *qp,
				    struct metaroce_send_wqe *wqe,
				    const struct ibv_send_wr *wr, uint32_t len)
{
	uint8_t *inl = (uint8_t *)wqe->sge;
	int i;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;

	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wqe->imm_data = wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		wqe->invalidate_rkey = wr->invalidate_rkey;
		break;
	default:
		break;
	}
	if (wr->opcode == IBV_WR_LOCAL_INV)
		return;
	if (wr->opcode == IBV_WR_BIND_MW) {
		metaroce_bind_wqe(wqe, wr->bind_mw.mw, wr->bind_mw.rkey,
				  &wr->bind_mw.bind_info);
		return;
	}
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wqe->remote_addr = wr->wr.rdma.remote_addr;
		wqe->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->remote_addr = wr->wr.atomic.remote_addr;
		wqe->rkey = wr->wr.atomic.rkey;
		wqe->compare_add = wr->wr.atomic.compare_add;
		wqe->swap = wr->wr.atomic.swap;
		break;
	default:
		break;
	}
	if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
		wqe->ah_num = to_mah(wr->wr.ud.ah)->ah_num;
		wqe->remote_qpn = wr->wr.ud.remote_qpn;
		wqe->remote_qkey = wr->wr.ud.remote_qkey;
	}

	if (wr->send_flags & IBV_SEND_INLINE) {
		/* The data is copied now: the buffers are free on return. */
		wqe->inline_len = len;
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(inl, (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			inl += wr->sg_list[i].length;
		}
		return;
	}
	wqe->num_sge = (uint32_t)wr->num_sge;
	metaroce_copy_sges(wqe->sge, wr->sg_list, (size_t)wr->num_sge);
}

int metaroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		       struct ibv_send_wr **bad_wr)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	struct metaroce_uring *r = &qp->sq.ring;
	uint32_t start;
	uint64_t len;
	int ret = 0, db;

	*bad_wr = NULL;
	if (!metaroce_can_send(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&qp->sq.lock);
	start = r->idx;
	for (; wr; wr = wr->next) {
		ret = metaroce_check_send_wr(qp, wr, &len);
		if (!ret && metaroce_ring_full(r))
			ret = ENOMEM;
		if (ret) {
			*bad_wr = wr;
			break;
		}
		metaroce_write_send_wqe(qp, metaroce_uring_slot(r, r->idx), wr,
					(uint32_t)len);
		r->idx++;
		/* The key a type 2 window has once bound (ibv_mw.rkey). */
		if (wr->opcode == IBV_WR_BIND_MW)
			wr->bind_mw.mw->rkey = wr->bind_mw.rkey;
	}
	if (r->idx != start) {
		db = metaroce_sq_publish(qp);
		if (db && !ret)
			ret = db;
	}
	pthread_spin_unlock(&qp->sq.lock);
	return ret;
}

int metaroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	uint32_t start;
	int ret, db;

	*bad_wr = NULL;
	/* C10-97.2.1: no receives in RESET; a QP on an SRQ has no RQ. */
	if (ibqp->state == IBV_QPS_RESET || ibqp->srq) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&qp->rq.lock);
	start = qp->rq.ring.idx;
	ret = metaroce_wq_recv(&qp->rq, wr, bad_wr);
	if (qp->rq.ring.idx != start) {
		db = metaroce_rq_publish(qp);
		if (db && !ret)
			ret = db;
	}
	pthread_spin_unlock(&qp->rq.lock);
	return ret;
}
