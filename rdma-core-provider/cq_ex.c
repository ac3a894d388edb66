// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cq_ex.c - extended completion queues (ibv_create_cq_ex).
 *
 * The same ring as a plain CQ (cq.c), read in place: start_poll takes the
 * CQ lock and points at the oldest CQE, next_poll consumes it and moves on,
 * end_poll consumes the last one and unlocks; the read_*() accessors read
 * fields of the current CQE.  No system call anywhere.  ibv_poll_cq() works
 * on an extended CQ too.
 *
 * Completion timestamps: when asked for, the kernel stamps each CQE with
 * CLOCK_MONOTONIC and CLOCK_REALTIME nanoseconds (<rdma/metaroce-abi.h>).
 * The device clock is thus 1 GHz (hca_core_clock 1000000 kHz), and
 * ibv_query_rt_values_ex() reads it as mlx5 does, all in tv_nsec.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metaroce.h"

#define METAROCE_WC_EX_FLAGS (IBV_WC_EX_WITH_BYTE_LEN |		\
			      IBV_WC_EX_WITH_IMM |			\
			      IBV_WC_EX_WITH_QP_NUM |			\
			      IBV_WC_EX_WITH_SRC_QP |			\
			      IBV_WC_EX_WITH_SLID |			\
			      IBV_WC_EX_WITH_SL |			\
			      IBV_WC_EX_WITH_DLID_PATH_BITS |		\
			      IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |	\
			      IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

/*
 * Point at the CQE at our consumer index, if the kernel produced it; the
 * caller holds the lock.  Returns 0 or ENOENT.
 */
static int metaroce_cq_load(struct metaroce_cq *cq)
{
	struct metaroce_uring *r = &cq->ring;

	if (r->idx == cq->prod) {
		/* Pairs with the kernel's release: the CQE before the index. */
		cq->prod = __atomic_load_n(&r->hdr->producer, __ATOMIC_ACQUIRE);
		if (r->idx == cq->prod) {
			cq->cur = NULL;
			return ENOENT;
		}
	}
	cq->cur = metaroce_uring_slot(r, r->idx);
	cq->vcq.cq_ex.wr_id = cq->cur->wc.wr_id;
	cq->vcq.cq_ex.status = (enum ibv_wc_status)cq->cur->wc.status;
	return 0;
}

/* Done with the current CQE: hand its slot back to the kernel. */
static void metaroce_cq_consume(struct metaroce_cq *cq)
{
	struct metaroce_uring *r = &cq->ring;

	r->idx++;
	/* Our reads of the slot are done before the kernel reuses it. */
	__atomic_store_n(&r->hdr->consumer, r->idx, __ATOMIC_RELEASE);
	cq->cur = NULL;
}

static int metaroce_start_poll(struct ibv_cq_ex *ibcq,
			       struct ibv_poll_cq_attr *attr)
{
	struct metaroce_cq *cq = to_mcq_ex(ibcq);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	cq->prod = cq->ring.idx;	/* forces a fresh read */
	ret = metaroce_cq_load(cq);
	/* ENOENT: no end_poll follows (ibv_create_cq_ex(3)). */
	if (ret)
		pthread_spin_unlock(&cq->lock);
	return ret;
}

static int metaroce_next_poll(struct ibv_cq_ex *ibcq)
{
	struct metaroce_cq *cq = to_mcq_ex(ibcq);

	if (cq->cur)
		metaroce_cq_consume(cq);
	return metaroce_cq_load(cq);
}

static void metaroce_end_poll(struct ibv_cq_ex *ibcq)
{
	struct metaroce_cq *cq = to_mcq_ex(ibcq);

	if (cq->cur)
		metaroce_cq_consume(cq);
	pthread_spin_unlock(&cq->lock);
}

static const struct ib_uverbs_wc *cur_wc(struct ibv_cq_ex *ibcq)
{
	return &to_mcq_ex(ibcq)->cur->wc;
}

static enum ibv_wc_opcode metaroce_read_opcode(struct ibv_cq_ex *ibcq)
{
	return (enum ibv_wc_opcode)cur_wc(ibcq)->opcode;
}

static uint32_t metaroce_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return cur_wc(ibcq)->vendor_err;
}

static uint32_t metaroce_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return cur_wc(ibcq)->byte_len;
}

/* Immediate data (network order) or, with IBV_WC_WITH_INV, the rkey. */
static __be32 metaroce_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return (__be32)cur_wc(ibcq)->ex.imm_data;
}

static uint32_t metaroce_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return cur_wc(ibcq)->qp_num;
}

static uint32_t metaroce_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return cur_wc(ibcq)->src_qp;
}

static unsigned int metaroce_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return cur_wc(ibcq)->wc_flags;
}

static uint32_t metaroce_read_slid(struct ibv_cq_ex *ibcq)
{
	return cur_wc(ibcq)->slid;
}

static uint8_t metaroce_read_sl(struct ibv_cq_ex *ibcq)
{
	return cur_wc(ibcq)->sl;
}

static uint8_t metaroce_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return cur_wc(ibcq)->dlid_path_bits;
}

static uint64_t metaroce_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return to_mcq_ex(ibcq)->cur->completion_ts;
}

static uint64_t metaroce_read_completion_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	return to_mcq_ex(ibcq)->cur->wallclock_ns;
}

static void metaroce_set_cq_ex_ops(struct ibv_cq_ex *c, uint64_t wc_flags)
{
	c->start_poll = metaroce_start_poll;
	c->next_poll = metaroce_next_poll;
	c->end_poll = metaroce_end_poll;
	c->read_opcode = metaroce_read_opcode;
	c->read_vendor_err = metaroce_read_vendor_err;
	c->read_wc_flags = metaroce_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		c->read_byte_len = metaroce_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		c->read_imm_data = metaroce_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		c->read_qp_num = metaroce_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		c->read_src_qp = metaroce_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		c->read_slid = metaroce_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		c->read_sl = metaroce_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		c->read_dlid_path_bits = metaroce_read_dlid_path_bits;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		c->read_completion_ts = metaroce_read_completion_ts;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		c->read_completion_wallclock_ns =
			metaroce_read_completion_wallclock_ns;
}

struct ibv_cq_ex *metaroce_create_cq_ex(struct ibv_context *context,
					struct ibv_cq_init_attr_ex *attr)
{
	struct metaroce_create_cq_ex_resp_full resp;
	struct ibv_create_cq_ex cmd;
	struct metaroce_cq *cq;
	int ret;

	/*
	 * Neither parent domains nor IGNORE_OVERRUN / single-threaded
	 * flags, and no CVLAN, flow tag or tag matching fields.
	 */
	if (attr->wc_flags & ~(uint64_t)METAROCE_WC_EX_FLAGS ||
	    attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS ||
	    (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS && attr->flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	/* The timestamp wc_flags ask the kernel to stamp every CQE. */
	ret = ibv_cmd_create_cq_ex(context, attr, &cq->vcq, &cmd, sizeof(cmd),
				   &resp.ibv_resp, sizeof(resp), 0);
	if (metaroce_cq_finish_create(context, cq, ret, &resp.drv_payload))
		return NULL;
	metaroce_set_cq_ex_ops(&cq->vcq.cq_ex, attr->wc_flags);
	return &cq->vcq.cq_ex;
}

/* The device clock now, in the units of read_completion_ts (ns). */
int metaroce_query_rt_values(struct ibv_context *context,
			     struct ibv_values_ex *values)
{
	struct timespec now;

	(void)context;
	/* comp_mask: in, the values asked for; out, those returned. */
	if (!(values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK)) {
		values->comp_mask = 0;
		return 0;
	}
	if (clock_gettime(CLOCK_MONOTONIC, &now))
		return errno;
	values->raw_clock.tv_sec = 0;
	values->raw_clock.tv_nsec = now.tv_sec * 1000000000L + now.tv_nsec;
	values->comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	return 0;
}
