// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mw.c - memory windows: ibv_alloc_mw, ibv_dealloc_mw and ibv_bind_mw
 * (type 1), and the BIND_MW WQE (metaroce-abi.h) that ibv_bind_mw,
 * IBV_WR_BIND_MW in ibv_post_send and ibv_wr_bind_mw write into the SQ.
 *
 * What the provider can see is checked when posting (errno); what only
 * the kernel knows (the MR's rights and range, the window's state) fails
 * the bind's completion with IBV_WC_MW_BIND_ERR.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metaroce.h"

/*
 * A window's rights; LOCAL_WRITE is accepted among them and ignored, as
 * mlx5 and rxe do (a window grants remote access only).
 */
#define METAROCE_MW_ACCESS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			    IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED | \
			    IBV_ACCESS_LOCAL_WRITE)

struct ibv_mw *metaroce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int ret;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

int metaroce_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (ret)
		return ret;
	free(mw);
	return 0;
}

/*
 * Checks of a bind that need no kernel state; 0 or an errno value.  type is
 * the verb's: type 1 by ibv_bind_mw(), type 2 by a work request.
 */
int metaroce_bind_check(const struct ibv_qp *qp, const struct ibv_mw *mw,
			enum ibv_mw_type type,
			const struct ibv_mw_bind_info *info)
{
	if (!mw || mw->type != type || mw->context != qp->context)
		return EINVAL;
	if (info->mw_access_flags & ~METAROCE_MW_ACCESS)
		return EINVAL;
	if (type == IBV_MW_TYPE_1) {
		/* o10-36.2.2; a zero length unbinds, without an MR. */
		if (info->mw_access_flags & IBV_ACCESS_ZERO_BASED)
			return EINVAL;
		if (!info->mr && (info->addr || info->length))
			return EINVAL;
	} else if (!info->mr || !info->length) {
		/* o10-37.2.40: a type 2 window is invalidated, not unbound. */
		return EINVAL;
	}
	/* As ibv_bind_mw(3) (a bind work request's fails at completion). */
	if (type == IBV_MW_TYPE_1 && info->mr && info->mr->pd != mw->pd)
		return EPERM;
	return 0;
}

/* Fill the bind part of a WQE whose header the caller wrote. */
void metaroce_bind_wqe(struct metaroce_send_wqe *wqe, const struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct metaroce_wqe_bind *b = &wqe->bind;

	b->addr = info->length ? info->addr : 0;
	b->length = info->length;
	b->mw_rkey = mw->rkey;
	b->new_rkey = rkey;
	b->mr_lkey = info->mr && info->length ? info->mr->lkey : 0;
	b->access = info->mw_access_flags;
	b->type = mw->type == IBV_MW_TYPE_1 ? METAROCE_BIND_TYPE_1 :
					       METAROCE_BIND_TYPE_2;
	b->reserved = 0;
}

/*
 * ibv_bind_mw(3): post the bind of a type 1 window with the next key
 * (ibv_inc_rkey), which mw->rkey holds on return.
 */
int metaroce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		     struct ibv_mw_bind *mw_bind)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	struct metaroce_uring *r = &qp->sq.ring;
	struct metaroce_send_wqe *wqe;
	uint32_t rkey;
	int ret;

	if (!metaroce_can_send(ibqp) ||
	    !metaroce_opcode_ok(ibqp->qp_type, IBV_WR_BIND_MW) ||
	    mw_bind->send_flags & ~(IBV_SEND_FENCE | IBV_SEND_SIGNALED))
		return EINVAL;
	ret = metaroce_bind_check(ibqp, mw, IBV_MW_TYPE_1, &mw_bind->bind_info);
	if (ret)
		return ret;

	rkey = ibv_inc_rkey(mw->rkey);
	pthread_spin_lock(&qp->sq.lock);
	if (metaroce_ring_full(r)) {
		pthread_spin_unlock(&qp->sq.lock);
		return ENOMEM;
	}
	wqe = metaroce_uring_slot(r, r->idx);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = mw_bind->wr_id;
	wqe->opcode = IBV_WR_BIND_MW;
	wqe->send_flags = mw_bind->send_flags;
	metaroce_bind_wqe(wqe, mw, rkey, &mw_bind->bind_info);
	r->idx++;
	ret = metaroce_sq_publish(qp);
	pthread_spin_unlock(&qp->sq.lock);
	/* Posted even if the doorbell failed: the key is the new one. */
	mw->rkey = rkey;
	return ret;
}
