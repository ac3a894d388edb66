// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_big: messages as large as the device allows (its port's max_msg_sz,
 * 2 GiB) over RC between two MetaRoCE devices opened by this one process.
 * One work request each: an RDMA WRITE from A into B, an RDMA READ by A
 * of B, a SEND from A into one receive of B, every byte checked against a
 * pattern that depends on its offset (a misplaced or missing segment
 * shows).  Then a SEND one byte over max_msg_sz, which must complete with
 * IBV_WC_LOC_LEN_ERR.
 *
 *   rc_big DEV_A DEV_B [MIB]
 *
 * MIB makes the three messages MIB MiB instead of max_msg_sz (the
 * oversized one stays max_msg_sz + 1).  Path MTU 4096.  Prints one line per
 * step and "ok", exits 0; prints what failed and exits 1.  Built with
 * dev.c (build_prog in lib.sh).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "dev.h"

#define WC_TIMEOUT_S	1200
#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		IBV_ACCESS_REMOTE_READ)

#define FAIL(...) do {							\
	fprintf(stderr, "rc_big: line %d: ", __LINE__);		\
	fprintf(stderr, __VA_ARGS__);					\
	fprintf(stderr, "\n");						\
	exit(1);							\
} while (0)
#define CHECK(cond, ...) do { if (!(cond)) FAIL(__VA_ARGS__); } while (0)

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint64_t *buf;
	int gidx;
	union ibv_gid gid;
};

static void side_open(struct side *s, const char *name, size_t len)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 2, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = ACCESS,
	};

	s->ctx = open_dev(name);
	s->gidx = find_gid(s->ctx, &s->gid);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 8, NULL, NULL, 0);
	CHECK(s->pd && s->cq, "%s: PD/CQ: %s", name, strerror(errno));
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &init);
	CHECK(s->qp, "%s: ibv_create_qp: %s", name, strerror(errno));
	CHECK(!ibv_modify_qp(s->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "to INIT");
	s->buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(s->buf != MAP_FAILED, "%s: mmap %zu: %s", name, len,
	      strerror(errno));
	s->mr = ibv_reg_mr(s->pd, s->buf, len, ACCESS);
	CHECK(s->mr, "%s: ibv_reg_mr %zu bytes: %s", name, len,
	      strerror(errno));
}

/* Word i of the pattern of seed: differs at every offset and per seed. */
static uint64_t word(uint64_t seed, size_t i)
{
	return (i + 1) * 0x9e3779b97f4a7c15ULL ^ seed;
}

static void fill(uint64_t *buf, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len / 8; i++)
		buf[i] = word(seed, i);
}

static void check(const char *what, const uint64_t *buf, size_t len,
		  uint64_t seed)
{
	size_t i, bad = 0, first = 0;

	for (i = 0; i < len / 8; i++) {
		if (buf[i] == word(seed, i))
			continue;
		if (!bad++)
			first = i;
	}
	CHECK(!bad, "%s: %zu of %zu words wrong, the first at byte %zu",
	      what, bad, len / 8, first * 8);
}

static struct ibv_wc wait_wc(struct ibv_cq *cq, const char *what)
{
	time_t end = time(NULL) + WC_TIMEOUT_S;
	struct ibv_wc wc;
	int n;

	while (!(n = ibv_poll_cq(cq, 1, &wc)))
		CHECK(time(NULL) <= end, "%s: no completion in %d s", what,
		      WC_TIMEOUT_S);
	CHECK(n == 1, "%s: ibv_poll_cq %d", what, n);
	return wc;
}

static void expect_wc(struct ibv_cq *cq, const char *what,
		      enum ibv_wc_status status, enum ibv_wc_opcode op)
{
	struct ibv_wc wc = wait_wc(cq, what);

	CHECK(wc.status == status, "%s: status %s, wanted %s", what,
	      ibv_wc_status_str(wc.status), ibv_wc_status_str(status));
	CHECK(status != IBV_WC_SUCCESS || wc.opcode == op,
	      "%s: opcode %d, wanted %d", what, wc.opcode, op);
}

static void post(struct side *s, enum ibv_wr_opcode op, struct ibv_sge *sge,
		 int nsge, const struct side *peer)
{
	struct ibv_send_wr wr = {
		.sg_list = sge,
		.num_sge = nsge,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int ret;

	if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_READ) {
		wr.wr.rdma.remote_addr = (uintptr_t)peer->buf;
		wr.wr.rdma.rkey = peer->mr->rkey;
	}
	ret = ibv_post_send(s->qp, &wr, &bad);
	CHECK(!ret, "ibv_post_send opcode %d: %s", op, strerror(ret));
}

static void post_recv(struct side *s, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf, .length = len, .lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int ret;

	ret = ibv_post_recv(s->qp, &wr, &bad);
	CHECK(!ret, "ibv_post_recv: %s", strerror(ret));
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct ibv_port_attr pa;
	struct side a, b;
	struct ibv_sge sge[2];
	struct ibv_wc wc;
	uint64_t one = 0;
	struct ibv_mr *one_mr;
	size_t len, max;
	double t;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: rc_big DEV_A DEV_B [MIB]\n");
		return 2;
	}
	a.ctx = open_dev(argv[1]);
	CHECK(!ibv_query_port(a.ctx, 1, &pa), "ibv_query_port");
	max = pa.max_msg_sz;
	ibv_close_device(a.ctx);
	CHECK(max >= 1ULL << 31, "max_msg_sz %zu is below 2 GiB", max);
	len = argc == 4 ? strtoull(argv[3], NULL, 0) << 20 : max;
	CHECK(len && len <= max && !(len % 8), "bad size %zu", len);
	printf("max_msg_sz %zu, messages of %zu bytes\n", max, len);

	side_open(&a, argv[1], len);
	side_open(&b, argv[2], len);
	rc_connect_mtu(a.qp, a.gidx, &b.gid, b.qp->qp_num, 1, IBV_MTU_4096);
	rc_connect_mtu(b.qp, b.gidx, &a.gid, a.qp->qp_num, 1, IBV_MTU_4096);
	sge[0] = (struct ibv_sge){
		.addr = (uintptr_t)a.buf, .length = len, .lkey = a.mr->lkey,
	};

	fill(a.buf, len, 1);
	t = now();
	post(&a, IBV_WR_RDMA_WRITE, sge, 1, &b);
	expect_wc(a.cq, "WRITE", IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	printf("WRITE %zu bytes in %.1f s\n", len, now() - t);
	check("WRITE target", b.buf, len, 1);

	memset(a.buf, 0, len);
	t = now();
	post(&a, IBV_WR_RDMA_READ, sge, 1, &b);
	expect_wc(a.cq, "READ", IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	printf("READ %zu bytes in %.1f s\n", len, now() - t);
	check("READ destination", a.buf, len, 1);

	fill(a.buf, len, 2);
	post_recv(&b, len);
	t = now();
	post(&a, IBV_WR_SEND, sge, 1, NULL);
	expect_wc(a.cq, "SEND", IBV_WC_SUCCESS, IBV_WC_SEND);
	wc = wait_wc(b.cq, "RECV");
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV,
	      "RECV: status %s opcode %d", ibv_wc_status_str(wc.status),
	      wc.opcode);
	CHECK(wc.byte_len == len, "RECV byte_len %u, wanted %zu", wc.byte_len,
	      len);
	printf("SEND %zu bytes in %.1f s\n", len, now() - t);
	check("SEND target", b.buf, len, 2);

	/* max_msg_sz + 1: the whole buffer (or max) and one more byte. */
	one_mr = ibv_reg_mr(a.pd, &one, sizeof(one), IBV_ACCESS_LOCAL_WRITE);
	CHECK(one_mr, "ibv_reg_mr: %s", strerror(errno));
	if (len < max) {
		printf("skipping the oversized SEND: buffers below max_msg_sz\n");
	} else {
		sge[1] = (struct ibv_sge){
			.addr = (uintptr_t)&one, .length = 1,
			.lkey = one_mr->lkey,
		};
		post(&a, IBV_WR_SEND, sge, 2, NULL);
		expect_wc(a.cq, "SEND of max_msg_sz + 1", IBV_WC_LOC_LEN_ERR,
			  IBV_WC_SEND);
		printf("SEND of %zu bytes: IBV_WC_LOC_LEN_ERR\n", len + 1);
	}

	CHECK(!ibv_destroy_qp(a.qp) && !ibv_destroy_qp(b.qp), "destroy QP");
	CHECK(!ibv_dereg_mr(a.mr) && !ibv_dereg_mr(b.mr) &&
	      !ibv_dereg_mr(one_mr), "dereg MR");
	CHECK(!ibv_destroy_cq(a.cq) && !ibv_destroy_cq(b.cq), "destroy CQ");
	CHECK(!ibv_dealloc_pd(a.pd) && !ibv_dealloc_pd(b.pd), "dealloc PD");
	ibv_close_device(a.ctx);
	ibv_close_device(b.ctx);
	printf("ok\n");
	return 0;
}
