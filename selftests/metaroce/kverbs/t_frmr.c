// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * frmr: fast registration as kernel ULPs use it.  b maps three separate
 * pages into an MR from byte 512 of the first page and posts an unsignalled
 * REG_MR and a SEND in one post: once the SEND has arrived, a's WRITE
 * through the new key must work (MRC-VRB-011).  The WRITE crosses both page
 * boundaries and must land in the right pages; a READ returns it.  A
 * signalled chain of REG_MRs and one of LOCAL_INVs complete in order, with
 * their opcodes.  The MR is then mapped again with iova 0 (zero-based) and
 * the next key (ib_inc_rkey): a WRITE through the new key lands, one
 * through the old key fails with IB_WC_REM_ACCESS_ERR and changes nothing.
 */
#include <linux/mm.h>

#include "kverbs.h"

#define KV_FR_SG_OFF		512
#define KV_FR_WOFF		(PAGE_SIZE - 612)	/* in the MR */
#define KV_FR_WLEN		(PAGE_SIZE + 1000)
#define KV_FR_NOTE		16
#define KV_FR_ACCESS		(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ)
#define KV_FR_SEED_W		500
#define KV_FR_SEED_W2		501
#define KV_FR_ZB_OFF		100
#define KV_FR_ZB_LEN		300

struct kv_fr {
	struct kv_test *t;
	struct kv_fr_base fr;		/* rb on a: the READ sink */
	struct kv_buf anote, bnote;	/* the SEND that follows the REG_MR */
	struct ib_mr *mr[3];		/* on b */
};

/* REG_MR + SEND in one post; a WRITEs when the SEND arrives. */
static int kv_fr_order(struct kv_fr *s)
{
	struct kv_test *t = s->t;
	struct ib_mr *mr = s->mr[0];
	struct ib_send_wr send = {};
	unsigned int off = KV_FR_SG_OFF;
	struct ib_rdma_wr rdma;
	struct ib_reg_wr reg;
	struct ib_sge sge, nsge;
	struct ib_wc wc;
	int n, err;

	n = ib_map_mr_sg(mr, s->fr.m.sg, KV_FR_PAGES, &off, PAGE_SIZE);
	if (n != KV_FR_PAGES)
		return kv_fail(t, "ib_map_mr_sg: %d", n);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	kv_reg_wr(&reg, mr, KV_FR_ACCESS, 10, false);
	nsge = kv_sge(&s->fr.b, &s->bnote, 0, KV_FR_NOTE);
	send.wr_id = 11;
	send.opcode = IB_WR_SEND;
	send.send_flags = IB_SEND_SIGNALED;
	send.sg_list = &nsge;
	send.num_sge = 1;
	reg.wr.next = &send;

	err = kv_post_recv_buf(t, &s->fr.a, 20, &s->anote, 0, KV_FR_NOTE);
	if (!err)
		err = kv_post_send(t, &s->fr.b, &reg.wr, "REG_MR + SEND");
	if (!err)
		err = kv_expect(t, s->fr.a.rcq, &wc, 20, IB_WC_SUCCESS,
				IB_WC_RECV, "the SEND after the REG_MR");
	if (err)
		return err;

	kv_fill(s->fr.sb.va, KV_FR_WLEN, KV_FR_SEED_W, 0);
	kv_buf_for_dev(&s->fr.sb);
	kv_rdma_wr(&rdma, &sge, &s->fr.a, &s->fr.sb, 0, KV_FR_WLEN,
		   IB_WR_RDMA_WRITE, mr->iova + KV_FR_WOFF, mr->rkey, 21);
	err = kv_send_wait(t, &s->fr.a, &rdma.wr, IB_WC_RDMA_WRITE,
			   "WRITE through the key registered before the SEND");
	/* The unsignalled REG_MR completes nothing; the SEND does. */
	if (!err)
		err = kv_expect(t, s->fr.b.scq, &wc, 11, IB_WC_SUCCESS,
				IB_WC_SEND,
				"the SEND behind the unsignalled REG_MR");
	if (!err)
		err = kv_pages_check(t, &s->fr.m, KV_FR_SG_OFF + KV_FR_WOFF,
				     KV_FR_WLEN, KV_FR_SEED_W,
				     "pages after the WRITE");
	if (err)
		return err;

	kv_canary(s->fr.rb.va, s->fr.rb.len);
	kv_buf_for_dev(&s->fr.rb);
	kv_rdma_wr(&rdma, &sge, &s->fr.a, &s->fr.rb, 0, KV_FR_WLEN,
		   IB_WR_RDMA_READ, mr->iova + KV_FR_WOFF, mr->rkey, 22);
	err = kv_send_wait(t, &s->fr.a, &rdma.wr, IB_WC_RDMA_READ,
			   "READ through the fast-registered key");
	if (err)
		return err;
	kv_buf_for_cpu(&s->fr.rb);
	return kv_check_pattern(t, s->fr.rb.va, KV_FR_WLEN, KV_FR_SEED_W, 0,
				"READ of the WRITE");
}

/* A signalled chain of two REG_MRs, then one of three LOCAL_INVs. */
static int kv_fr_chains(struct kv_fr *s)
{
	struct kv_test *t = s->t;
	struct ib_send_wr inv[3];
	struct ib_reg_wr reg[2];
	struct ib_wc wc;
	int i, n, err = 0;

	for (i = 0; i < 2; i++) {
		n = ib_map_mr_sg(s->mr[i + 1], s->fr.m.sg, KV_FR_PAGES, NULL,
				 PAGE_SIZE);
		if (n != KV_FR_PAGES)
			return kv_fail(t, "ib_map_mr_sg: %d", n);
		ib_update_fast_reg_key(s->mr[i + 1],
				       ib_inc_rkey(s->mr[i + 1]->rkey));
		kv_reg_wr(&reg[i], s->mr[i + 1], KV_FR_ACCESS, 30 + i, true);
		if (i)
			reg[i - 1].wr.next = &reg[i].wr;
	}
	err = kv_post_send(t, &s->fr.b, &reg[0].wr, "chain of REG_MRs");
	for (i = 0; i < 2 && !err; i++)
		err = kv_expect(t, s->fr.b.scq, &wc, 30 + i, IB_WC_SUCCESS,
				IB_WC_REG_MR, "chained REG_MR");
	for (i = 0; i < 3 && !err; i++) {
		kv_inv_wr(&inv[i], s->mr[i]->rkey, 40 + i, true);
		if (i)
			inv[i - 1].next = &inv[i];
	}
	if (!err)
		err = kv_post_send(t, &s->fr.b, &inv[0], "chain of LOCAL_INVs");
	for (i = 0; i < 3 && !err; i++)
		err = kv_expect(t, s->fr.b.scq, &wc, 40 + i, IB_WC_SUCCESS,
				IB_WC_LOCAL_INV, "chained LOCAL_INV");
	return err;
}

/* Zero-based iova and the next key; the old key is dead. */
static int kv_fr_rotate(struct kv_fr *s)
{
	struct kv_test *t = s->t;
	struct ib_mr *mr = s->mr[0];
	u32 old = mr->rkey;
	u64 old_va = mr->iova;
	struct ib_rdma_wr rdma;
	struct ib_reg_wr reg;
	struct ib_sge sge;
	int n, err;

	kv_pages_canary(&s->fr.m);
	n = ib_map_mr_sg_zbva(mr, s->fr.m.sg, KV_FR_PAGES, NULL, PAGE_SIZE);
	if (n != KV_FR_PAGES || mr->iova)
		return kv_fail(t, "ib_map_mr_sg_zbva: %d, iova 0x%llx", n,
			       mr->iova);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	if (mr->rkey == old || mr->rkey >> 8 != old >> 8)
		return kv_fail(t, "ib_inc_rkey: 0x%x after 0x%x", mr->rkey, old);
	kv_reg_wr(&reg, mr, KV_FR_ACCESS, 50, true);
	err = kv_send_wait(t, &s->fr.b, &reg.wr, IB_WC_REG_MR,
			   "REG_MR with the next key");
	if (err)
		return err;

	kv_fill(s->fr.sb.va, KV_FR_ZB_LEN, KV_FR_SEED_W2, 0);
	kv_buf_for_dev(&s->fr.sb);
	kv_rdma_wr(&rdma, &sge, &s->fr.a, &s->fr.sb, 0, KV_FR_ZB_LEN,
		   IB_WR_RDMA_WRITE, KV_FR_ZB_OFF, mr->rkey, 51);
	err = kv_send_wait(t, &s->fr.a, &rdma.wr, IB_WC_RDMA_WRITE,
			   "WRITE through the new key, zero-based");
	if (!err)
		err = kv_pages_check(t, &s->fr.m, KV_FR_ZB_OFF, KV_FR_ZB_LEN,
				     KV_FR_SEED_W2, "pages after the new key");
	if (!err)
		err = kv_write_denied(t, &s->fr.a, &s->fr.sb, 64,
				      old_va + KV_FR_WOFF, old,
				      "WRITE through the old key");
	if (!err)
		err = kv_pages_check(t, &s->fr.m, KV_FR_ZB_OFF, KV_FR_ZB_LEN,
				     KV_FR_SEED_W2,
				     "pages after the WRITE through the old key");
	return err;
}

int kv_test_frmr(struct kv_test *t)
{
	struct kv_fr *s;
	int i, err;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->t = t;
	err = kv_fr_base_init(t, &s->fr, KV_FR_WLEN, true, KV_FR_WLEN);
	if (!err)
		err = kv_buf_alloc(t, &s->anote, s->fr.a.dev->ibdev,
				   KV_FR_NOTE);
	if (!err)
		err = kv_buf_alloc(t, &s->bnote, s->fr.b.dev->ibdev,
				   KV_FR_NOTE);
	for (i = 0; i < 3 && !err; i++)
		err = kv_fr_alloc_mr(t, s->fr.b.pd, &s->mr[i]);
	if (!err)
		err = kv_fr_order(s);
	if (!err)
		err = kv_fr_chains(s);
	if (!err)
		err = kv_fr_rotate(s);

	for (i = 0; i < 3; i++)
		if (s->mr[i])
			ib_dereg_mr(s->mr[i]);
	kv_fr_base_fini(&s->fr);
	kv_buf_free(&s->bnote);
	kv_buf_free(&s->anote);
	kfree(s);
	return err;
}
