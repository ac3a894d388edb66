// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_mw: memory windows over RC, between two MetaRoCE devices (in two
 * network namespaces) opened by this one process.  Side A is the
 * requester; side B owns a 64 KiB buffer registered with LOCAL_WRITE and
 * MW_BIND only (its MR rkey grants nothing remote) and binds windows on
 * its QP.  Every access through a window is checked byte for byte at the
 * target; every refused one is checked to leave the whole target buffer
 * unchanged.
 *
 *   rc_mw TEST DEV_A DEV_B
 *
 * TEST is one of: type1 type2 type2_ex zero_based range rights local_inv
 * send_inv other_qp rebind bind_errno bind_err_wc dealloc teardown
 * bind_flood.
 * Prints "ok" and exits 0 on success; prints what failed and exits 1.
 * Built with dev.c (build_prog in lib.sh).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "dev.h"

#define LEN	(64 * 1024)
#define WOFF	4096		/* the window: [WOFF, WOFF + WLEN) of B's buffer */
#define WLEN	8192
#define QP_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define MW_ALL	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		 IBV_ACCESS_REMOTE_ATOMIC)
#define SEND_OPS (IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ | \
		  IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV | \
		  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
		  IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV)

struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int gidx;
	union ibv_gid gid;
};

/* A connected pair of RC QPs: a on device A, b on device B. */
struct pair {
	struct ibv_cq *cq_a, *cq_b;
	struct ibv_qp *qp_a, *qp_b;
};

static struct dev A, B;
static uint8_t *abuf, *bbuf, *snap;
static struct ibv_mr *amr, *bmr;
static const char *test;

#define FAIL(...) do {							\
	fprintf(stderr, "rc_mw %s: line %d: ", test, __LINE__);	\
	fprintf(stderr, __VA_ARGS__);					\
	fprintf(stderr, "\n");						\
	exit(1);							\
} while (0)
#define CHECK(cond, ...) do { if (!(cond)) FAIL(__VA_ARGS__); } while (0)

static void dev_open(struct dev *d, const char *name)
{
	d->ctx = open_dev(name);
	d->gidx = find_gid(d->ctx, &d->gid);
	d->pd = ibv_alloc_pd(d->ctx);
	CHECK(d->pd, "ibv_alloc_pd: %s", strerror(errno));
}

static struct ibv_qp *qp_create(struct dev *d, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = d->pd,
		.send_ops_flags = SEND_OPS,
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = QP_ACCESS,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(d->ctx, &init);

	CHECK(qp, "ibv_create_qp_ex: %s", strerror(errno));
	CHECK(!ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "to INIT");
	return qp;
}

static void pair_up(struct pair *p)
{
	p->cq_a = ibv_create_cq(A.ctx, 64, NULL, NULL, 0);
	p->cq_b = ibv_create_cq(B.ctx, 64, NULL, NULL, 0);
	CHECK(p->cq_a && p->cq_b, "ibv_create_cq: %s", strerror(errno));
	p->qp_a = qp_create(&A, p->cq_a);
	p->qp_b = qp_create(&B, p->cq_b);
	rc_connect(p->qp_a, A.gidx, &B.gid, p->qp_b->qp_num, 4);
	rc_connect(p->qp_b, B.gidx, &A.gid, p->qp_a->qp_num, 4);
}

static void pair_down(struct pair *p)
{
	CHECK(!ibv_destroy_qp(p->qp_a) && !ibv_destroy_qp(p->qp_b),
	      "ibv_destroy_qp");
	CHECK(!ibv_destroy_cq(p->cq_a) && !ibv_destroy_cq(p->cq_b),
	      "ibv_destroy_cq");
}

/* After an error both QPs are in the error state: start over. */
static void pair_renew(struct pair *p)
{
	pair_down(p);
	pair_up(p);
}

static struct ibv_wc wait_wc(struct ibv_cq *cq, const char *what)
{
	time_t end = time(NULL) + 60;
	struct ibv_wc wc;
	int n;

	while (!(n = ibv_poll_cq(cq, 1, &wc)))
		CHECK(time(NULL) <= end, "%s: no completion", what);
	CHECK(n == 1, "%s: ibv_poll_cq %d", what, n);
	return wc;
}

static void no_wc(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;

	CHECK(ibv_poll_cq(cq, 1, &wc) == 0, "%s: unexpected completion %s",
	      what, ibv_wc_status_str(wc.status));
}

static void expect(enum ibv_wc_status got, enum ibv_wc_status want,
		   const char *what)
{
	CHECK(got == want, "%s: status %s, expected %s", what,
	      ibv_wc_status_str(got), ibv_wc_status_str(want));
}

/*
 * One RDMA operation from A: len bytes at A's abuf + loff, B's raddr
 * through rkey.  Returns the completion status.
 */
static enum ibv_wc_status rdma(struct pair *p, enum ibv_wr_opcode op,
			       uint32_t loff, uint32_t len, uint64_t raddr,
			       uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)abuf + loff, .length = len,
		.lkey = amr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	int ret;

	if (op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	ret = ibv_post_send(p->qp_a, &wr, &bad);
	CHECK(!ret, "ibv_post_send: %s", strerror(ret));
	wc = wait_wc(p->cq_a, "RDMA");
	CHECK(wc.wr_id == 7, "wr_id %llu", (unsigned long long)wc.wr_id);
	return wc.status;
}

static uint64_t wva(unsigned int off)
{
	return (uintptr_t)bbuf + off;
}

static void fill(uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + seed * 13 + (i >> 8));
}

static void take_snapshot(void)
{
	memcpy(snap, bbuf, LEN);
}

static void unchanged(const char *what)
{
	size_t i;

	for (i = 0; i < LEN; i++)
		CHECK(bbuf[i] == snap[i],
		      "%s: target byte %zu changed (%#x, was %#x)", what, i,
		      bbuf[i], snap[i]);
}

/*
 * WRITE, READ and both atomics through rkey, the window's first byte being
 * addressed as base; every target byte checked (outside the window too).
 */
static void use_window(struct pair *p, uint32_t rkey, uint64_t base,
		       unsigned int seed)
{
	uint64_t *target = (uint64_t *)(bbuf + WOFF + 8), *res;

	/* WRITE the whole window. */
	fill(bbuf, LEN, seed + 1);
	take_snapshot();
	fill(abuf, WLEN, seed);
	expect(rdma(p, IBV_WR_RDMA_WRITE, 0, WLEN, base, rkey, 0, 0),
	       IBV_WC_SUCCESS, "WRITE through the window");
	CHECK(!memcmp(bbuf + WOFF, abuf, WLEN), "WRITE: window bytes differ");
	CHECK(!memcmp(bbuf, snap, WOFF) &&
	      !memcmp(bbuf + WOFF + WLEN, snap + WOFF + WLEN,
		      LEN - WOFF - WLEN), "WRITE: bytes outside the window");

	/* READ a part in the middle. */
	fill(bbuf + WOFF, WLEN, seed + 2);
	memset(abuf, 0, LEN);
	expect(rdma(p, IBV_WR_RDMA_READ, 0, 3000, base + 1000, rkey, 0, 0),
	       IBV_WC_SUCCESS, "READ through the window");
	CHECK(!memcmp(abuf, bbuf + WOFF + 1000, 3000), "READ: bytes differ");

	/* FETCH_ADD then CMP_SWP on the 8-byte word at window offset 8. */
	*target = 0x1122334455667700ULL + seed;
	res = (uint64_t *)abuf;
	*res = 0;
	expect(rdma(p, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8, base + 8, rkey, 5, 0),
	       IBV_WC_SUCCESS, "FETCH_ADD through the window");
	CHECK(*res == 0x1122334455667700ULL + seed, "FETCH_ADD returned %#llx",
	      (unsigned long long)*res);
	CHECK(*target == 0x1122334455667705ULL + seed, "FETCH_ADD left %#llx",
	      (unsigned long long)*target);
	expect(rdma(p, IBV_WR_ATOMIC_CMP_AND_SWP, 0, 8, base + 8, rkey,
		    0x1122334455667705ULL + seed, 0xdeadbeefcafef00dULL),
	       IBV_WC_SUCCESS, "CMP_SWP through the window");
	CHECK(*res == 0x1122334455667705ULL + seed && *target ==
	      0xdeadbeefcafef00dULL, "CMP_SWP: %#llx / %#llx",
	      (unsigned long long)*res, (unsigned long long)*target);
}

/*
 * A refused access: REM_ACCESS_ERR at A, not one target byte touched; the
 * pair is renewed for what follows.
 */
static void refused(struct pair *p, enum ibv_wr_opcode op, uint32_t len,
		    uint64_t raddr, uint32_t rkey, const char *what)
{
	fill(bbuf, LEN, 99);
	take_snapshot();
	fill(abuf, LEN, 42);
	expect(rdma(p, op, 0, len, raddr, rkey, 1, 2), IBV_WC_REM_ACCESS_ERR,
	       what);
	unchanged(what);
	pair_renew(p);
}

static int bind1(struct pair *p, struct ibv_mw *mw, struct ibv_mr *mr,
		 uint64_t addr, uint64_t len, unsigned int access)
{
	struct ibv_mw_bind bind = {
		.wr_id = 11,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = addr, .length = len,
			       .mw_access_flags = access },
	};

	return ibv_bind_mw(p->qp_b, mw, &bind);
}

/* ibv_bind_mw and its completion: the completion status. */
static enum ibv_wc_status bind1_wc(struct pair *p, struct ibv_mw *mw,
				   struct ibv_mr *mr, uint64_t addr,
				   uint64_t len, unsigned int access)
{
	uint32_t old = mw->rkey;
	struct ibv_wc wc;
	int ret;

	ret = bind1(p, mw, mr, addr, len, access);
	CHECK(!ret, "ibv_bind_mw: %s", strerror(ret));
	CHECK(mw->rkey == ibv_inc_rkey(old), "rkey %#x after bind of %#x",
	      mw->rkey, old);
	wc = wait_wc(p->cq_b, "bind");
	CHECK(wc.wr_id == 11, "bind wr_id");
	if (wc.status == IBV_WC_SUCCESS)
		CHECK(wc.opcode == IBV_WC_BIND_MW, "bind opcode %d", wc.opcode);
	else
		mw->rkey = old;	/* ibv_bind_mw(3): the caller's to undo */
	return wc.status;
}

/* A type 2 bind (post_send, or the ibv_wr_* API): its completion status. */
static enum ibv_wc_status bind2_wc(struct pair *p, struct ibv_mw *mw,
				   uint32_t rkey, struct ibv_mr *mr,
				   uint64_t addr, uint64_t len,
				   unsigned int access, bool wr_api)
{
	struct ibv_mw_bind_info info = {
		.mr = mr, .addr = addr, .length = len,
		.mw_access_flags = access,
	};
	struct ibv_send_wr wr = {
		.wr_id = 12, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = rkey, .bind_info = info },
	}, *bad;
	uint32_t old = mw->rkey;
	struct ibv_qp_ex *qpx;
	struct ibv_wc wc;
	int ret;

	if (wr_api) {
		qpx = ibv_qp_to_qp_ex(p->qp_b);
		CHECK(qpx, "ibv_qp_to_qp_ex");
		ibv_wr_start(qpx);
		qpx->wr_id = 12;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(qpx, mw, rkey, &info);
		ret = ibv_wr_complete(qpx);
		CHECK(!ret, "ibv_wr_bind_mw: %s", strerror(ret));
	} else {
		ret = ibv_post_send(p->qp_b, &wr, &bad);
		CHECK(!ret, "ibv_post_send(BIND_MW): %s", strerror(ret));
	}
	wc = wait_wc(p->cq_b, "bind");
	CHECK(wc.wr_id == 12, "bind wr_id");
	if (wc.status == IBV_WC_SUCCESS)
		CHECK(wc.opcode == IBV_WC_BIND_MW && mw->rkey == rkey,
		      "bind opcode %d, mw rkey %#x", wc.opcode, mw->rkey);
	else
		mw->rkey = old;
	return wc.status;
}

static void local_inv(struct pair *p, uint32_t rkey, bool wr_api,
		      enum ibv_wc_status want)
{
	struct ibv_send_wr wr = {
		.wr_id = 13, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey,
	}, *bad;
	struct ibv_qp_ex *qpx;
	struct ibv_wc wc;
	int ret;

	if (wr_api) {
		qpx = ibv_qp_to_qp_ex(p->qp_b);
		ibv_wr_start(qpx);
		qpx->wr_id = 13;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_local_inv(qpx, rkey);
		ret = ibv_wr_complete(qpx);
	} else {
		ret = ibv_post_send(p->qp_b, &wr, &bad);
	}
	CHECK(!ret, "LOCAL_INV post: %s", strerror(ret));
	wc = wait_wc(p->cq_b, "LOCAL_INV");
	expect(wc.status, want, "LOCAL_INV");
	if (want == IBV_WC_SUCCESS)
		CHECK(wc.opcode == IBV_WC_LOCAL_INV && wc.wr_id == 13,
		      "LOCAL_INV opcode %d", wc.opcode);
}

static struct ibv_mw *mw_alloc(enum ibv_mw_type type)
{
	struct ibv_mw *mw = ibv_alloc_mw(B.pd, type);

	CHECK(mw, "ibv_alloc_mw(%d): %s", type, strerror(errno));
	CHECK(mw->type == type && mw->pd == B.pd, "mw fields");
	return mw;
}

static void mw_free(struct ibv_mw *mw)
{
	int ret = ibv_dealloc_mw(mw);

	CHECK(!ret, "ibv_dealloc_mw: %s", strerror(ret));
}

static void qp_in_error(struct ibv_qp *qp, const char *what)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	CHECK(!ibv_query_qp(qp, &attr, IBV_QP_STATE, &init), "ibv_query_qp");
	CHECK(attr.qp_state == IBV_QPS_ERR, "%s: QP state %d, not ERR", what,
	      attr.qp_state);
}

/* ---- the tests ---------------------------------------------------- */

static void t_type1(struct pair *p)
{
	struct ibv_mw *mw = mw_alloc(IBV_MW_TYPE_1);

	/* Allocated, not bound: nothing through its key. */
	refused(p, IBV_WR_RDMA_WRITE, 16, wva(WOFF), mw->rkey,
		"WRITE through an unbound type 1 window");
	/* The MR's own rkey grants no remote access. */
	refused(p, IBV_WR_RDMA_WRITE, 16, wva(WOFF), bmr->rkey,
		"WRITE through the MR's rkey");
	/*
	 * LOCAL_WRITE among a window's rights is accepted and means nothing
	 * (only remote rights apply to a window), as mlx5 and rxe do:
	 * applications pass it (issue 22).
	 */
	expect(bind1_wc(p, mw, bmr, wva(WOFF), WLEN,
			MW_ALL | IBV_ACCESS_LOCAL_WRITE), IBV_WC_SUCCESS, "bind");
	use_window(p, mw->rkey, wva(WOFF), 1);
	mw_free(mw);
}

static void t_type2(struct pair *p, bool wr_api)
{
	struct ibv_mw *mw = mw_alloc(IBV_MW_TYPE_2);
	uint32_t rkey = ibv_inc_rkey(mw->rkey);

	refused(p, IBV_WR_RDMA_READ, 16, wva(WOFF), mw->rkey,
		"READ through an unbound type 2 window");
	expect(bind2_wc(p, mw, rkey, bmr, wva(WOFF), WLEN,
			MW_ALL | IBV_ACCESS_LOCAL_WRITE, wr_api),
	       IBV_WC_SUCCESS, "bind");
	use_window(p, rkey, wva(WOFF), 2);
	mw_free(mw);
}

static void t_zero_based(struct pair *p)
{
	struct ibv_mw *mw = mw_alloc(IBV_MW_TYPE_2);
	uint32_t rkey = ibv_inc_rkey(mw->rkey);

	expect(bind2_wc(p, mw, rkey, bmr, wva(WOFF), WLEN,
			MW_ALL | IBV_ACCESS_ZERO_BASED, false),
	       IBV_WC_SUCCESS, "zero-based bind");
	use_window(p, rkey, 0, 3);
	/* The window's addresses end at WLEN. */
	rkey = mw->rkey;
	refused(p, IBV_WR_RDMA_WRITE, 8, WLEN - 4, rkey,
		"WRITE past a zero-based window");
	mw_free(mw);
}

static void t_range(struct pair *p)
{
	struct ibv_mw *mw = mw_alloc(IBV_MW_TYPE_1);
	uint32_t rkey;

	expect(bind1_wc(p, mw, bmr, wva(WOFF), WLEN, MW_ALL), IBV_WC_SUCCESS,
	       "bind");
	rkey = mw->rkey;
	/* Type 1 windows outlive their QP: renewing the pair keeps them. */
	refused(p, IBV_WR_RDMA_WRITE, 16, wva(WOFF - 8), rkey,
		"WRITE across the window's start");
	refused(p, IBV_WR_RDMA_WRITE, 16, wva(WOFF + WLEN - 8), rkey,
		"WRITE across the window's end");
	refused(p, IBV_WR_RDMA_WRITE, 16, wva(0), rkey,
		"WRITE before the window");
	refused(p, IBV_WR_RDMA_READ, 64, wva(WOFF + WLEN), rkey,
		"READ after the window");
	refused(p, IBV_WR_ATOMIC_FETCH_AND_ADD, 8, wva(WOFF + WLEN), rkey,
		"FETCH_ADD after the window");
	refused(p, IBV_WR_RDMA_WRITE, 16, wva(WOFF), rkey ^ 0x80,
		"WRITE with another key byte");
	/* And still fine inside. */
	use_window(p, rkey, wva(WOFF), 4);
	mw_free(mw);
}

static void t_rights(struct pair *p)
{
	struct ibv_mw *mw = mw_alloc(IBV_MW_TYPE_1);
	uint32_t rkey;

	expect(bind1_wc(p, mw, bmr, wva(WOFF), WLEN, IBV_ACCESS_REMOTE_READ),
	       IBV_WC_SUCCESS, "read-only bind");
	rkey = mw->rkey;
	refused(p, IBV_WR_RDMA_WRITE, 16, wva(WOFF), rkey,
		"WRITE through a read-only window");
	refused(p, IBV_WR_ATOMIC_CMP_AND_SWP, 8, wva(WOFF), rkey,
		"CMP_SWP through a read-only window");
	fill(bbuf, LEN, 5);
	expect(rdma(p, IBV_WR_RDMA_READ, 0, WLEN, wva(WOFF), rkey, 0, 0),
	       IBV_WC_SUCCESS, "READ through a read-only window");
	CHECK(!memcmp(abuf, bbuf + WOFF, WLEN), "READ bytes differ");

	/* A write-only window: no READ. */
	expect(bind1_wc(p, mw, bmr, wva(WOFF), WLEN, IBV_ACCESS_REMOTE_WRITE),
	       IBV_WC_SUCCESS, "write-only rebind");
	refused(p, IBV_WR_RDMA_READ, 16, wva(WOFF), mw->rkey,
		"READ through a write-only window");
	mw_free(mw);
}

static void t_local_inv(struct pair *p)
{
	struct ibv_mw *mw = mw_alloc(IBV_MW_TYPE_2);
	uint32_t rkey = ibv_inc_rkey(mw->rkey), old;
	int round;

	for (round = 0; round < 2; round++) {
		expect(bind2_wc(p, mw, rkey, bmr, wva(WOFF), WLEN, MW_ALL,
				round), IBV_WC_SUCCESS, "bind");
		use_window(p, rkey, wva(WOFF), 5 + round);
		/* post_send in round 0, ibv_wr_local_inv in round 1. */
		local_inv(p, rkey, round, IBV_WC_SUCCESS);
		refused(p, IBV_WR_RDMA_WRITE, 16, wva(WOFF), rkey,
			"WRITE after LOCAL_INV");
		old = rkey;
		rkey = ibv_inc_rkey(rkey);
		/* Rebound with a new key byte: the old key stays dead. */
		expect(bind2_wc(p, mw, rkey, bmr, wva(WOFF), WLEN, MW_ALL,
				false), IBV_WC_SUCCESS, "rebind");
		refused(p, IBV_WR_RDMA_READ, 16, wva(WOFF), old,
			"READ with the key invalidated");
		/* (The renewed pair freed the window: its QP is gone.) */
		refused(p, IBV_WR_RDMA_READ, 16, wva(WOFF), rkey,
			"READ after the binding QP was destroyed");
		rkey = ibv_inc_rkey(rkey);
	}
	/* A type 1 window cannot be invalidated. */
	mw_free(mw);
	mw = mw_alloc(IBV_MW_TYPE_1);
	expect(bind1_wc(p, mw, bmr, wva(WOFF), WLEN, MW_ALL), IBV_WC_SUCCESS,
	       "type 1 bind");
	local_inv(p, mw->rkey, false, IBV_WC_LOC_PROT_ERR);
	qp_in_error(p->qp_b, "failed LOCAL_INV");
	pair_renew(p);
	use_window(p, mw->rkey, wva(WOFF), 7);
	mw_free(mw);
}

static void t_send_inv(struct pair *p)
{
	struct ibv_mw *mw = mw_alloc(IBV_MW_TYPE_2);
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_sge rsge = {
		.addr = (uintptr_t)bbuf + 40000, .length = 256,
		.lkey = bmr->lkey,
	}, ssge = {
		.addr = (uintptr_t)abuf, .length = 64, .lkey = amr->lkey,
	};
	struct ibv_recv_wr rwr = { .wr_id = 21, .sg_list = &rsge,
				   .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = {
		.wr_id = 22, .sg_list = &ssge, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey,
	}, *sbad;
	struct ibv_wc wc;

	expect(bind2_wc(p, mw, rkey, bmr, wva(WOFF), WLEN, MW_ALL, false),
	       IBV_WC_SUCCESS, "bind");
	use_window(p, rkey, wva(WOFF), 8);
	CHECK(!ibv_post_recv(p->qp_b, &rwr, &rbad), "ibv_post_recv");
	fill(abuf, 64, 9);
	CHECK(!ibv_post_send(p->qp_a, &swr, &sbad), "SEND_WITH_INV post");
	wc = wait_wc(p->cq_a, "SEND_WITH_INV");
	expect(wc.status, IBV_WC_SUCCESS, "SEND_WITH_INV");
	wc = wait_wc(p->cq_b, "receive");
	expect(wc.status, IBV_WC_SUCCESS, "receive of SEND_WITH_INV");
	CHECK(wc.opcode == IBV_WC_RECV && (wc.wc_flags & IBV_WC_WITH_INV) &&
	      wc.invalidated_rkey == rkey && wc.byte_len == 64,
	      "receive: opcode %d flags %#x rkey %#x len %u", wc.opcode,
	      wc.wc_flags, wc.invalidated_rkey, wc.byte_len);
	CHECK(!memcmp(bbuf + 40000, abuf, 64), "SEND bytes differ");
	refused(p, IBV_WR_RDMA_WRITE, 16, wva(WOFF), rkey,
		"WRITE after SEND_WITH_INV");
	mw_free(mw);
}

static void t_other_qp(struct pair *p)
{
	struct ibv_mw *mw2 = mw_alloc(IBV_MW_TYPE_2);
	struct ibv_mw *mw1 = mw_alloc(IBV_MW_TYPE_1);
	uint32_t rkey = ibv_inc_rkey(mw2->rkey);
	struct pair q;

	pair_up(&q);
	expect(bind2_wc(p, mw2, rkey, bmr, wva(WOFF), WLEN, MW_ALL, false),
	       IBV_WC_SUCCESS, "type 2 bind on the first pair");
	expect(bind1_wc(p, mw1, bmr, wva(WOFF), WLEN, MW_ALL), IBV_WC_SUCCESS,
	       "type 1 bind on the first pair");
	/* A type 1 window serves every QP of its PD. */
	use_window(&q, mw1->rkey, wva(WOFF), 10);
	/* A type 2 one only the peer of the QP that bound it. */
	refused(&q, IBV_WR_RDMA_WRITE, 16, wva(WOFF), rkey,
		"WRITE to a type 2 window from another QP");
	refused(&q, IBV_WR_RDMA_READ, 16, wva(WOFF), rkey,
		"READ of a type 2 window from another QP");
	use_window(p, rkey, wva(WOFF), 11);
	/* Nor can another QP's peer invalidate it (SEND_WITH_INV). */
	{
		struct ibv_sge ssge = { .addr = (uintptr_t)abuf, .length = 8,
					.lkey = amr->lkey };
		struct ibv_sge rsge = { .addr = (uintptr_t)bbuf + 40000,
					.length = 64, .lkey = bmr->lkey };
		struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 },
				   *rbad;
		struct ibv_send_wr swr = {
			.sg_list = &ssge, .num_sge = 1,
			.opcode = IBV_WR_SEND_WITH_INV,
			.send_flags = IBV_SEND_SIGNALED,
			.invalidate_rkey = rkey,
		}, *sbad;
		struct ibv_wc wc;

		CHECK(!ibv_post_recv(q.qp_b, &rwr, &rbad), "post_recv");
		CHECK(!ibv_post_send(q.qp_a, &swr, &sbad), "post_send");
		wc = wait_wc(q.cq_a, "SEND_WITH_INV from another QP");
		CHECK(wc.status != IBV_WC_SUCCESS,
		      "another QP's peer invalidated a type 2 window");
	}
	use_window(p, rkey, wva(WOFF), 12);
	pair_down(&q);
	mw_free(mw1);
	mw_free(mw2);
}

static void t_rebind(struct pair *p)
{
	struct ibv_mw *mw = mw_alloc(IBV_MW_TYPE_1);
	uint32_t k1, k2;

	expect(bind1_wc(p, mw, bmr, wva(WOFF), WLEN, MW_ALL), IBV_WC_SUCCESS,
	       "bind");
	k1 = mw->rkey;
	use_window(p, k1, wva(WOFF), 13);
	/* Rebind elsewhere: a new key; the old one is dead. */
	expect(bind1_wc(p, mw, bmr, wva(WOFF + 2 * WLEN), WLEN, MW_ALL),
	       IBV_WC_SUCCESS, "rebind");
	k2 = mw->rkey;
	CHECK(k2 != k1 && k2 >> 8 == k1 >> 8, "keys %#x %#x", k1, k2);
	fill(abuf, WLEN, 14);
	fill(bbuf, LEN, 15);
	take_snapshot();
	expect(rdma(p, IBV_WR_RDMA_WRITE, 0, WLEN, wva(WOFF + 2 * WLEN), k2,
		    0, 0), IBV_WC_SUCCESS, "WRITE through the rebound window");
	CHECK(!memcmp(bbuf + WOFF + 2 * WLEN, abuf, WLEN) &&
	      !memcmp(bbuf, snap, WOFF + 2 * WLEN), "rebound WRITE bytes");
	refused(p, IBV_WR_RDMA_WRITE, 16, wva(WOFF), k1,
		"WRITE with the key before the rebind");
	refused(p, IBV_WR_RDMA_WRITE, 16, wva(WOFF + 2 * WLEN), k1,
		"WRITE with the old key into the new range");
	refused(p, IBV_WR_RDMA_WRITE, 16, wva(WOFF), k2,
		"WRITE with the new key into the old range");
	/* A zero-length bind unbinds. */
	expect(bind1_wc(p, mw, NULL, 0, 0, 0), IBV_WC_SUCCESS, "unbind");
	refused(p, IBV_WR_RDMA_READ, 16, wva(WOFF + 2 * WLEN), k2,
		"READ with the key before the unbind");
	refused(p, IBV_WR_RDMA_READ, 16, wva(WOFF + 2 * WLEN), mw->rkey,
		"READ through the unbound window");
	/* The MR has no window any more: it can go. */
	expect(bind1_wc(p, mw, bmr, wva(WOFF), WLEN, MW_ALL), IBV_WC_SUCCESS,
	       "bind after unbind");
	use_window(p, mw->rkey, wva(WOFF), 16);
	mw_free(mw);
}

static void t_bind_errno(struct pair *p)
{
	struct ibv_mw *mw1 = mw_alloc(IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = mw_alloc(IBV_MW_TYPE_2);
	struct ibv_pd *pd2 = ibv_alloc_pd(B.ctx);
	struct ibv_mr *mr2;
	struct ibv_mw_bind_info info = {
		.mr = bmr, .addr = wva(WOFF), .length = WLEN,
		.mw_access_flags = MW_ALL,
	};
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw1, .rkey = ibv_inc_rkey(mw1->rkey),
			     .bind_info = info },
	}, *bad;
	struct ibv_qp_init_attr ud = {
		.qp_type = IBV_QPT_UD, .send_cq = p->cq_b, .recv_cq = p->cq_b,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *udqp;
	uint32_t k1 = mw1->rkey;
	struct ibv_mw_bind mb = { .bind_info = info };

	CHECK(pd2, "ibv_alloc_pd");
	mr2 = ibv_reg_mr(pd2, bbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_MW_BIND);
	CHECK(mr2, "ibv_reg_mr: %s", strerror(errno));

	errno = 0;
	CHECK(!ibv_alloc_mw(B.pd, (enum ibv_mw_type)3) && errno == EINVAL,
	      "ibv_alloc_mw(type 3): errno %d", errno);
	/* ibv_bind_mw(3) is for type 1 windows only. */
	CHECK(ibv_bind_mw(p->qp_b, mw2, &mb) == EINVAL, "bind_mw on type 2");
	/* Type 1 windows are never zero based. */
	CHECK(bind1(p, mw1, bmr, wva(WOFF), WLEN,
		    MW_ALL | IBV_ACCESS_ZERO_BASED) == EINVAL,
	      "zero-based type 1");
	/* Window rights are remote ones (LOCAL_WRITE is ignored: t_type1). */
	CHECK(bind1(p, mw1, bmr, wva(WOFF), WLEN, IBV_ACCESS_MW_BIND) ==
	      EINVAL, "MW_BIND window");
	/* A length without an MR; an MR of another PD. */
	CHECK(bind1(p, mw1, NULL, wva(WOFF), WLEN, MW_ALL) == EINVAL,
	      "length without MR");
	CHECK(bind1(p, mw1, mr2, wva(WOFF), WLEN, MW_ALL) == EPERM,
	      "MR of another PD");
	CHECK(mw1->rkey == k1, "a refused bind changed the key");
	/* IBV_WR_BIND_MW is for type 2 windows. */
	CHECK(ibv_post_send(p->qp_b, &wr, &bad) == EINVAL && bad == &wr,
	      "IBV_WR_BIND_MW on type 1");
	/* Type 2: an MR and a length are required (o10-37.2.40). */
	wr.bind_mw.mw = mw2;
	wr.bind_mw.rkey = ibv_inc_rkey(mw2->rkey);
	wr.bind_mw.bind_info.length = 0;
	CHECK(ibv_post_send(p->qp_b, &wr, &bad) == EINVAL,
	      "zero-length type 2 bind");
	wr.bind_mw.bind_info.length = WLEN;
	wr.bind_mw.bind_info.mr = NULL;
	CHECK(ibv_post_send(p->qp_b, &wr, &bad) == EINVAL,
	      "type 2 bind without MR");
	wr.bind_mw.bind_info.mr = bmr;
	wr.send_flags |= IBV_SEND_INLINE;
	CHECK(ibv_post_send(p->qp_b, &wr, &bad) == EINVAL, "inline bind");
	wr.send_flags = IBV_SEND_SIGNALED;
	/* No binding on a UD QP. */
	udqp = ibv_create_qp(B.pd, &ud);
	CHECK(udqp, "UD QP");
	attr.qkey = 1;
	CHECK(!ibv_modify_qp(udqp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_QKEY), "UD INIT");
	attr.qp_state = IBV_QPS_RTR;
	CHECK(!ibv_modify_qp(udqp, &attr, IBV_QP_STATE), "UD RTR");
	attr.qp_state = IBV_QPS_RTS;
	CHECK(!ibv_modify_qp(udqp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN),
	      "UD RTS");
	CHECK(ibv_post_send(udqp, &wr, &bad) == EINVAL, "bind on UD");
	CHECK(bind1(&(struct pair){ .qp_b = udqp }, mw1, bmr, wva(WOFF),
		    WLEN, MW_ALL) == EINVAL, "ibv_bind_mw on UD");
	CHECK(!ibv_destroy_qp(udqp), "destroy UD QP");
	/* Nothing was posted. */
	no_wc(p->cq_b, "refused binds");
	/* And the QP still works. */
	expect(bind1_wc(p, mw1, bmr, wva(WOFF), WLEN, MW_ALL), IBV_WC_SUCCESS,
	       "bind after the refusals");
	use_window(p, mw1->rkey, wva(WOFF), 17);
	mw_free(mw1);
	mw_free(mw2);
	CHECK(!ibv_dereg_mr(mr2) && !ibv_dealloc_pd(pd2), "cleanup");
}

/* Binds the kernel refuses: IBV_WC_MW_BIND_ERR, and the QP in error. */
static void bind_err(struct pair *p, enum ibv_wc_status st, const char *what)
{
	expect(st, IBV_WC_MW_BIND_ERR, what);
	qp_in_error(p->qp_b, what);
	pair_renew(p);
}

static void t_bind_err_wc(struct pair *p)
{
	struct ibv_mw *mw1 = mw_alloc(IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = mw_alloc(IBV_MW_TYPE_2);
	struct ibv_mr *nobind, *noloc;
	uint32_t k;

	nobind = ibv_reg_mr(B.pd, bbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	noloc = ibv_reg_mr(B.pd, bbuf, LEN, IBV_ACCESS_MW_BIND |
			   IBV_ACCESS_REMOTE_READ);
	CHECK(nobind && noloc, "ibv_reg_mr: %s", strerror(errno));

	/* C10-73: the MR must allow binding. */
	bind_err(p, bind1_wc(p, mw1, nobind, wva(WOFF), WLEN, MW_ALL),
		 "MR without MW_BIND");
	/* C10-74: remote write or atomic needs local write on the MR. */
	bind_err(p, bind1_wc(p, mw1, noloc, wva(WOFF), WLEN,
			     IBV_ACCESS_REMOTE_WRITE), "write window, no local write");
	bind_err(p, bind1_wc(p, mw1, noloc, wva(WOFF), WLEN,
			     IBV_ACCESS_REMOTE_ATOMIC), "atomic window, no local write");
	/* C10-75: the window lies inside the MR. */
	bind_err(p, bind1_wc(p, mw1, bmr, wva(LEN - 4096), 8192, MW_ALL),
		 "window past the MR's end");
	bind_err(p, bind2_wc(p, mw2, ibv_inc_rkey(mw2->rkey), bmr,
			     wva(0) - 4096, 8192, MW_ALL, false),
		 "window before the MR's start");
	/* A type 2 key keeps the window's index. */
	bind_err(p, bind2_wc(p, mw2, ibv_inc_rkey(mw2->rkey) + 0x100, bmr,
			     wva(WOFF), WLEN, MW_ALL, false),
		 "type 2 key with another index");
	/* Only a free type 2 window can be bound (o10-37.2.30). */
	k = ibv_inc_rkey(mw2->rkey);
	expect(bind2_wc(p, mw2, k, bmr, wva(WOFF), WLEN, MW_ALL, false),
	       IBV_WC_SUCCESS, "type 2 bind");
	bind_err(p, bind2_wc(p, mw2, ibv_inc_rkey(k), bmr, wva(WOFF), WLEN,
			     MW_ALL, true), "bind of a bound type 2 window");
	/* A type 1 bind naming a stale key (the provider's copy wrong). */
	mw1->rkey ^= 0x40;
	bind_err(p, bind1_wc(p, mw1, bmr, wva(WOFF), WLEN, MW_ALL),
		 "type 1 bind with a stale key");
	mw_free(mw1);
	mw1 = mw_alloc(IBV_MW_TYPE_1);
	expect(bind1_wc(p, mw1, bmr, wva(WOFF), WLEN, MW_ALL), IBV_WC_SUCCESS,
	       "bind after the errors");
	use_window(p, mw1->rkey, wva(WOFF), 18);
	mw_free(mw1);
	mw_free(mw2);
	CHECK(!ibv_dereg_mr(nobind) && !ibv_dereg_mr(noloc), "dereg");
}

static void t_dealloc(struct pair *p)
{
	struct ibv_mw *mw1 = mw_alloc(IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = mw_alloc(IBV_MW_TYPE_2);
	struct ibv_mr *mr = ibv_reg_mr(B.pd, bbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_MW_BIND);
	uint32_t k1, k2 = ibv_inc_rkey(mw2->rkey);
	int ret;

	CHECK(mr, "ibv_reg_mr");
	expect(bind1_wc(p, mw1, mr, wva(WOFF), WLEN, MW_ALL), IBV_WC_SUCCESS,
	       "type 1 bind");
	k1 = mw1->rkey;
	expect(bind2_wc(p, mw2, k2, mr, wva(WOFF), WLEN, MW_ALL, false),
	       IBV_WC_SUCCESS, "type 2 bind");
	/* An MR with windows bound stays (IBA 10.6.7.2.6, as rxe). */
	ret = ibv_dereg_mr(mr);
	CHECK(ret == EINVAL, "dereg of an MR with bound windows: %d", ret);
	use_window(p, k2, wva(WOFF), 19);
	/* A bound window may be deallocated; its key dies with it. */
	mw_free(mw2);
	refused(p, IBV_WR_RDMA_WRITE, 16, wva(WOFF), k2,
		"WRITE through a deallocated type 2 window");
	ret = ibv_dereg_mr(mr);
	CHECK(ret == EINVAL, "dereg with a type 1 window bound: %d", ret);
	use_window(p, k1, wva(WOFF), 20);
	mw_free(mw1);
	refused(p, IBV_WR_RDMA_READ, 16, wva(WOFF), k1,
		"READ through a deallocated type 1 window");
	ret = ibv_dereg_mr(mr);
	CHECK(!ret, "dereg after the windows went: %s", strerror(ret));

	/* Destroying the binding QP frees a type 2 window's MR too. */
	mr = ibv_reg_mr(B.pd, bbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_MW_BIND);
	mw2 = mw_alloc(IBV_MW_TYPE_2);
	k2 = ibv_inc_rkey(mw2->rkey);
	CHECK(mr, "ibv_reg_mr");
	expect(bind2_wc(p, mw2, k2, mr, wva(WOFF), WLEN, MW_ALL, true),
	       IBV_WC_SUCCESS, "type 2 bind");
	CHECK(ibv_dereg_mr(mr) == EINVAL, "dereg with a type 2 window bound");
	pair_renew(p);
	ret = ibv_dereg_mr(mr);
	CHECK(!ret, "dereg after the binding QP went: %s", strerror(ret));
	refused(p, IBV_WR_RDMA_WRITE, 16, wva(WOFF), k2,
		"WRITE through a window of a destroyed QP");
	/* The window is free again: it binds anew. */
	k2 = ibv_inc_rkey(k2);
	expect(bind2_wc(p, mw2, k2, bmr, wva(WOFF), WLEN, MW_ALL, false),
	       IBV_WC_SUCCESS, "type 2 bind on a new QP");
	use_window(p, k2, wva(WOFF), 21);
	mw_free(mw2);
}

/*
 * Exit with windows bound, created before the MR they are bound to: the
 * kernel's cleanup must free everything in whatever order it goes.
 */
static void t_teardown(struct pair *p)
{
	struct ibv_mw *mw1 = mw_alloc(IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = mw_alloc(IBV_MW_TYPE_2);
	struct ibv_mr *mr = ibv_reg_mr(B.pd, bbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_MW_BIND);

	CHECK(mr, "ibv_reg_mr");
	expect(bind1_wc(p, mw1, mr, wva(WOFF), WLEN, MW_ALL), IBV_WC_SUCCESS,
	       "type 1 bind");
	expect(bind2_wc(p, mw2, ibv_inc_rkey(mw2->rkey), mr, wva(WOFF), WLEN,
			MW_ALL, false), IBV_WC_SUCCESS, "type 2 bind");
	use_window(p, mw1->rkey, wva(WOFF), 22);
	use_window(p, mw2->rkey, wva(WOFF), 23);
	printf("ok\n");
	fflush(stdout);
	exit(0);		/* nothing destroyed */
}

/*
 * bind_flood: one thread keeps B's SQ full of unsignalled zero-length type
 * 1 binds (no window needed, nothing on the wire) for FLOOD_SECS while
 * the main thread measures SEND round trips on a second QP pair of the
 * same connection.  The kernel must not take the SQ in one go with its
 * connection lock held and bottom halves off (a soft lockup, and the
 * connection's packets wait): every SEND completes within FLOOD_MAX_RTT.
 */
#define FLOOD_SECS	12
#define FLOOD_MAX_RTT	5.0

struct flood {
	struct pair *p;
	struct ibv_mw *mw;
	volatile bool stop;
	unsigned long posted;
	int err;
};

static void *flood_binds(void *arg)
{
	struct flood *f = arg;
	struct ibv_mw_bind bind = { .wr_id = 13 };	/* unsignalled, unbind */
	int ret;

	while (!f->stop) {
		ret = ibv_bind_mw(f->p->qp_b, f->mw, &bind);
		if (!ret)
			f->posted++;
		else if (ret != ENOMEM) {
			f->err = ret;
			break;
		}
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void t_bind_flood(struct pair *p)
{
	struct flood f = { .p = p, .mw = mw_alloc(IBV_MW_TYPE_1) };
	struct ibv_sge rsge = { (uintptr_t)bbuf, 64, bmr->lkey };
	struct ibv_sge ssge = { (uintptr_t)abuf, 64, amr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 21, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_send_wr swr = { .wr_id = 22, .sg_list = &ssge, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *sbad;
	double start, t0, rtt, worst = 0;
	struct pair p2;
	pthread_t th;
	int n = 0;

	pair_up(&p2);
	CHECK(!pthread_create(&th, NULL, flood_binds, &f), "pthread_create");
	start = now_s();
	while (now_s() - start < FLOOD_SECS) {
		fill(abuf, 64, n);
		CHECK(!ibv_post_recv(p2.qp_b, &rwr, &rbad), "ibv_post_recv");
		t0 = now_s();
		CHECK(!ibv_post_send(p2.qp_a, &swr, &sbad), "ibv_post_send");
		expect(wait_wc(p2.cq_a, "send").status, IBV_WC_SUCCESS, "send");
		expect(wait_wc(p2.cq_b, "recv").status, IBV_WC_SUCCESS, "recv");
		rtt = now_s() - t0;
		worst = rtt > worst ? rtt : worst;
		CHECK(!memcmp(abuf, bbuf, 64), "SEND %d: bytes differ", n);
		n++;
	}
	f.stop = true;
	pthread_join(th, NULL);
	printf("# %lu binds posted, %d SENDs, slowest %.3f s\n", f.posted, n,
	       worst);
	CHECK(!f.err, "ibv_bind_mw: %s", strerror(f.err));
	CHECK(f.posted > 1000, "only %lu binds posted", f.posted);
	CHECK(worst < FLOOD_MAX_RTT, "a SEND took %.3f s during the flood",
	      worst);
	/* B's QP took every bind: nothing failed, it still sends. */
	no_wc(p->cq_b, "unsignalled binds");
	pair_down(&p2);
	mw_free(f.mw);
}

int main(int argc, char **argv)
{
	struct pair p;

	if (argc != 4) {
		fprintf(stderr, "usage: rc_mw TEST DEV_A DEV_B\n");
		return 2;
	}
	test = argv[1];
	dev_open(&A, argv[2]);
	dev_open(&B, argv[3]);
	if (posix_memalign((void **)&abuf, 4096, LEN) ||
	    posix_memalign((void **)&bbuf, 4096, LEN) ||
	    !(snap = malloc(LEN)))
		FAIL("out of memory");
	memset(abuf, 0, LEN);
	memset(bbuf, 0, LEN);
	amr = ibv_reg_mr(A.pd, abuf, LEN, IBV_ACCESS_LOCAL_WRITE);
	/* No remote right of its own: only windows open it. */
	bmr = ibv_reg_mr(B.pd, bbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_MW_BIND);
	CHECK(amr && bmr, "ibv_reg_mr: %s", strerror(errno));
	pair_up(&p);

	if (!strcmp(test, "type1"))
		t_type1(&p);
	else if (!strcmp(test, "type2"))
		t_type2(&p, false);
	else if (!strcmp(test, "type2_ex"))
		t_type2(&p, true);
	else if (!strcmp(test, "zero_based"))
		t_zero_based(&p);
	else if (!strcmp(test, "range"))
		t_range(&p);
	else if (!strcmp(test, "rights"))
		t_rights(&p);
	else if (!strcmp(test, "local_inv"))
		t_local_inv(&p);
	else if (!strcmp(test, "send_inv"))
		t_send_inv(&p);
	else if (!strcmp(test, "other_qp"))
		t_other_qp(&p);
	else if (!strcmp(test, "rebind"))
		t_rebind(&p);
	else if (!strcmp(test, "bind_errno"))
		t_bind_errno(&p);
	else if (!strcmp(test, "bind_err_wc"))
		t_bind_err_wc(&p);
	else if (!strcmp(test, "dealloc"))
		t_dealloc(&p);
	else if (!strcmp(test, "teardown"))
		t_teardown(&p);
	else if (!strcmp(test, "bind_flood"))
		t_bind_flood(&p);
	else
		FAIL("unknown test");

	pair_down(&p);
	CHECK(!ibv_dereg_mr(amr) && !ibv_dereg_mr(bmr), "ibv_dereg_mr");
	CHECK(!ibv_dealloc_pd(A.pd) && !ibv_dealloc_pd(B.pd), "dealloc_pd");
	CHECK(!ibv_close_device(A.ctx) && !ibv_close_device(B.ctx), "close");
	printf("ok\n");
	return 0;
}
