// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srq.c - shared receive queues.  The SRQ is a ring of receive WQEs mapped
 * from the kernel (struct metaroce_create_srq_resp): ibv_post_srq_recv
 * writes WQEs and publishes the producer index, with no system call; the
 * kernel takes a WQE when a message of a QP on the SRQ first needs one.
 * The limit (ibv_modify_srq) and queries go through the kernel.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metaroce.h"

struct ibv_srq *metaroce_create_srq(struct ibv_pd *pd,
				    struct ibv_srq_init_attr *attr)
{
	struct metaroce_create_srq_resp_full resp;
	struct ibv_create_srq cmd;
	struct metaroce_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_srq(pd, &srq->ibv_srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = metaroce_uring_map(pd->context, &srq->rq.ring,
				 &resp.drv_payload.ring,
				 sizeof(struct metaroce_recv_wqe));
	if (ret)
		goto err_destroy;
	srq->rq.max_sge = metaroce_wq_max_sge(&srq->rq.ring,
					      sizeof(struct metaroce_recv_wqe),
					      attr->attr.max_sge);
	attr->attr.max_sge = srq->rq.max_sge;
	ret = pthread_spin_init(&srq->rq.lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_unmap;
	return &srq->ibv_srq;

err_unmap:
	metaroce_uring_unmap(&srq->rq.ring);
err_destroy:
	ibv_cmd_destroy_srq(&srq->ibv_srq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

int metaroce_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			int attr_mask)
{
	struct ibv_modify_srq cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_modify_srq(srq, attr, attr_mask, &cmd, sizeof(cmd));
}

int metaroce_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

int metaroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct metaroce_srq *srq = to_msrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	metaroce_uring_unmap(&srq->rq.ring);
	pthread_spin_destroy(&srq->rq.lock);
	free(srq);
	return 0;
}

int metaroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad_wr)
{
	struct metaroce_srq *srq = to_msrq(ibsrq);
	uint32_t start;
	int ret;

	*bad_wr = NULL;
	pthread_spin_lock(&srq->rq.lock);
	start = srq->rq.ring.idx;
	ret = metaroce_wq_recv(&srq->rq, wr, bad_wr);
	if (srq->rq.ring.idx != start)
		metaroce_srq_publish(srq);
	pthread_spin_unlock(&srq->rq.lock);
	return ret;
}
