// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_pp: an RC ping-pong between two MetaRoCE devices opened by this one
 * process, every byte checked, with the QPs' retry budget of the caller's
 * choosing: the legitimate user traffic of the hostile-input tests and
 * the soak on a slow kernel, where ibv_rc_pingpong's fixed QP timeout (14,
 * about 0.5 s without progress) is shorter than one RTT.
 *
 *   rc_pp DEV_A DEV_B ITERS SIZE
 *
 * Each iteration A SENDs SIZE bytes to B and B answers with SIZE bytes of
 * another pattern; both depend on the iteration, so a message delivered
 * twice or out of order shows.  MROCE_QP_TIMEOUT in the environment sets
 * the QPs' timeout (dev.c; default 14).  Prints "rc_pp: ok, ITERS
 * iterations of SIZE bytes" and exits 0; prints what failed and exits 1.
 * A completion awaited longer than 600 s is a failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "dev.h"
#include "pattern.h"

#define WC_TIMEOUT_S	600

#define FAIL(...) do {							\
	fprintf(stderr, "rc_pp: ");					\
	fprintf(stderr, __VA_ARGS__);					\
	fprintf(stderr, "\n");						\
	exit(1);							\
} while (0)

/* e on device name, with a buffer of twice size: send half, receive half. */
static void side_open(struct end *e, const char *name, size_t size)
{
	rc_end_open(e, name, 8, 4, 0);
	e->buf = malloc(2 * size);
	if (!e->buf)
		die("malloc", ENOMEM);
	e->mr = ibv_reg_mr(e->pd, e->buf, 2 * size, IBV_ACCESS_LOCAL_WRITE);
	if (!e->mr)
		die("ibv_reg_mr", errno);
}

static void side_close(struct end *e)
{
	if (ibv_destroy_qp(e->qp) || ibv_dereg_mr(e->mr) ||
	    ibv_destroy_cq(e->cq) || ibv_dealloc_pd(e->pd) ||
	    ibv_close_device(e->ctx))
		FAIL("teardown failed");
	free(e->buf);
}

/* Post a receive of size bytes into the second half of e's buffer. */
static void post_recv(struct end *e, size_t size)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(e->buf + size),
		.length = size,
		.lkey = e->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int ret = ibv_post_recv(e->qp, &wr, &bad);

	if (ret)
		die("ibv_post_recv", ret);
}

/* SEND the first size bytes of e's buffer. */
static void post_send(struct end *e, size_t size)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf,
		.length = size,
		.lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	int ret = ibv_post_send(e->qp, &wr, &bad);

	if (ret)
		die("ibv_post_send", ret);
}

/* Wait for the completion wr_id (1 send, 2 receive) on e; it must succeed. */
static void wait_wc(struct end *e, uint64_t wr_id, const char *who, int it)
{
	time_t end = time(NULL) + WC_TIMEOUT_S;
	struct ibv_wc wc;
	int n;

	for (;;) {
		n = ibv_poll_cq(e->cq, 1, &wc);
		if (n < 0)
			FAIL("%s: ibv_poll_cq failed", who);
		if (n == 1)
			break;
		if (time(NULL) > end)
			FAIL("%s, iteration %d: no completion within %d s", who,
			     it, WC_TIMEOUT_S);
	}
	if (wc.status != IBV_WC_SUCCESS)
		FAIL("%s, iteration %d: %s (wr_id %llu)", who, it,
		     ibv_wc_status_str(wc.status),
		     (unsigned long long)wc.wr_id);
	if (wc.wr_id != wr_id)
		FAIL("%s, iteration %d: completion of wr_id %llu, expected %llu",
		     who, it, (unsigned long long)wc.wr_id,
		     (unsigned long long)wr_id);
}

static void check(struct end *e, size_t size, int it, int answer,
		  const char *who)
{
	long off = pattern_check(e->buf + size, size, it, answer);

	if (off >= 0)
		FAIL("%s, iteration %d: byte %ld of %zu wrong", who, it, off,
		     size);
}

int main(int argc, char **argv)
{
	struct end a = { 0 }, b = { 0 };
	size_t size;
	int iters, it;

	if (argc != 5) {
		fprintf(stderr, "usage: rc_pp DEV_A DEV_B ITERS SIZE\n");
		return 2;
	}
	iters = atoi(argv[3]);
	size = strtoul(argv[4], NULL, 0);
	if (iters < 1 || size < 1 || size > (1 << 20))
		FAIL("ITERS at least 1, SIZE 1 to 1048576");
	side_open(&a, argv[1], size);
	side_open(&b, argv[2], size);
	rc_connect(a.qp, a.gidx, &b.gid, b.qp->qp_num, 1);
	rc_connect(b.qp, b.gidx, &a.gid, a.qp->qp_num, 1);
	for (it = 0; it < iters; it++) {
		post_recv(&b, size);
		post_recv(&a, size);
		pattern_fill(a.buf, size, it, 0);
		post_send(&a, size);
		wait_wc(&b, 2, "B's receive", it);
		check(&b, size, it, 0, "B");
		wait_wc(&a, 1, "A's send", it);
		pattern_fill(b.buf, size, it, 1);
		post_send(&b, size);
		wait_wc(&a, 2, "A's receive", it);
		check(&a, size, it, 1, "A");
		wait_wc(&b, 1, "B's send", it);
	}
	side_close(&a);
	side_close(&b);
	printf("rc_pp: ok, %d iterations of %zu bytes\n", iters, size);
	return 0;
}
