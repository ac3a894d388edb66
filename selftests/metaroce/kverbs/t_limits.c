// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * limits: create requests beyond the advertised limits, as UCX and
 * libfabric send when they probe a device, fail cleanly with -EINVAL:
 * CQs with more than max_cqe entries, QPs with more send or receive WRs or
 * SGEs than max_qp_wr / max_send_sge / max_recv_sge or more inline data
 * than the device takes, SRQs beyond max_srq_wr / max_srq_sge and MRs with
 * more pages than max_fast_reg_page_list_len.  Requests exactly at the
 * limits succeed (the QP one with small queues otherwise), and nothing is
 * left behind (test_kverbs.sh compares the resource counts).
 */
#include "kverbs.h"

struct kv_lim_qp {
	const char *what;
	struct ib_qp_cap cap;
};

static int kv_lim_cq(struct kv_test *t, struct ib_device *dev,
		     const struct ib_device_attr *a)
{
	const int bad[] = { a->max_cqe + 1, INT_MAX };
	struct ib_cq *cq;
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		cq = ib_alloc_cq(dev, NULL, bad[i], 0, IB_POLL_DIRECT);
		if (PTR_ERR_OR_ZERO(cq) != -EINVAL) {
			if (!IS_ERR(cq))
				ib_free_cq(cq);
			return kv_fail(t, "ib_alloc_cq(%d entries, max %d): %pe, expected -EINVAL",
				       bad[i], a->max_cqe, cq);
		}
	}
	cq = ib_alloc_cq(dev, NULL, a->max_cqe, 0, IB_POLL_DIRECT);
	if (IS_ERR(cq))
		return kv_fail(t, "ib_alloc_cq(max_cqe %d): %pe", a->max_cqe,
			       cq);
	ib_free_cq(cq);
	return 0;
}

static int kv_lim_qp(struct kv_test *t, struct kv_ep *ep,
		     const struct ib_device_attr *a)
{
	const struct kv_lim_qp bad[] = {
		{ "max_send_wr", { .max_send_wr = a->max_qp_wr + 1,
				   .max_recv_wr = 1 } },
		{ "max_recv_wr", { .max_send_wr = 1,
				   .max_recv_wr = a->max_qp_wr + 1 } },
		{ "max_send_sge", { .max_send_wr = 1, .max_recv_wr = 1,
				    .max_send_sge = a->max_send_sge + 1 } },
		{ "max_recv_sge", { .max_send_wr = 1, .max_recv_wr = 1,
				    .max_recv_sge = a->max_recv_sge + 1 } },
		{ "max_inline_data", { .max_send_wr = 1, .max_recv_wr = 1,
				       .max_inline_data = SZ_1M } },
		{ "max_send_wr U32_MAX", { .max_send_wr = U32_MAX } },
	};
	struct ib_qp_init_attr init = {
		.send_cq = ep->scq,
		.recv_cq = ep->rcq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
	};
	struct ib_qp *qp;
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		init.cap = bad[i].cap;
		qp = ib_create_qp(ep->pd, &init);
		if (PTR_ERR_OR_ZERO(qp) != -EINVAL) {
			if (!IS_ERR(qp))
				ib_destroy_qp(qp);
			return kv_fail(t,
				       "ib_create_qp with %s beyond the limit: %pe, expected -EINVAL",
				       bad[i].what, qp);
		}
	}
	init.cap = (struct ib_qp_cap) {
		.max_send_wr = 1, .max_recv_wr = 1,
		.max_send_sge = a->max_send_sge,
		.max_recv_sge = a->max_recv_sge,
	};
	qp = ib_create_qp(ep->pd, &init);
	if (IS_ERR(qp))
		return kv_fail(t, "ib_create_qp with max_send_sge %d max_recv_sge %d: %pe",
			       a->max_send_sge, a->max_recv_sge, qp);
	ib_destroy_qp(qp);
	return 0;
}

static int kv_lim_srq(struct kv_test *t, struct ib_pd *pd,
		      const struct ib_device_attr *a)
{
	struct ib_srq_init_attr init = { .srq_type = IB_SRQT_BASIC };
	struct ib_srq *srq;
	int i;

	for (i = 0; i < 2; i++) {
		init.attr.max_wr = i ? 1 : a->max_srq_wr + 1;
		init.attr.max_sge = i ? a->max_srq_sge + 1 : 1;
		srq = ib_create_srq(pd, &init);
		if (PTR_ERR_OR_ZERO(srq) != -EINVAL) {
			if (!IS_ERR(srq))
				ib_destroy_srq(srq);
			return kv_fail(t, "ib_create_srq(%u WRs, %u SGEs): %pe, expected -EINVAL",
				       init.attr.max_wr, init.attr.max_sge, srq);
		}
	}
	init.attr.max_wr = a->max_srq_wr;
	init.attr.max_sge = a->max_srq_sge;
	srq = ib_create_srq(pd, &init);
	if (IS_ERR(srq))
		return kv_fail(t, "ib_create_srq(max_srq_wr %d, max_srq_sge %d): %pe",
			       a->max_srq_wr, a->max_srq_sge, srq);
	ib_destroy_srq(srq);
	return 0;
}

static int kv_lim_mr(struct kv_test *t, struct ib_pd *pd,
		     const struct ib_device_attr *a)
{
	u32 max = a->max_fast_reg_page_list_len;
	struct ib_mr *mr;

	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, max + 1);
	if (PTR_ERR_OR_ZERO(mr) != -EINVAL) {
		if (!IS_ERR(mr))
			ib_dereg_mr(mr);
		return kv_fail(t, "ib_alloc_mr(%u pages, max %u): %pe, expected -EINVAL",
			       max + 1, max, mr);
	}
	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, max);
	if (IS_ERR(mr))
		return kv_fail(t, "ib_alloc_mr(%u pages): %pe", max, mr);
	ib_dereg_mr(mr);
	return 0;
}

int kv_test_limits(struct kv_test *t)
{
	struct kv_dev *dev = &t->ctx->dev[0];
	const struct ib_device_attr *a = &dev->ibdev->attrs;
	struct kv_ep_attr attr;
	struct kv_ep ep = {};
	int err;

	kv_ep_attr_default(&attr, IB_QPT_RC);
	err = kv_ep_create(t, &ep, dev, &t->ctx->dev[1], &attr);
	if (!err)
		err = kv_lim_cq(t, dev->ibdev, a);
	if (!err)
		err = kv_lim_qp(t, &ep, a);
	if (!err)
		err = kv_lim_srq(t, ep.pd, a);
	if (!err)
		err = kv_lim_mr(t, ep.pd, a);
	kv_ep_destroy(&ep);
	return err;
}
