// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cq.c - completion queues.
 *
 * A CQ is a ring the kernel produces struct metaroce_cqe into and we
 * consume from (<rdma/metaroce-abi.h>): ibv_poll_cq() and
 * ibv_req_notify_cq() are plain memory accesses, no system call.
 * Creating, resizing and destroying are commands.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metaroce.h"

/*
 * The end of creating a CQ, once the CREATE_CQ command returned ret: map
 * the ring the response describes and set up the lock.  On a failure, the
 * command's too, undo what was done, free cq and set errno.  Returns 0 or
 * that errno value.
 */
int metaroce_cq_finish_create(struct ibv_context *context,
			      struct metaroce_cq *cq, int ret,
			      const struct metaroce_create_cq_resp *resp)
{
	if (ret)
		goto err_free;
	ret = metaroce_uring_map(context, &cq->ring, &resp->ring,
				 sizeof(struct metaroce_cqe));
	if (ret)
		goto err_destroy;
	/* Resumes where the kernel's view of our index is (0 when new). */
	cq->ring.idx = __atomic_load_n(&cq->ring.hdr->consumer,
				       __ATOMIC_RELAXED);
	ret = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_unmap;
	return 0;

err_unmap:
	metaroce_uring_unmap(&cq->ring);
err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	free(cq);
	errno = ret;
	return ret;
}

struct ibv_cq *metaroce_create_cq(struct ibv_context *context, int cqe,
				  struct ibv_comp_channel *channel,
				  int comp_vector)
{
	struct metaroce_create_cq_resp_full resp;
	struct ibv_create_cq cmd;
	struct metaroce_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_cq(context, cqe, channel, comp_vector,
				&cq->vcq.cq, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (metaroce_cq_finish_create(context, cq, ret, &resp.drv_payload))
		return NULL;
	return &cq->vcq.cq;
}

int metaroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct metaroce_cq *cq = to_mcq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;

	metaroce_uring_unmap(&cq->ring);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

static void metaroce_copy_wc(struct ibv_wc *wc, const struct ib_uverbs_wc *u)
{
	wc->wr_id = u->wr_id;
	wc->status = (enum ibv_wc_status)u->status;
	wc->opcode = (enum ibv_wc_opcode)u->opcode;
	wc->vendor_err = u->vendor_err;
	wc->byte_len = u->byte_len;
	/* imm_data (network order) or invalidated_rkey: the same 32 bits. */
	wc->imm_data = u->ex.imm_data;
	wc->qp_num = u->qp_num;
	wc->src_qp = u->src_qp;
	wc->wc_flags = u->wc_flags;
	wc->pkey_index = u->pkey_index;
	wc->slid = u->slid;
	wc->sl = u->sl;
	wc->dlid_path_bits = u->dlid_path_bits;
}

int metaroce_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct metaroce_cq *cq = to_mcq(ibcq);
	struct metaroce_uring *r = &cq->ring;
	uint32_t prod;
	int n = 0;

	if (ne <= 0)
		return 0;

	pthread_spin_lock(&cq->lock);
	/* Pairs with the kernel's release: the CQEs before the index. */
	prod = __atomic_load_n(&r->hdr->producer, __ATOMIC_ACQUIRE);
	while (n < ne && r->idx != prod) {
		metaroce_copy_wc(&wc[n++], metaroce_uring_slot(r, r->idx));
		r->idx++;
	}
	if (n)
		/* Our reads of the slots are done before the kernel reuses them. */
		__atomic_store_n(&r->hdr->consumer, r->idx, __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
	return n;
}

/*
 * Arm the CQ through its ring: the kernel raises the completion event for
 * the next (solicited) completion it adds and clears the bit.  The atomic
 * OR is a full barrier, ordering the arming before any later poll.
 */
int metaroce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct metaroce_cq *cq = to_mcq(ibcq);

	__atomic_fetch_or(&cq->ring.hdr->flags,
			  solicited_only ? METAROCE_CQ_F_ARMED_SOLICITED :
					   METAROCE_CQ_F_ARMED_NEXT,
			  __ATOMIC_SEQ_CST);
	return 0;
}

/*
 * The kernel moves the pending completions to a new ring and hands us its
 * mapping; nobody polls meanwhile (we hold the CQ lock).
 */
int metaroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct metaroce_cq *cq = to_mcq(ibcq);
	struct metaroce_resize_cq_resp_full resp;
	struct ibv_resize_cq cmd;
	struct metaroce_uring ring;
	int ret;

	if (cqe <= 0)
		return EINVAL;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	pthread_spin_lock(&cq->lock);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto out;

	ret = metaroce_uring_map(ibcq->context, &ring, &resp.drv_payload.ring,
				 sizeof(struct metaroce_cqe));
	if (ret) {
		/*
		 * The kernel has switched rings: the CQ cannot be used any
		 * more.  Keep the old mapping so polling stays memory safe.
		 */
		goto out;
	}
	ring.idx = __atomic_load_n(&ring.hdr->consumer, __ATOMIC_RELAXED);
	metaroce_uring_unmap(&cq->ring);
	cq->ring = ring;
out:
	pthread_spin_unlock(&cq->lock);
	return ret;
}
