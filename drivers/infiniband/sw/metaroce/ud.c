// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The datagram service (spec 14): UD and GSI (QP1) messages, one DATAGRAM
 * packet each, best effort, with a synthesized GRH in front of the payload
 * at the receiver.  A UD QP on an SRQ takes its receive WQE from the SRQ.
 */
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jhash.h>

#include "mr.h"
#include "net.h"
#include "verbs.h"
#include "wire.h"

/* A UD receive's wc.sl: the RoCE packet type (mlx5's user space provider). */
#define MROCE_WC_SL_UDP_IPV4	0xa	/* bit 3 UDP, bits 2-0: 2 IPv4 */
#define MROCE_WC_SL_UDP_IPV6	0x9	/* bit 3 UDP, bits 2-0: 1 IPv6 */

/* Send one UD/GSI work request as a DATAGRAM (spec 14.2).  Worker context. */
void mroce_ud_send(struct mroce_qp *qp, struct mroce_send_wqe *wqe)
{
	struct mroce_dev *mdev = to_mdev(qp->ibqp.device);
	u32 qpn = qp->ibqp.qp_num;
	struct mroce_av av;
	struct mroce_bth *bth;
	struct mroce_dx *dx;
	struct sk_buff *skb;
	u32 qkey, len;
	u16 flags = 0;
	__be16 sport;
	int err;

	len = wqe->length;
	if (mroce_ah_lookup(qp, wqe->ah_num, &av)) {
		mroce_sq_complete(qp, wqe, IB_WC_LOC_QP_OP_ERR);
		return;
	}
	if (len > mroce_active_mtu_bytes(mdev)) {
		mroce_sq_complete(qp, wqe, IB_WC_LOC_LEN_ERR);
		return;
	}

	skb = mroce_alloc_skb(MROCE_DATAGRAM_HDR_LEN + len, GFP_KERNEL);
	if (!skb) {
		mroce_sq_complete(qp, wqe, IB_WC_GENERAL_ERR);
		return;
	}
	bth = skb_put_zero(skb, sizeof(*bth));
	dx = skb_put_zero(skb, sizeof(*dx));
	if (wqe->inline_len) {
		skb_put_data(skb, wqe->sge, len);
	} else if (mroce_copy_sgl(qp, wqe->sge, wqe->num_sge, 0,
				  skb_put(skb, len), len, false)) {
		kfree_skb(skb);
		mroce_sq_complete(qp, wqe, IB_WC_LOC_PROT_ERR);
		return;
	}

	if (wqe->send_flags & IB_SEND_SOLICITED)
		flags |= MROCE_F_SE;
	bth->ver_rsvd = MROCE_VERSION << 4;
	bth->type = MROCE_T_DATAGRAM;
	bth->flags = htons(flags);
	bth->hdr_len = MROCE_DATAGRAM_HDR_LEN / 4;
	bth->payload_len = htons(len);

	/* A remote Q_Key with the high bit set means "use the QP's" (verbs). */
	qkey = wqe->remote_qkey & 0x80000000U ? qp->attr.qkey : wqe->remote_qkey;
	dx->dflags_dqpn = htonl((wqe->remote_qpn & MROCE_QPN_MASK) |
				(wqe->opcode == IB_WR_SEND_WITH_IMM ?
				 MROCE_DX_IMM << 24 : 0));
	dx->sqpn = htonl(qpn);
	dx->qkey = htonl(qkey);
	if (wqe->opcode == IB_WR_SEND_WITH_IMM)
		dx->imm = wqe->imm_data;

	sport = htons(0xc000 | (jhash_2words(qpn, wqe->remote_qpn, 0) & 0x3fff));
	err = mroce_xmit(mdev, skb, &av.sgid, &av.dgid, sport);
	if (err) {
		/* Datagrams are best effort: a lost one is not an error. */
		pr_debug("metaroce: datagram to %pI6 not sent: %d\n",
			 av.dgid.raw, err);
	} else {
		mroce_count(mdev, UD_TX_PACKETS);
	}
	mroce_sq_complete(qp, wqe, IB_WC_SUCCESS);
}

/* Build the 40-byte GRH area verbs expects in front of a UD payload. */
static int mroce_build_grh(struct sk_buff *skb, u8 *grh,
			   enum rdma_network_type *type)
{
	memset(grh, 0, MROCE_GRH_LEN);
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		if (iph->ihl != 5)
			return -EINVAL;
		memcpy(grh + 20, iph, sizeof(*iph));
		*type = RDMA_NETWORK_IPV4;
	} else {
		memcpy(grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
		*type = RDMA_NETWORK_IPV6;
	}
	return 0;
}

/* Does the QP's state let it receive (RTR, RTS or SQE)? */
static bool mroce_ud_can_recv(struct mroce_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	return state >= IB_QPS_RTR && state <= IB_QPS_SQE;
}

static bool mroce_ud_qkey_ok(struct mroce_qp *qp, u32 qkey)
{
	if (qp->ibqp.qp_type == IB_QPT_GSI)
		return qkey == MROCE_GSI_QKEY;
	return qkey == qp->attr.qkey;
}

/*
 * Deliver a DATAGRAM (spec 14.3).  skb->data is at the base header, the
 * trailer is trimmed off, and the base header was validated.
 */
void mroce_ud_rcv(struct mroce_dev *mdev, struct sk_buff *skb)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_dx *dx = (const struct mroce_dx *)(bth + 1);
	u32 len = ntohs(bth->payload_len), dqpn;
	struct ib_wc wc = {};
	struct mroce_recv_wqe *wqe;
	u8 grh[MROCE_GRH_LEN];
	enum rdma_network_type ntype;
	struct mroce_qp *qp;
	unsigned long flags;

	if (bth->hdr_len * 4 != MROCE_DATAGRAM_HDR_LEN ||
	    len > mroce_active_mtu_bytes(mdev) ||
	    mroce_build_grh(skb, grh, &ntype)) {
		mroce_count(mdev, DROP_BAD_HEADER);
		return;
	}
	if (ntohs(bth->flags) & MROCE_F_MAC) {
		mroce_count(mdev, DROP_AUTH);
		return;
	}
	dqpn = ntohl(dx->dflags_dqpn) & MROCE_QPN_MASK;

	qp = mroce_qp_get(mdev, dqpn);
	if (!qp || (qp->ibqp.qp_type != IB_QPT_UD &&
		    qp->ibqp.qp_type != IB_QPT_GSI) || !mroce_ud_can_recv(qp)) {
		mroce_count(mdev, UD_DROP_NO_QP);
		goto out;
	}
	if (!mroce_ud_qkey_ok(qp, ntohl(dx->qkey))) {
		mroce_count(mdev, UD_DROP_QKEY);
		goto out;
	}
	mroce_count(mdev, RX_PACKETS);
	mroce_count_add(mdev, RX_BYTES, skb->len + MROCE_CRC_LEN);

	wc.qp = &qp->ibqp;
	wc.opcode = IB_WC_RECV;
	wc.src_qp = ntohl(dx->sqpn) & MROCE_QPN_MASK;
	wc.byte_len = MROCE_GRH_LEN + len;
	wc.port_num = MROCE_PORT;
	wc.pkey_index = 0;
	wc.network_hdr_type = ntype;
	/*
	 * SL has no meaning on a MetaRoCE wire: as mlx5's user space provider
	 * does for RoCE, it tells user space (which sees no network_hdr_type)
	 * what the 40 GRH bytes hold (MRC-DGM-010).
	 */
	wc.sl = ntype == RDMA_NETWORK_IPV4 ? MROCE_WC_SL_UDP_IPV4 :
					     MROCE_WC_SL_UDP_IPV6;
	wc.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
	if ((ntohl(dx->dflags_dqpn) >> 24) & MROCE_DX_IMM) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = dx->imm;
	}
	if (skb_mac_header_was_set(skb) && skb_mac_header_len(skb) >= ETH_HLEN) {
		ether_addr_copy(wc.smac, eth_hdr(skb)->h_source);
		wc.wc_flags |= IB_WC_WITH_SMAC;
	}

	/*
	 * Take (from the RQ or the SRQ), fill and complete under the RQ lock:
	 * completions stay in order.  The state is checked again under it:
	 * once the error state's flush has held the lock, no WQE is taken,
	 * which IB_EVENT_QP_LAST_WQE_REACHED promises an SRQ's consumer.
	 */
	spin_lock_irqsave(&qp->rq.lock, flags);
	if (!mroce_ud_can_recv(qp)) {
		spin_unlock_irqrestore(&qp->rq.lock, flags);
		mroce_count(mdev, UD_DROP_NO_QP);
		goto out;
	}
	wqe = &qp->rq_scratch;
	if (!mroce_recv_take(qp, wqe)) {
		spin_unlock_irqrestore(&qp->rq.lock, flags);
		mroce_count(mdev, UD_DROP_NO_RECV);
		goto out;
	}
	wc.wr_id = wqe->wr_id;
	if (mroce_sgl_len(wqe->sge, wqe->num_sge) < MROCE_GRH_LEN + len) {
		wc.status = IB_WC_LOC_LEN_ERR;
	} else if (mroce_copy_sgl(qp, wqe->sge, wqe->num_sge, 0, grh,
				  MROCE_GRH_LEN, true) ||
		   mroce_copy_sgl(qp, wqe->sge, wqe->num_sge, MROCE_GRH_LEN,
				  (void *)(dx + 1), len, true)) {
		wc.status = IB_WC_LOC_PROT_ERR;
	}
	mroce_recv_complete(qp, &wc, ntohs(bth->flags) & MROCE_F_SE);
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	if (wc.status == IB_WC_SUCCESS)
		mroce_count(mdev, UD_RX_PACKETS);
out:
	if (qp)
		mroce_qp_put(qp);
}
