// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Addressing (RoCE v2 address vectors) and the QP state transitions of RC
 * and UD queue pairs, with the attributes kernel ULPs use.
 */
#include "kverbs.h"

/*
 * First PSNs.  a->b starts just below the 24-bit wrap, so every test with
 * more than a few packets from a to b crosses it, as random PSNs do.
 */
#define KV_PSN_AB		0xfffff0
#define KV_PSN_BA		0x000100

void kv_ah_attr(struct rdma_ah_attr *ah, const struct kv_dev *src,
		const struct kv_dev *dst)
{
	union ib_gid dgid = dst->gid;

	memset(ah, 0, sizeof(*ah));
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(ah, KV_PORT);
	rdma_ah_set_grh(ah, &dgid, 0, src->gid_index, KV_HOP_LIMIT, 0);
	memcpy(ah->roce.dmac, src->peer_mac, ETH_ALEN);
}

void kv_rc_attr_default(struct kv_rc_attr *rca)
{
	rca->rnr_retry = 7;
	rca->min_rnr_timer = IB_RNR_TIMER_000_64;
	rca->timeout = clamp(kv_qp_timeout, 1U, 31U);
	rca->retry_cnt = 7;
}

int kv_modify(struct kv_test *t, struct kv_ep *ep, struct ib_qp_attr *attr,
	      int mask, const char *what)
{
	int err = ib_modify_qp(ep->qp, attr, mask);

	if (err)
		return kv_fail(t, "%s: ib_modify_qp(%s): %pe", ep->dev->name,
			       what, ERR_PTR(err));
	return 0;
}

int kv_rc_to_init(struct kv_test *t, struct kv_ep *ep)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = KV_PORT,
		.qp_access_flags = KV_RC_ACCESS,
	};

	return kv_modify(t, ep, &attr,
			 IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			 IB_QP_ACCESS_FLAGS, "RESET->INIT");
}

int kv_rc_to_rtr(struct kv_test *t, struct kv_ep *ep, u32 dest_qpn,
		 u32 rq_psn, const struct kv_rc_attr *rca)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTR,
		.path_mtu = KV_PATH_MTU,
		.dest_qp_num = dest_qpn,
		.rq_psn = rq_psn,
		.max_dest_rd_atomic = KV_RD_ATOMIC,
		.min_rnr_timer = rca->min_rnr_timer,
	};

	kv_ah_attr(&attr.ah_attr, ep->dev, ep->peer);
	return kv_modify(t, ep, &attr,
			 IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			 IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			 IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER,
			 "INIT->RTR");
}

int kv_rc_to_rts(struct kv_test *t, struct kv_ep *ep, u32 sq_psn,
		 const struct kv_rc_attr *rca)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTS,
		.sq_psn = sq_psn,
		.timeout = rca->timeout,
		.retry_cnt = rca->retry_cnt,
		.rnr_retry = rca->rnr_retry,
		.max_rd_atomic = KV_RD_ATOMIC,
	};

	return kv_modify(t, ep, &attr,
			 IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT |
			 IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			 IB_QP_MAX_QP_RD_ATOMIC, "RTR->RTS");
}

/*
 * Both sides to INIT, both to RTR, then both to RTS, so that neither sends
 * before its peer can receive.  rca/rcb: a's and b's retry and RNR values.
 */
int kv_rc_connect(struct kv_test *t, struct kv_ep *a, struct kv_ep *b,
		  const struct kv_rc_attr *rca, const struct kv_rc_attr *rcb)
{
	int err;

	err = kv_rc_to_init(t, a);
	if (!err)
		err = kv_rc_to_init(t, b);
	if (!err)
		err = kv_rc_to_rtr(t, a, b->qp->qp_num, KV_PSN_BA, rca);
	if (!err)
		err = kv_rc_to_rtr(t, b, a->qp->qp_num, KV_PSN_AB, rcb);
	if (!err)
		err = kv_rc_to_rts(t, a, KV_PSN_AB, rca);
	if (!err)
		err = kv_rc_to_rts(t, b, KV_PSN_BA, rcb);
	return err;
}

int kv_ud_ready(struct kv_test *t, struct kv_ep *ep, u32 sq_psn)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = KV_PORT,
		.qkey = KV_UD_QKEY,
	};
	int err;

	err = kv_modify(t, ep, &attr,
			IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			IB_QP_QKEY, "RESET->INIT");
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTR;
	err = kv_modify(t, ep, &attr, IB_QP_STATE, "INIT->RTR");
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = sq_psn;
	return kv_modify(t, ep, &attr, IB_QP_STATE | IB_QP_SQ_PSN,
			 "RTR->RTS");
}
