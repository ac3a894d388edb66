// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_atomic: ATOMIC_CMP_AND_SWP that succeeds and one that fails, and
 * ATOMIC_FETCH_AND_ADD with a carry across 32 bits and a wrap at 2^64, a->b.
 * Checks the original value returned to a, the target after each
 * operation, and that the neighbouring words are untouched.
 */
#include "kverbs.h"

#define KV_RA_WORDS		8
#define KV_RA_CANARY		0xa5a5a5a5a5a5a5a5ULL

struct kv_ra {
	struct kv_test *t;
	struct kv_ep a, b;
	struct kv_buf target;		/* on b: KV_RA_WORDS u64 */
	struct kv_buf result;		/* on a: KV_RA_WORDS u64 */
	struct kv_rmr rmr;
	u32 n;
};

struct kv_ra_op {
	const char *what;
	enum ib_wr_opcode opcode;
	int word;		/* target word */
	u64 before;		/* its value before */
	u64 compare_add;
	u64 swap;
	u64 after;		/* its value after */
};

static int kv_ra_check(struct kv_ra *s, const struct kv_ra_op *op, int slot)
{
	const u64 *target = (const u64 *)s->target.va;
	const u64 *result = (const u64 *)s->result.va;
	struct kv_test *t = s->t;
	int i;

	kv_buf_for_cpu(&s->result);
	kv_buf_for_cpu(&s->target);
	if (result[slot] != op->before)
		return kv_fail(t, "%s: returned 0x%016llx, expected the original 0x%016llx",
			       op->what, result[slot], op->before);
	if (READ_ONCE(target[op->word]) != op->after)
		return kv_fail(t, "%s: target is 0x%016llx, expected 0x%016llx",
			       op->what, target[op->word], op->after);
	for (i = 0; i < KV_RA_WORDS; i++) {
		if (i != slot && result[i] != KV_RA_CANARY)
			return kv_fail(t, "%s: local word %d overwritten",
				       op->what, i);
		if (i != op->word && target[i] != KV_RA_CANARY)
			return kv_fail(t, "%s: target word %d overwritten",
				       op->what, i);
	}
	return 0;
}

static int kv_ra_one(struct kv_ra *s, const struct kv_ra_op *op)
{
	u64 *target = (u64 *)s->target.va, *result = (u64 *)s->result.va;
	int slot = s->n % KV_RA_WORDS, i, err;
	struct ib_atomic_wr wr = {};
	struct kv_test *t = s->t;
	struct ib_sge sge;
	struct ib_wc wc;

	for (i = 0; i < KV_RA_WORDS; i++) {
		target[i] = KV_RA_CANARY;
		result[i] = KV_RA_CANARY;
	}
	target[op->word] = op->before;
	kv_buf_for_dev(&s->target);
	kv_buf_for_dev(&s->result);

	sge = kv_sge(&s->a, &s->result, slot * sizeof(u64), sizeof(u64));
	wr.wr.wr_id = 0x6000 + s->n++;
	wr.wr.opcode = op->opcode;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = s->rmr.addr + op->word * sizeof(u64);
	wr.rkey = s->rmr.rkey;
	wr.compare_add = op->compare_add;
	wr.swap = op->swap;
	err = kv_post_send(t, &s->a, &wr.wr, op->what);
	if (!err)
		err = kv_expect(t, s->a.scq, &wc, wr.wr.wr_id, IB_WC_SUCCESS,
				op->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
				IB_WC_COMP_SWAP : IB_WC_FETCH_ADD, op->what);
	if (err)
		return err;
	if (wc.byte_len != sizeof(u64))
		return kv_fail(t, "%s: byte_len %u, expected 8", op->what,
			       wc.byte_len);
	return kv_ra_check(s, op, slot);
}

static const struct kv_ra_op kv_ra_ops[] = {
	{ "CMP_AND_SWP that matches", IB_WR_ATOMIC_CMP_AND_SWP, 2,
	  0x1111222233334444ULL, 0x1111222233334444ULL,
	  0x5555666677778888ULL, 0x5555666677778888ULL },
	{ "CMP_AND_SWP that does not match", IB_WR_ATOMIC_CMP_AND_SWP, 2,
	  0x5555666677778888ULL, 0x1111222233334444ULL,
	  0x9999aaaabbbbccccULL, 0x5555666677778888ULL },
	{ "FETCH_AND_ADD", IB_WR_ATOMIC_FETCH_AND_ADD, 5,
	  0x5555666677778888ULL, 0x11, 0, 0x5555666677778899ULL },
	{ "FETCH_AND_ADD with a carry into bit 32",
	  IB_WR_ATOMIC_FETCH_AND_ADD, 3,
	  0x00000000ffffffffULL, 1, 0, 0x0000000100000000ULL },
	{ "FETCH_AND_ADD wrapping at 2^64", IB_WR_ATOMIC_FETCH_AND_ADD, 7,
	  0x0000000100000000ULL, ~0ULL, 0, 0x00000000ffffffffULL },
	{ "CMP_AND_SWP on word 0", IB_WR_ATOMIC_CMP_AND_SWP, 0,
	  0, 0, 0xfedcba9876543210ULL, 0xfedcba9876543210ULL },
};

int kv_test_rc_atomic(struct kv_test *t)
{
	struct kv_dev *dev = t->ctx->dev;
	struct kv_ra s = { .t = t };
	size_t i;
	int err;

	for (i = 0; i < 2; i++) {
		if (dev[i].ibdev->attrs.atomic_cap == IB_ATOMIC_NONE)
			return kv_fail(t, "%s reports atomic_cap IB_ATOMIC_NONE",
				       dev[i].name);
	}
	err = kv_rc_pair_default(t, &s.a, &s.b);
	if (!err)
		err = kv_buf_alloc(t, &s.target, s.b.dev->ibdev,
				   KV_RA_WORDS * sizeof(u64));
	if (!err)
		err = kv_buf_alloc(t, &s.result, s.a.dev->ibdev,
				   KV_RA_WORDS * sizeof(u64));
	if (!err)
		err = kv_rmr_reg(t, &s.b, &s.target, IB_ACCESS_REMOTE_ATOMIC,
				 &s.rmr);
	for (i = 0; i < ARRAY_SIZE(kv_ra_ops) && !err; i++)
		err = kv_ra_one(&s, &kv_ra_ops[i]);
	kv_ep_destroy(&s.b);
	kv_ep_destroy(&s.a);
	kv_buf_free(&s.result);
	kv_buf_free(&s.target);
	return err;
}
