// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * frmr_err: the error paths of fast registration.
 *  - ib_alloc_mr of another MR type, of 0 or too many pages: -EINVAL;
 *    ib_map_mr_sg of more pages than the MR holds maps only what fits;
 *    an IB_WR_REG_MR of an MR of another PD is refused at post time.
 *  - LOCAL_INV of a key of no MR, REG_MR of a registered MR, REG_MR with
 *    remote write but no local write, REG_MR with the key of another MR:
 *    each completes in error (LOC_PROT_ERR, LOC_QP_OP_ERR), the QP goes to
 *    the error state and the request after it is flushed.
 *  - A registration without remote write: a WRITE through it fails with
 *    IB_WC_REM_ACCESS_ERR and leaves the memory untouched.
 *  - SEND_WITH_INV naming a key the responder does not have: the requester
 *    gets IB_WC_REM_INV_REQ_ERR, the responder places nothing, goes to the
 *    error state with IB_EVENT_QP_REQ_ERR and flushes its receive.
 * Each case that breaks a connection gets its own.
 */
#include <linux/mm.h>

#include "kverbs.h"

#define KV_FE_STATE_MS		2000
#define KV_FE_LEN		256

struct kv_fe {
	struct kv_test *t;
	struct kv_fr_base fr;		/* rb on b */
	struct ib_mr *amr, *amr2, *bmr;	/* on a.pd, a.pd, b.pd */
};

/* A local operation on a that fails with status; the SEND after it flushes. */
static int kv_fe_local_fails(struct kv_fe *s, struct ib_send_wr *wr,
			     enum ib_wc_status status, const char *what)
{
	struct ib_send_wr send = { .wr_id = 99, .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct kv_test *t = s->t;
	struct ib_wc wc;
	int err;

	wr->next = &send;
	err = kv_post_send(t, &s->fr.a, wr, what);
	if (!err)
		err = kv_expect(t, s->fr.a.scq, &wc, wr->wr_id, status, -1,
				what);
	if (!err)
		err = kv_expect(t, s->fr.a.scq, &wc, 99, IB_WC_WR_FLUSH_ERR, -1,
				"the SEND after the failed local operation");
	if (!err)
		err = kv_ep_wait_state(t, &s->fr.a, IB_QPS_ERR, KV_FE_STATE_MS,
				       what);
	return err;
}

static int kv_fe_inv_bad_key(struct kv_fe *s)
{
	struct ib_send_wr inv;

	kv_inv_wr(&inv, s->amr->rkey ^ 0x80, 1, true);
	return kv_fe_local_fails(s, &inv, IB_WC_LOC_PROT_ERR,
				 "LOCAL_INV of a key of no MR");
}

static int kv_fe_reg_twice(struct kv_fe *s)
{
	struct ib_reg_wr reg;
	int err;

	err = kv_fr_map_reg(s->t, &s->fr.a, s->amr, &s->fr.m, 0,
			    IB_ACCESS_LOCAL_WRITE);
	if (err)
		return err;
	kv_reg_wr(&reg, s->amr, IB_ACCESS_LOCAL_WRITE, 1, true);
	return kv_fe_local_fails(s, &reg.wr, IB_WC_LOC_QP_OP_ERR,
				 "REG_MR of a registered MR");
}

static int kv_fe_reg_access(struct kv_fe *s)
{
	struct ib_reg_wr reg;
	int n;

	n = ib_map_mr_sg(s->amr, s->fr.m.sg, KV_FR_PAGES, NULL, PAGE_SIZE);
	if (n != KV_FR_PAGES)
		return kv_fail(s->t, "ib_map_mr_sg: %d", n);
	kv_reg_wr(&reg, s->amr, IB_ACCESS_REMOTE_WRITE, 1, true);
	return kv_fe_local_fails(s, &reg.wr, IB_WC_LOC_PROT_ERR,
				 "REG_MR with remote but no local write");
}

static int kv_fe_reg_other_key(struct kv_fe *s)
{
	struct ib_reg_wr reg;
	int n;

	n = ib_map_mr_sg(s->amr, s->fr.m.sg, KV_FR_PAGES, NULL, PAGE_SIZE);
	if (n != KV_FR_PAGES)
		return kv_fail(s->t, "ib_map_mr_sg: %d", n);
	kv_reg_wr(&reg, s->amr, IB_ACCESS_LOCAL_WRITE, 1, true);
	reg.key = s->amr2->rkey;
	return kv_fe_local_fails(s, &reg.wr, IB_WC_LOC_PROT_ERR,
				 "REG_MR with the key of another MR");
}

static int kv_fe_read_only(struct kv_fe *s)
{
	struct kv_test *t = s->t;
	int err;

	err = kv_fr_map_reg(t, &s->fr.b, s->bmr, &s->fr.m, 0,
			    IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ);
	if (!err)
		err = kv_write_denied(t, &s->fr.a, &s->fr.sb, KV_FE_LEN,
				      s->bmr->iova + 8, s->bmr->rkey,
				      "WRITE through a read-only registration");
	if (!err)
		err = kv_pages_check(t, &s->fr.m, 0, 0, 0,
				     "pages after the denied WRITE");
	return err;
}

static int kv_fe_send_inv_bad(struct kv_fe *s)
{
	struct kv_test *t = s->t;
	struct ib_send_wr send = {};
	struct ib_sge sge;
	struct ib_wc wc;
	int err;

	err = kv_fr_map_reg(t, &s->fr.b, s->bmr, &s->fr.m, 0,
			    IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	if (!err)
		err = kv_post_recv_buf(t, &s->fr.b, 2, &s->fr.rb, 0, KV_FE_LEN);
	if (err)
		return err;
	kv_fill(s->fr.sb.va, KV_FE_LEN, 520, 0);
	kv_buf_for_dev(&s->fr.sb);
	sge = kv_sge(&s->fr.a, &s->fr.sb, 0, KV_FE_LEN);
	send.wr_id = 1;
	send.opcode = IB_WR_SEND_WITH_INV;
	send.send_flags = IB_SEND_SIGNALED;
	send.sg_list = &sge;
	send.num_sge = 1;
	send.ex.invalidate_rkey = s->bmr->rkey ^ 0x40;
	err = kv_post_send(t, &s->fr.a, &send, "SEND_WITH_INV of a bad key");
	if (!err)
		err = kv_expect(t, s->fr.a.scq, &wc, 1, IB_WC_REM_INV_REQ_ERR,
				-1, "SEND_WITH_INV of a bad key");
	if (!err)
		err = kv_expect(t, s->fr.b.rcq, &wc, 2, IB_WC_WR_FLUSH_ERR, -1,
				"receive of the refused SEND_WITH_INV");
	if (!err) {
		kv_buf_for_cpu(&s->fr.rb);
		err = kv_check_canary(t, s->fr.rb.va, KV_FE_LEN,
				      "receive of the refused SEND_WITH_INV");
	}
	if (!err)
		err = kv_ep_wait_event(t, &s->fr.b, IB_EVENT_QP_REQ_ERR,
				       KV_FE_STATE_MS,
				       "responder after a bad SEND_WITH_INV");
	return err;
}

/* Checks that need no connection. */
static int kv_fe_alloc(struct kv_fe *s)
{
	struct ib_device *dev = s->fr.a.dev->ibdev;
	u32 max = dev->attrs.max_fast_reg_page_list_len;
	struct kv_test *t = s->t;
	struct ib_reg_wr reg;
	struct ib_mr *mr;
	struct ib_pd *pd;
	const struct ib_send_wr *bad;
	int n, err;

	if (!(dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) ||
	    !max)
		return kv_fail(t, "no IB_DEVICE_MEM_MGT_EXTENSIONS (max pages %u)",
			       max);
	mr = ib_alloc_mr(s->fr.a.pd, IB_MR_TYPE_SG_GAPS, 4);
	if (PTR_ERR_OR_ZERO(mr) != -EINVAL)
		return kv_fail(t, "ib_alloc_mr(SG_GAPS): %pe, expected -EINVAL",
			       mr);
	mr = ib_alloc_mr(s->fr.a.pd, IB_MR_TYPE_MEM_REG, max + 1);
	if (PTR_ERR_OR_ZERO(mr) != -EINVAL)
		return kv_fail(t, "ib_alloc_mr(%u pages): %pe, expected -EINVAL",
			       max + 1, mr);
	mr = ib_alloc_mr(s->fr.a.pd, IB_MR_TYPE_MEM_REG, 0);
	if (PTR_ERR_OR_ZERO(mr) != -EINVAL)
		return kv_fail(t, "ib_alloc_mr(0 pages): %pe, expected -EINVAL",
			       mr);

	mr = ib_alloc_mr(s->fr.a.pd, IB_MR_TYPE_MEM_REG, KV_FR_PAGES - 1);
	if (IS_ERR(mr))
		return kv_fail(t, "ib_alloc_mr: %pe", mr);
	n = ib_map_mr_sg(mr, s->fr.m.sg, KV_FR_PAGES, NULL, PAGE_SIZE);
	ib_dereg_mr(mr);
	if (n != KV_FR_PAGES - 1)
		return kv_fail(t, "ib_map_mr_sg of %d pages into %d: %d",
			       KV_FR_PAGES, KV_FR_PAGES - 1, n);

	pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(pd))
		return kv_fail(t, "ib_alloc_pd: %pe", pd);
	err = kv_fr_alloc_mr(t, pd, &mr);
	if (err) {
		ib_dealloc_pd(pd);
		return err;
	}
	n = ib_map_mr_sg(mr, s->fr.m.sg, KV_FR_PAGES, NULL, PAGE_SIZE);
	kv_reg_wr(&reg, mr, IB_ACCESS_LOCAL_WRITE, 1, true);
	err = ib_post_send(s->fr.a.qp, &reg.wr, &bad);
	ib_dereg_mr(mr);
	ib_dealloc_pd(pd);
	if (err != -EINVAL)
		return kv_fail(t, "REG_MR of another PD's MR: post %pe, expected -EINVAL",
			       ERR_PTR(err));
	return kv_expect_none(t, s->fr.a.scq, 50, "after the refused REG_MR");
}

struct kv_fe_case {
	const char *name;
	int (*run)(struct kv_fe *s);
};

static const struct kv_fe_case kv_fe_cases[] = {
	{ "allocation limits", kv_fe_alloc },
	{ "LOCAL_INV of a bad key", kv_fe_inv_bad_key },
	{ "REG_MR twice", kv_fe_reg_twice },
	{ "REG_MR access", kv_fe_reg_access },
	{ "REG_MR other key", kv_fe_reg_other_key },
	{ "read-only registration", kv_fe_read_only },
	{ "SEND_WITH_INV of a bad key", kv_fe_send_inv_bad },
};

static int kv_fe_one(struct kv_test *t, const struct kv_fe_case *c)
{
	struct kv_fe *s;
	int err;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->t = t;
	err = kv_fr_base_init(t, &s->fr, KV_FE_LEN, false, KV_FE_LEN);
	if (!err)
		err = kv_fr_alloc_mr(t, s->fr.a.pd, &s->amr);
	if (!err)
		err = kv_fr_alloc_mr(t, s->fr.a.pd, &s->amr2);
	if (!err)
		err = kv_fr_alloc_mr(t, s->fr.b.pd, &s->bmr);
	if (!err)
		err = c->run(s);
	if (err)
		kv_diag(t, "case: %s", c->name);

	if (s->bmr)
		ib_dereg_mr(s->bmr);
	if (s->amr2)
		ib_dereg_mr(s->amr2);
	if (s->amr)
		ib_dereg_mr(s->amr);
	kv_fr_base_fini(&s->fr);
	kfree(s);
	return err;
}

int kv_test_frmr_err(struct kv_test *t)
{
	size_t i;
	int err = 0;

	for (i = 0; i < ARRAY_SIZE(kv_fe_cases) && !err; i++)
		err = kv_fe_one(t, &kv_fe_cases[i]);
	return err;
}
