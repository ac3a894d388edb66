// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wq.c - producing into the work queue rings the kernel maps for us: the
 * SQ and RQ of a QP (qp.c, qp_ex.c, mw.c) and the ring of an SRQ (srq.c).
 * How many SGEs a slot holds, whether the ring is full, writing receive
 * WQEs, and publishing the producer index with the doorbell the kernel
 * may ask for (<rdma/metaroce-abi.h>).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "metaroce.h"

/*
 * The SGEs granted by the kernel, capped by what a slot of r holds after a
 * WQE header of hdr bytes: we never write past a slot.
 */
uint32_t metaroce_wq_max_sge(const struct metaroce_uring *r, size_t hdr,
			     uint32_t granted)
{
	uint32_t fit = r->slot_size > hdr ?
		       (uint32_t)((r->slot_size - hdr) /
				  sizeof(struct metaroce_sge)) : 0;

	return granted < fit ? granted : fit;
}

bool metaroce_ring_full(const struct metaroce_uring *r)
{
	return r->idx - __atomic_load_n(&r->hdr->consumer, __ATOMIC_ACQUIRE) >=
	       metaroce_uring_slots(r);
}

void metaroce_copy_sges(struct metaroce_sge *dst, const struct ibv_sge *src,
			size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		dst[i].addr = src[i].addr;
		dst[i].length = src[i].length;
		dst[i].lkey = src[i].lkey;
	}
}

/*
 * Under wq->lock: write a receive WQE for each of the list wr into the
 * ring, from its index on, stopping at the first one with too many SGEs
 * (EINVAL) or that finds the ring full (ENOMEM): *bad_wr is then that one.
 * Returns 0 or the errno value; the caller publishes what was written.
 */
int metaroce_wq_recv(struct metaroce_wq *wq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr)
{
	struct metaroce_uring *r = &wq->ring;
	struct metaroce_recv_wqe *wqe;
	int ret = 0;

	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge)
			ret = EINVAL;
		else if (metaroce_ring_full(r))
			ret = ENOMEM;
		if (ret) {
			*bad_wr = wr;
			break;
		}
		wqe = metaroce_uring_slot(r, r->idx);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = (uint32_t)wr->num_sge;
		wqe->reserved = 0;
		metaroce_copy_sges(wqe->sge, wr->sg_list, (size_t)wr->num_sge);
		r->idx++;
	}
	return ret;
}

/*
 * Publish what we produced (release), then read the flags after a full
 * barrier: either the kernel sees our index or we see its request for a
 * doorbell (metaroce-abi.h).
 */
static bool metaroce_publish(struct metaroce_uring *r)
{
	__atomic_store_n(&r->hdr->producer, r->idx, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&r->hdr->flags, __ATOMIC_RELAXED) &
	       METAROCE_RING_F_NEED_WAKEUP;
}

/*
 * The POST_SEND and POST_RECV commands are laid out alike: one function
 * writes either (in struct ibv_post_send), with that command's WQE size.
 */
_Static_assert(sizeof(struct ibv_post_send) == sizeof(struct ibv_post_recv) &&
	       offsetof(struct ib_uverbs_post_send, response) ==
	       offsetof(struct ib_uverbs_post_recv, response) &&
	       offsetof(struct ib_uverbs_post_send, qp_handle) ==
	       offsetof(struct ib_uverbs_post_recv, qp_handle) &&
	       offsetof(struct ib_uverbs_post_send, wr_count) ==
	       offsetof(struct ib_uverbs_post_recv, wr_count) &&
	       offsetof(struct ib_uverbs_post_send, wqe_size) ==
	       offsetof(struct ib_uverbs_post_recv, wqe_size) &&
	       sizeof(struct ib_uverbs_post_send_resp) ==
	       sizeof(struct ib_uverbs_post_recv_resp),
	       "POST_SEND and POST_RECV layouts");

/*
 * A doorbell: a legacy POST_SEND or POST_RECV command with no work
 * requests, written straight to the command fd (libibverbs has no helper
 * for an empty one).  Returns 0 or an errno value.
 */
static int metaroce_doorbell(struct ibv_qp *ibqp, uint32_t command,
			     uint32_t wqe_size)
{
	struct ib_uverbs_post_send_resp resp;
	struct ibv_post_send cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.hdr.command = command;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.core_payload.response = (uintptr_t)&resp;
	cmd.core_payload.qp_handle = ibqp->handle;
	cmd.core_payload.wqe_size = wqe_size;
	if (write(ibqp->context->cmd_fd, &cmd, sizeof(cmd)) != sizeof(cmd))
		return errno;
	return 0;
}

/*
 * Under the SQ lock, after producing: the kernel's send worker went idle
 * and set NEED_WAKEUP.  0 or the doorbell's errno value.
 */
int metaroce_sq_publish(struct metaroce_qp *qp)
{
	if (!metaroce_publish(&qp->sq.ring))
		return 0;
	return metaroce_doorbell(&qp->vqp.qp, IB_USER_VERBS_CMD_POST_SEND,
				 sizeof(struct ib_uverbs_send_wr));
}

/*
 * Under the RQ lock, after producing: the QP is in the error state, so the
 * kernel asks for a doorbell to flush what we posted.  0 or its errno value.
 */
int metaroce_rq_publish(struct metaroce_qp *qp)
{
	if (!metaroce_publish(&qp->rq.ring))
		return 0;
	return metaroce_doorbell(&qp->vqp.qp, IB_USER_VERBS_CMD_POST_RECV,
				 sizeof(struct ib_uverbs_recv_wr));
}

/*
 * Under the SRQ lock, after producing: the WQEs' contents before the index.
 * The kernel takes from an SRQ when a message needs a WQE: no doorbell.
 */
void metaroce_srq_publish(struct metaroce_srq *srq)
{
	__atomic_store_n(&srq->rq.ring.hdr->producer, srq->rq.ring.idx,
			 __ATOMIC_RELEASE);
}
