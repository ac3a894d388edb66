// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ud_send: UD SEND a->b of size bytes (at most the active MTU), without and
 * with immediate data.  The receive buffer has 40 bytes in front for the
 * GRH: for IPv4, 20 zero bytes and the packet's IPv4 header.
 */
#include <linux/ip.h>

#include "kverbs.h"

#define KV_UD_PSN		0x000042
#define KV_UD_TAIL		64	/* canary bytes after the receive SGE */
#define KV_UD_IMM		0x600d0000

/* The UD fields of a receive completion on b of a datagram from a. */
int kv_ud_check_wc(struct kv_test *t, const struct ib_wc *wc,
		   const struct kv_ep *a, const struct kv_ep *b,
		   u32 len, bool imm, u32 immv)
{
	if (wc->byte_len != len + KV_GRH_LEN)
		return kv_fail(t, "UD receive: byte_len %u, expected %u + %d",
			       wc->byte_len, len, KV_GRH_LEN);
	if (wc->qp != b->qp || wc->src_qp != a->qp->qp_num)
		return kv_fail(t, "UD receive: src_qp %u (qp %s), expected %u",
			       wc->src_qp, wc->qp == b->qp ? "ok" : "wrong",
			       a->qp->qp_num);
	if (!(wc->wc_flags & IB_WC_GRH))
		return kv_fail(t, "UD receive: no IB_WC_GRH in wc_flags 0x%x",
			       wc->wc_flags);
	if (!(wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE) ||
	    wc->network_hdr_type != RDMA_NETWORK_IPV4)
		return kv_fail(t,
			       "UD receive: wc_flags 0x%x network_hdr_type %u, expected IB_WC_WITH_NETWORK_HDR_TYPE and RDMA_NETWORK_IPV4",
			       wc->wc_flags, wc->network_hdr_type);
	/* The RoCE packet type, as mlx5 gives it: UDP, IPv4 (MRC-DGM-010). */
	if (wc->sl != 0xa)
		return kv_fail(t, "UD receive: sl 0x%x, expected 0xa (UDP, IPv4)",
			       wc->sl);
	if (!!(wc->wc_flags & IB_WC_WITH_IMM) != imm)
		return kv_fail(t, "UD receive: wc_flags 0x%x, IB_WC_WITH_IMM expected %s",
			       wc->wc_flags, imm ? "set" : "clear");
	if (imm && be32_to_cpu(wc->ex.imm_data) != immv)
		return kv_fail(t, "UD receive: imm 0x%x, expected 0x%x",
			       be32_to_cpu(wc->ex.imm_data), immv);
	if (wc->pkey_index != 0)
		return kv_fail(t, "UD receive: pkey_index %u, expected 0",
			       wc->pkey_index);
	return 0;
}

/* The 40-byte GRH area in front of a UD payload received over IPv4. */
int kv_ud_check_grh(struct kv_test *t, const u8 *p,
		    const struct kv_dev *src, const struct kv_dev *dst)
{
	const struct iphdr *iph = (const struct iphdr *)(p + 20);
	int i;

	for (i = 0; i < 20; i++) {
		if (p[i])
			return kv_fail(t,
				       "GRH byte %d is 0x%02x, expected 20 zero bytes before the IPv4 header",
				       i, p[i]);
	}
	if (iph->version != 4 || iph->ihl != 5 || iph->protocol != IPPROTO_UDP)
		return kv_fail(t,
			       "GRH bytes 20..39: version %u ihl %u protocol %u, expected an IPv4 header (4, 5, UDP)",
			       iph->version, iph->ihl, iph->protocol);
	if (iph->saddr != src->ip || iph->daddr != dst->ip)
		return kv_fail(t, "GRH IPv4 header: %pI4 -> %pI4, expected %pI4 -> %pI4",
			       &iph->saddr, &iph->daddr, &src->ip, &dst->ip);
	return 0;
}

static int kv_ud_one(struct kv_test *t, struct kv_ep *a, struct kv_ep *b,
		     struct ib_ah *ah, struct kv_buf *sbuf, struct kv_buf *rbuf,
		     u32 len, int n)
{
	bool imm = n & 1;
	struct ib_ud_wr wr = {};
	struct ib_sge sge;
	struct ib_wc wc;
	int err;

	kv_fill(sbuf->va, len, n + 1, 0);
	kv_buf_for_dev(sbuf);
	kv_canary(rbuf->va, rbuf->len);
	kv_buf_for_dev(rbuf);
	err = kv_post_recv_buf(t, b, 0x100 + n, rbuf, 0, len + KV_GRH_LEN);
	if (err)
		return err;

	sge = kv_sge(a, sbuf, 0, len);
	wr.wr.wr_id = 0x200 + n;
	wr.wr.opcode = imm ? IB_WR_SEND_WITH_IMM : IB_WR_SEND;
	wr.wr.ex.imm_data = cpu_to_be32(KV_UD_IMM + n);
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.ah = ah;
	wr.remote_qpn = b->qp->qp_num;
	wr.remote_qkey = KV_UD_QKEY;
	err = kv_send_wait(t, a, &wr.wr, IB_WC_SEND,
			   imm ? "UD SEND_WITH_IMM" : "UD SEND");
	if (!err)
		err = kv_expect(t, b->rcq, &wc, 0x100 + n, IB_WC_SUCCESS,
				IB_WC_RECV, "UD receive");
	if (!err)
		err = kv_ud_check_wc(t, &wc, a, b, len, imm, KV_UD_IMM + n);
	if (err)
		return err;
	kv_buf_for_cpu(rbuf);
	err = kv_ud_check_grh(t, rbuf->va, a->dev, b->dev);
	if (!err)
		err = kv_check_pattern(t, rbuf->va + KV_GRH_LEN, len, n + 1, 0,
				       "UD payload");
	if (!err)
		err = kv_check_canary(t, rbuf->va + KV_GRH_LEN + len,
				      KV_UD_TAIL, "after the UD receive SGE");
	return err;
}

int kv_test_ud_send(struct kv_test *t)
{
	struct kv_dev *dev = t->ctx->dev;
	struct kv_buf sbuf = {}, rbuf = {};
	struct kv_ep a = {}, b = {};
	struct rdma_ah_attr ah_attr;
	struct ib_ah *ah = NULL;
	struct kv_ep_attr attr;
	u32 len = t->ctx->size;
	int n, err;

	len = min3(len, kv_mtu_bytes(&dev[0]), kv_mtu_bytes(&dev[1]));
	if (len < t->ctx->size)
		kv_diag(t, "UD payload limited to the active MTU: %u bytes",
			len);

	kv_ep_attr_default(&attr, IB_QPT_UD);
	err = kv_ep_create(t, &a, &dev[0], &dev[1], &attr);
	if (!err)
		err = kv_ep_create(t, &b, &dev[1], &dev[0], &attr);
	if (!err)
		err = kv_ud_ready(t, &a, KV_UD_PSN);
	if (!err)
		err = kv_ud_ready(t, &b, KV_UD_PSN);
	if (!err)
		err = kv_buf_alloc(t, &sbuf, dev[0].ibdev, len);
	if (!err)
		err = kv_buf_alloc(t, &rbuf, dev[1].ibdev,
				   len + KV_GRH_LEN + KV_UD_TAIL);
	if (err)
		goto out;

	kv_ah_attr(&ah_attr, &dev[0], &dev[1]);
	ah = rdma_create_ah(a.pd, &ah_attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah)) {
		err = kv_fail(t, "rdma_create_ah: %pe", ah);
		ah = NULL;
		goto out;
	}
	for (n = 0; n < 2 && !err; n++)
		err = kv_ud_one(t, &a, &b, ah, &sbuf, &rbuf, len, n);
out:
	/* The QP first: no send may still use the AH. */
	if (a.qp)
		ib_destroy_qp(a.qp);
	a.qp = NULL;
	if (ah)
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
	kv_ep_destroy(&b);
	kv_ep_destroy(&a);
	kv_buf_free(&rbuf);
	kv_buf_free(&sbuf);
	return err;
}
