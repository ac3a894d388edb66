// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp_ex.c - extended QPs (ibv_create_qp_ex) and the ibv_wr_* work request
 * builders (ibv_wr_post(3)).
 *
 * The builders write straight into the SQ ring that ibv_post_send() uses
 * (qp.c): wr_start takes the SQ lock, each wr_<opcode>() starts a WQE in
 * the next slot, the wr_set_*() calls fill in its data or address, and
 * wr_complete publishes them all at once, ringing the doorbell only if
 * the kernel's send worker asked for it.  The first error (full SQ, too
 * many SGEs, too much inline data, ...) is remembered: the rest of the
 * batch is ignored and wr_complete returns the error having posted
 * nothing.  wr_abort drops the batch.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metaroce.h"

/* The operations each QP type supports (ibv_qp_init_attr_ex.send_ops_flags). */
#define METAROCE_RC_SEND_OPS (IBV_QP_EX_WITH_RDMA_WRITE |		\
			      IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |	\
			      IBV_QP_EX_WITH_SEND |			\
			      IBV_QP_EX_WITH_SEND_WITH_IMM |		\
			      IBV_QP_EX_WITH_RDMA_READ |		\
			      IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |	\
			      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |	\
			      IBV_QP_EX_WITH_SEND_WITH_INV |		\
			      IBV_QP_EX_WITH_BIND_MW |			\
			      IBV_QP_EX_WITH_LOCAL_INV)
#define METAROCE_UD_SEND_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)

static void wr_fail(struct metaroce_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_cur = NULL;
}

/*
 * A UD WQE needs its address (wr_set_ud_addr) before the next WQE starts
 * or the batch completes.
 */
static bool wr_cur_incomplete(const struct metaroce_qp *qp)
{
	return qp->wr_cur && qp->wr_need_addr;
}

static void metaroce_wr_start(struct ibv_qp_ex *qpx)
{
	struct metaroce_qp *qp = to_mqp_ex(qpx);

	pthread_spin_lock(&qp->sq.lock);
	qp->wr_first = qp->sq.ring.idx;
	qp->wr_cur = NULL;
	qp->wr_err = metaroce_can_send(&qp->vqp.qp) ? 0 : EINVAL;
}

/* Start the next WQE: opcode, qpx->wr_id and qpx->wr_flags. */
static struct metaroce_send_wqe *wr_new(struct ibv_qp_ex *qpx,
					enum ibv_wr_opcode opcode)
{
	struct metaroce_qp *qp = to_mqp_ex(qpx);
	struct metaroce_uring *r = &qp->sq.ring;
	struct metaroce_send_wqe *wqe;

	if (qp->wr_err)
		return NULL;
	if (wr_cur_incomplete(qp) ||
	    !metaroce_opcode_ok(qp->vqp.qp.qp_type, opcode) ||
	    qpx->wr_flags & ~METAROCE_SEND_FLAGS) {
		wr_fail(qp, EINVAL);
		return NULL;
	}
	if (metaroce_ring_full(r)) {
		wr_fail(qp, ENOMEM);
		return NULL;
	}
	wqe = metaroce_uring_slot(r, r->idx++);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = qpx->wr_id;
	wqe->opcode = opcode;
	/* Inline is chosen by the data setter, not by the flag. */
	wqe->send_flags = qpx->wr_flags & ~IBV_SEND_INLINE;
	qp->wr_cur = wqe;
	qp->wr_need_addr = qp->vqp.qp.qp_type == IBV_QPT_UD;
	return wqe;
}

static void metaroce_wr_send(struct ibv_qp_ex *qpx)
{
	wr_new(qpx, IBV_WR_SEND);
}

static void metaroce_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct metaroce_send_wqe *wqe = wr_new(qpx, IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->imm_data = imm_data;
}

static void metaroce_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct metaroce_send_wqe *wqe = wr_new(qpx, IBV_WR_SEND_WITH_INV);

	if (wqe)
		wqe->invalidate_rkey = rkey;
}

static struct metaroce_send_wqe *wr_rdma(struct ibv_qp_ex *qpx,
					 enum ibv_wr_opcode opcode,
					 uint32_t rkey, uint64_t remote_addr)
{
	struct metaroce_send_wqe *wqe = wr_new(qpx, opcode);

	if (wqe) {
		wqe->rkey = rkey;
		wqe->remote_addr = remote_addr;
	}
	return wqe;
}

static void metaroce_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr);
}

static void metaroce_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				       uint64_t remote_addr, __be32 imm_data)
{
	struct metaroce_send_wqe *wqe =
		wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr);

	if (wqe)
		wqe->imm_data = imm_data;
}

static void metaroce_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
				  uint64_t remote_addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, remote_addr);
}

static void wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode,
		      uint32_t rkey, uint64_t remote_addr, uint64_t compare_add,
		      uint64_t swap)
{
	struct metaroce_send_wqe *wqe;

	/* An atomic works on one aligned 64-bit word (ibv_post_send(3)). */
	if (remote_addr & 7) {
		wr_fail(to_mqp_ex(qpx), EINVAL);
		return;
	}
	wqe = wr_rdma(qpx, opcode, rkey, remote_addr);
	if (wqe) {
		wqe->compare_add = compare_add;
		wqe->swap = swap;
	}
}

static void metaroce_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				       uint64_t remote_addr, uint64_t compare,
				       uint64_t swap)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr, compare,
		  swap);
}

static void metaroce_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
					 uint64_t remote_addr, uint64_t add)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr, add, 0);
}

/* ibv_wr_bind_mw: a type 2 window (type 1 ones use ibv_bind_mw). */
static void metaroce_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
				uint32_t rkey,
				const struct ibv_mw_bind_info *info)
{
	struct metaroce_qp *qp = to_mqp_ex(qpx);
	struct metaroce_send_wqe *wqe;
	int err;

	if (qp->wr_err)
		return;
	err = metaroce_bind_check(&qp->vqp.qp, mw, IBV_MW_TYPE_2, info);
	if (!err && qpx->wr_flags & IBV_SEND_SOLICITED)
		err = EINVAL;
	if (err) {
		wr_fail(qp, err);
		return;
	}
	wqe = wr_new(qpx, IBV_WR_BIND_MW);
	if (!wqe)
		return;
	metaroce_bind_wqe(wqe, mw, rkey, info);
	/* As ibv_post_send() does: the key the window has once bound. */
	mw->rkey = rkey;
}

static void metaroce_wr_local_inv(struct ibv_qp_ex *qpx,
				  uint32_t invalidate_rkey)
{
	struct metaroce_send_wqe *wqe;

	if (qpx->wr_flags & IBV_SEND_SOLICITED) {
		wr_fail(to_mqp_ex(qpx), EINVAL);
		return;
	}
	wqe = wr_new(qpx, IBV_WR_LOCAL_INV);
	if (wqe)
		wqe->invalidate_rkey = invalidate_rkey;
}

static void metaroce_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				    uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct metaroce_qp *qp = to_mqp_ex(qpx);
	struct metaroce_send_wqe *wqe = qp->wr_cur;

	if (!wqe)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_UD || !ah) {
		wr_fail(qp, EINVAL);
		return;
	}
	wqe->ah_num = to_mah(ah)->ah_num;
	wqe->remote_qpn = remote_qpn;
	wqe->remote_qkey = remote_qkey;
	qp->wr_need_addr = false;
}

static bool wr_is_atomic(const struct metaroce_send_wqe *wqe)
{
	return wqe->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       wqe->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* Local operations carry no data. */
static bool wr_is_local(const struct metaroce_send_wqe *wqe)
{
	return wqe->opcode == IBV_WR_BIND_MW || wqe->opcode == IBV_WR_LOCAL_INV;
}

static void metaroce_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				     const struct ibv_sge *sg_list)
{
	struct metaroce_qp *qp = to_mqp_ex(qpx);
	struct metaroce_send_wqe *wqe = qp->wr_cur;

	if (!wqe)
		return;
	if (num_sge > qp->sq.max_sge || wr_is_local(wqe) ||
	    (wr_is_atomic(wqe) && (num_sge != 1 || sg_list[0].length != 8))) {
		wr_fail(qp, EINVAL);
		return;
	}
	wqe->num_sge = (uint32_t)num_sge;
	metaroce_copy_sges(wqe->sge, sg_list, num_sge);
}

static void metaroce_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
				uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	metaroce_wr_set_sge_list(qpx, 1, &sge);
}

/* Inline data is copied now: the buffers are free when this returns. */
static void metaroce_wr_set_inline_data_list(struct ibv_qp_ex *qpx,
					     size_t num_buf,
					     const struct ibv_data_buf *buf)
{
	struct metaroce_qp *qp = to_mqp_ex(qpx);
	struct metaroce_send_wqe *wqe = qp->wr_cur;
	uint8_t *dst;
	size_t i, len = 0;

	if (!wqe)
		return;
	for (i = 0; i < num_buf; i++)
		len += buf[i].length;
	if (wr_is_atomic(wqe) || wqe->opcode == IBV_WR_RDMA_READ ||
	    wr_is_local(wqe) || len > qp->sq.max_inline) {
		wr_fail(qp, EINVAL);
		return;
	}
	dst = (uint8_t *)wqe->sge;
	for (i = 0; i < num_buf; i++) {
		memcpy(dst, buf[i].addr, buf[i].length);
		dst += buf[i].length;
	}
	wqe->num_sge = 0;
	wqe->inline_len = (uint32_t)len;
	wqe->send_flags |= IBV_SEND_INLINE;
}

static void metaroce_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
					size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	metaroce_wr_set_inline_data_list(qpx, 1, &buf);
}

/* Forget the WQEs of the batch: nobody saw our index move. */
static void wr_rollback(struct metaroce_qp *qp)
{
	qp->sq.ring.idx = qp->wr_first;
	qp->wr_cur = NULL;
}

static int metaroce_wr_complete(struct ibv_qp_ex *qpx)
{
	struct metaroce_qp *qp = to_mqp_ex(qpx);
	int ret = qp->wr_err;

	if (!ret && wr_cur_incomplete(qp))
		ret = EINVAL;
	if (ret)
		wr_rollback(qp);
	else if (qp->sq.ring.idx != qp->wr_first)
		ret = metaroce_sq_publish(qp);
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
	return ret;
}

static void metaroce_wr_abort(struct ibv_qp_ex *qpx)
{
	struct metaroce_qp *qp = to_mqp_ex(qpx);

	wr_rollback(qp);
	pthread_spin_unlock(&qp->sq.lock);
}

static void metaroce_set_qp_ex_ops(struct metaroce_qp *qp, uint64_t ops)
{
	struct ibv_qp_ex *x = &qp->vqp.qp_ex;

	x->wr_start = metaroce_wr_start;
	x->wr_complete = metaroce_wr_complete;
	x->wr_abort = metaroce_wr_abort;
	if (ops & IBV_QP_EX_WITH_SEND)
		x->wr_send = metaroce_wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		x->wr_send_imm = metaroce_wr_send_imm;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		x->wr_send_inv = metaroce_wr_send_inv;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		x->wr_rdma_write = metaroce_wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		x->wr_rdma_write_imm = metaroce_wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		x->wr_rdma_read = metaroce_wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		x->wr_atomic_cmp_swp = metaroce_wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		x->wr_atomic_fetch_add = metaroce_wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		x->wr_bind_mw = metaroce_wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		x->wr_local_inv = metaroce_wr_local_inv;
	x->wr_set_sge = metaroce_wr_set_sge;
	x->wr_set_sge_list = metaroce_wr_set_sge_list;
	x->wr_set_inline_data = metaroce_wr_set_inline_data;
	x->wr_set_inline_data_list = metaroce_wr_set_inline_data_list;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD)
		x->wr_set_ud_addr = metaroce_wr_set_ud_addr;
}

/*
 * ibv_create_qp_ex(): comp_mask PD (required) and SEND_OPS_FLAGS; RC and
 * UD, with an SRQ or not (the kernel decides).  libibverbs sends a plain ibv_create_qp() here only when comp_mask
 * is exactly PD.
 */
struct ibv_qp *metaroce_create_qp_ex(struct ibv_context *context,
				     struct ibv_qp_init_attr_ex *attr)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			       IBV_QP_INIT_ATTR_CREATE_FLAGS;
	struct metaroce_create_qp_resp_full resp;
	struct ibv_qp_init_attr_ex kattr;
	struct ibv_create_qp cmd;
	struct metaroce_qp *qp;
	uint64_t ops = 0, can;
	int ret;

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & ~known ||
	    (attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS &&
	     attr->create_flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	switch (attr->qp_type) {
	case IBV_QPT_RC:
		can = METAROCE_RC_SEND_OPS;
		break;
	case IBV_QPT_UD:
		can = METAROCE_UD_SEND_OPS;
		break;
	default:
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ops = attr->send_ops_flags;
		if (ops & ~can) {
			errno = EOPNOTSUPP;
			return NULL;
		}
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	/* The kernel needs none of the extensions: a plain CREATE_QP. */
	kattr = *attr;
	kattr.comp_mask &= IBV_QP_INIT_ATTR_PD;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_qp_ex(context, &qp->vqp, &kattr, &cmd, sizeof(cmd),
				   &resp.ibv_resp, sizeof(resp));
	if (metaroce_qp_finish_create(context, qp, ret, &kattr.cap,
				      &resp.drv_payload))
		return NULL;
	attr->cap = kattr.cap;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		metaroce_set_qp_ex_ops(qp, ops);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	return &qp->vqp.qp;
}
