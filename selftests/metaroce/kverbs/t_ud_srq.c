// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ud_srq: two UD QPs on b receive from one shared receive queue; two UD
 * QPs on a send to both.
 *  - Each datagram takes the SRQ's next WQE (posting order), lands behind
 *    the 40-byte GRH and completes on its QP's CQ with the UD fields (QP,
 *    src_qp, GRH and network type flags, immediate data, pkey_index);
 *    nothing of its slot past the message is written.
 *  - An empty SRQ drops the datagram (UD has no RNR): no completion, and
 *    the next datagram takes the WQE posted after it.
 *  - ib_destroy_srq of the SRQ in use: -EBUSY.  One QP in the error state:
 *    IB_EVENT_QP_LAST_WQE_REACHED, no WQE of the SRQ flushed to it, its
 *    datagrams dropped; the other QP goes on.  Destroying the QPs while
 *    the SRQ lives, then the SRQ, works.
 */
#include "kverbs.h"

#define KV_US_WR		32
#define KV_US_SLOT		2048	/* GRH + up to 1024 bytes + canary */
#define KV_US_TAIL		64
#define KV_US_SEED		900
#define KV_US_IMM		0x5d000000
#define KV_US_ROUNDS		4

struct kv_us {
	struct kv_test *t;
	struct kv_ep a[2], b[2];
	struct ib_ah *ah[2];		/* a[i] to b's device */
	struct ib_pd *pd;		/* on b: the SRQ's and b's QPs' */
	struct ib_srq *srq;
	struct kv_buf rb;		/* on b: KV_US_WR receive slots */
	struct kv_buf sb;		/* on a: one send slot per message */
	u32 posted;
	u32 mtu;
};

static u32 kv_us_len(struct kv_us *s, u32 msg)
{
	return min(s->mtu, 1 + msg * 67);
}

static int kv_us_post(struct kv_us *s, u32 n)
{
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr = {};
	struct ib_sge sge;
	int err;

	while (n--) {
		if (s->posted >= KV_US_WR)
			return kv_fail(s->t, "out of receive slots");
		kv_canary(s->rb.va + s->posted * KV_US_SLOT, KV_US_SLOT);
		kv_buf_for_dev(&s->rb);
		sge = kv_sge(&s->b[0], &s->rb, s->posted * KV_US_SLOT,
			     KV_US_SLOT - KV_US_TAIL);
		wr.wr_id = s->posted;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		err = ib_post_srq_recv(s->srq, &wr, &bad);
		if (err)
			return kv_fail(s->t, "ib_post_srq_recv: %pe",
				       ERR_PTR(err));
		s->posted++;
	}
	return 0;
}

/* a[i] sends message msg to b[j] and waits for its send completion. */
static int kv_us_send(struct kv_us *s, int i, int j, u32 msg)
{
	u32 len = kv_us_len(s, msg);
	struct ib_ud_wr wr = {};
	struct ib_sge sge;

	kv_fill(s->sb.va + msg * KV_US_SLOT, len, KV_US_SEED + msg, 0);
	kv_buf_for_dev(&s->sb);
	sge = kv_sge(&s->a[i], &s->sb, msg * KV_US_SLOT, len);
	wr.wr.wr_id = msg;
	wr.wr.opcode = msg & 1 ? IB_WR_SEND_WITH_IMM : IB_WR_SEND;
	wr.wr.ex.imm_data = cpu_to_be32(KV_US_IMM + msg);
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.ah = s->ah[i];
	wr.remote_qpn = s->b[j].qp->qp_num;
	wr.remote_qkey = KV_UD_QKEY;
	return kv_send_wait(s->t, &s->a[i], &wr.wr, IB_WC_SEND,
			    "UD SEND to a QP of the SRQ");
}

/* The next receive of b[j]: message msg from a[i] in SRQ WQE slot. */
static int kv_us_recv(struct kv_us *s, int i, int j, u32 msg, u32 slot)
{
	struct kv_test *t = s->t;
	u32 len = kv_us_len(s, msg);
	struct ib_wc wc;
	u8 *p;
	int err;

	err = kv_expect(t, s->b[j].rcq, &wc, slot, IB_WC_SUCCESS, IB_WC_RECV,
			"UD receive from the SRQ");
	if (!err)
		err = kv_ud_check_wc(t, &wc, &s->a[i], &s->b[j], len, msg & 1,
				     KV_US_IMM + msg);
	if (err)
		return err;
	kv_buf_for_cpu(&s->rb);
	p = s->rb.va + slot * KV_US_SLOT;
	err = kv_ud_check_grh(t, p, s->a[i].dev, s->b[j].dev);
	if (!err)
		err = kv_check_pattern(t, p + KV_GRH_LEN, len, KV_US_SEED + msg,
				       0, "UD payload from the SRQ");
	if (!err)
		err = kv_check_canary(t, p + KV_GRH_LEN + len,
				      KV_US_SLOT - KV_GRH_LEN - len,
				      "SRQ slot past the datagram");
	return err;
}

/* Every sender to every receiver; the WQEs go in posting order. */
static int kv_us_data(struct kv_us *s)
{
	u32 msg = 0, r;
	int i, j, err;

	err = kv_us_post(s, KV_US_ROUNDS * 4);
	for (r = 0; r < KV_US_ROUNDS && !err; r++) {
		for (i = 0; i < 2 && !err; i++) {
			for (j = 0; j < 2 && !err; j++, msg++) {
				err = kv_us_send(s, i, j, msg);
				if (!err)
					err = kv_us_recv(s, i, j, msg, msg);
			}
		}
	}
	return err;
}

/* Empty SRQ: dropped, no RNR; the next datagram takes the next WQE. */
static int kv_us_empty(struct kv_us *s)
{
	u32 msg = KV_US_ROUNDS * 4;
	int err;

	err = kv_us_send(s, 0, 1, msg);
	if (!err)
		err = kv_expect_none(s->t, s->b[1].rcq, 300,
				     "UD datagram to an empty SRQ");
	if (!err)
		err = kv_us_post(s, 1);
	if (!err)
		err = kv_expect_none(s->t, s->b[1].rcq, 300,
				     "WQE posted after the drop");
	if (!err)
		err = kv_us_send(s, 1, 1, msg + 1);
	if (!err)
		err = kv_us_recv(s, 1, 1, msg + 1, s->posted - 1);
	return err;
}

/* EBUSY, the error state of one QP, destroying the QPs first. */
static int kv_us_teardown(struct kv_us *s)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct kv_test *t = s->t;
	u32 msg = KV_US_ROUNDS * 4 + 2;
	int err;

	err = ib_destroy_srq_user(s->srq, NULL);
	if (err != -EBUSY)
		return kv_fail(t, "ib_destroy_srq of an SRQ two UD QPs use: %pe, expected -EBUSY",
			       ERR_PTR(err));
	err = kv_us_post(s, 2);
	if (!err)
		err = kv_modify(t, &s->b[0], &attr, IB_QP_STATE, "UD QP to ERR");
	if (!err)
		err = kv_ep_wait_event(t, &s->b[0],
				       IB_EVENT_QP_LAST_WQE_REACHED, 5000,
				       "UD QP of an SRQ in the error state");
	if (!err)
		err = kv_us_send(s, 0, 0, msg);
	if (!err)
		err = kv_expect_none(t, s->b[0].rcq, 300,
				     "UD QP in the error state");
	if (!err)
		err = kv_us_send(s, 1, 1, msg + 1);
	if (!err)
		err = kv_us_recv(s, 1, 1, msg + 1, s->posted - 2);
	if (err)
		return err;

	kv_ep_destroy(&s->b[0]);
	err = ib_destroy_srq_user(s->srq, NULL);
	if (err != -EBUSY)
		return kv_fail(t, "ib_destroy_srq of an SRQ one UD QP uses: %pe, expected -EBUSY",
			       ERR_PTR(err));
	err = kv_us_send(s, 0, 1, msg + 2);
	if (!err)
		err = kv_us_recv(s, 0, 1, msg + 2, s->posted - 1);
	if (err)
		return err;
	kv_ep_destroy(&s->b[1]);
	err = ib_destroy_srq_user(s->srq, NULL);
	if (err)
		return kv_fail(t, "ib_destroy_srq after its QPs: %pe",
			       ERR_PTR(err));
	s->srq = NULL;
	return 0;
}

static int kv_us_setup(struct kv_us *s)
{
	struct ib_srq_init_attr init = {
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = KV_US_WR, .max_sge = 1 },
	};
	struct kv_dev *dev = s->t->ctx->dev;
	struct rdma_ah_attr ah_attr;
	struct kv_ep_attr aa, ba;
	int i, err;

	s->mtu = min(kv_mtu_bytes(&dev[0]), kv_mtu_bytes(&dev[1]));
	s->pd = ib_alloc_pd(dev[1].ibdev, 0);
	if (IS_ERR(s->pd)) {
		err = kv_fail(s->t, "ib_alloc_pd: %pe", s->pd);
		s->pd = NULL;
		return err;
	}
	s->srq = ib_create_srq(s->pd, &init);
	if (IS_ERR(s->srq)) {
		err = kv_fail(s->t, "ib_create_srq: %pe", s->srq);
		s->srq = NULL;
		return err;
	}
	kv_ep_attr_default(&aa, IB_QPT_UD);
	ba = aa;
	ba.srq = s->srq;
	ba.pd = s->pd;
	kv_ah_attr(&ah_attr, &dev[0], &dev[1]);
	for (i = 0; i < 2; i++) {
		err = kv_ep_create(s->t, &s->a[i], &dev[0], &dev[1], &aa);
		if (!err)
			err = kv_ep_create(s->t, &s->b[i], &dev[1], &dev[0], &ba);
		if (!err)
			err = kv_ud_ready(s->t, &s->a[i], 0);
		if (!err)
			err = kv_ud_ready(s->t, &s->b[i], 0);
		if (err)
			return err;
		if (s->b[i].qp->qp_type != IB_QPT_UD ||
		    s->b[i].qp->srq != s->srq)
			return kv_fail(s->t, "UD QP on the SRQ: type %d srq %s",
				       s->b[i].qp->qp_type,
				       s->b[i].qp->srq ? "other" : "none");
		s->ah[i] = rdma_create_ah(s->a[i].pd, &ah_attr,
					  RDMA_CREATE_AH_SLEEPABLE);
		if (IS_ERR(s->ah[i])) {
			err = kv_fail(s->t, "rdma_create_ah: %pe", s->ah[i]);
			s->ah[i] = NULL;
			return err;
		}
	}
	err = kv_buf_alloc(s->t, &s->sb, dev[0].ibdev,
			   (KV_US_ROUNDS * 4 + 8) * KV_US_SLOT);
	if (!err)
		err = kv_buf_alloc(s->t, &s->rb, dev[1].ibdev,
				   KV_US_WR * KV_US_SLOT);
	return err;
}

int kv_test_ud_srq(struct kv_test *t)
{
	struct kv_us *s;
	int i, err;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->t = t;
	err = kv_us_setup(s);
	if (!err)
		err = kv_us_data(s);
	if (!err)
		err = kv_us_empty(s);
	if (!err)
		err = kv_us_teardown(s);

	for (i = 0; i < 2; i++) {
		kv_ep_destroy(&s->b[i]);
		/* The QP first: no send may still use the AH. */
		if (s->a[i].qp)
			ib_destroy_qp(s->a[i].qp);
		s->a[i].qp = NULL;
		if (s->ah[i])
			rdma_destroy_ah(s->ah[i], RDMA_DESTROY_AH_SLEEPABLE);
		kv_ep_destroy(&s->a[i]);
	}
	if (s->srq)
		ib_destroy_srq(s->srq);
	if (s->pd)
		ib_dealloc_pd(s->pd);
	kv_buf_free(&s->sb);
	kv_buf_free(&s->rb);
	kfree(s);
	return err;
}
