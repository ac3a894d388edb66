// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_fork: RDMA keeps working in a process that forks.  Two MetaRoCE
 * devices in this one process, an RC QP on each, connected; a buffer on
 * each side registered.  Then the process forks, and while the child is
 * alive the parent
 *   - writes a new pattern into its buffer and RDMA WRITEs it to the peer
 *     (the HCA must send what the parent wrote, not a stale copy), and
 *   - has the peer RDMA WRITE into the parent's buffer and reads it with
 *     the CPU (the parent must see it, not a private copy),
 * checking every byte.  The child touches its copy of the buffer (unless
 * the buffer is not inherited, MADV_DONTFORK) and exits.
 *
 *   rc_fork [-i] DEV_A DEV_B
 *
 * -i calls ibv_fork_init() first (RDMAV_FORK_SAFE=1 in the environment
 * makes libibverbs do that itself).  Prints ibv_is_fork_initialized() and
 * "ok" on success; exits 1 on any failure.  Built with dev.c
 * (build_prog in lib.sh).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "dev.h"

#define LEN	(64 * 1024)
#define ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ)

static void setup(struct end *e, const char *name)
{
	rc_end_open(e, name, 64, 16, ACCESS);
	if (posix_memalign((void **)&e->buf, 4096, LEN))
		die("posix_memalign", ENOMEM);
	memset(e->buf, 0, LEN);
	e->mr = ibv_reg_mr(e->pd, e->buf, LEN, ACCESS);
	if (!e->mr)
		die("ibv_reg_mr", errno);
}

/* RDMA WRITE all of src's buffer into dst's and wait for the completion. */
static void rdma_write(struct end *src, struct end *dst)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)src->buf, .length = LEN,
		.lkey = src->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)dst->buf,
			     .rkey = dst->mr->rkey },
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	time_t end = time(NULL) + 60;
	int n, ret;

	ret = ibv_post_send(src->qp, &wr, &bad);
	if (ret)
		die("ibv_post_send", ret);
	while (!(n = ibv_poll_cq(src->cq, 1, &wc)))
		if (time(NULL) > end)
			die("RDMA WRITE completion", ETIMEDOUT);
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "rc_fork: RDMA WRITE: %s\n",
			ibv_wc_status_str(wc.status));
		exit(1);
	}
}

static void fill(uint8_t *p, unsigned int seed)
{
	size_t i;

	for (i = 0; i < LEN; i++)
		p[i] = (uint8_t)(i * 7 + seed + (i >> 8));
}

static int check(const uint8_t *p, unsigned int seed, const char *what)
{
	size_t i;

	for (i = 0; i < LEN; i++) {
		if (p[i] != (uint8_t)(i * 7 + seed + (i >> 8))) {
			fprintf(stderr, "rc_fork: %s: byte %zu differs\n", what,
				i);
			return 1;
		}
	}
	return 0;
}

static const char *fork_status(void)
{
	switch (ibv_is_fork_initialized()) {
	case IBV_FORK_DISABLED:
		return "disabled";
	case IBV_FORK_ENABLED:
		return "enabled";
	case IBV_FORK_UNNEEDED:
		return "unneeded";
	}
	return "?";
}

int main(int argc, char **argv)
{
	int i = 1, err = 0, go[2], status;
	bool protect;
	struct end a, b;
	pid_t child;
	char c = 0;

	if (argc > 1 && !strcmp(argv[1], "-i")) {
		if (ibv_fork_init())
			die("ibv_fork_init", errno);
		i++;
	}
	protect = i > 1 || getenv("RDMAV_FORK_SAFE") || getenv("IBV_FORK_SAFE");
	if (argc - i != 2) {
		fprintf(stderr, "usage: rc_fork [-i] DEV_A DEV_B\n");
		return 2;
	}
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	setup(&a, argv[i]);
	setup(&b, argv[i + 1]);
	rc_connect(a.qp, a.gidx, &b.gid, b.qp->qp_num, 1);
	rc_connect(b.qp, b.gidx, &a.gid, a.qp->qp_num, 1);
	printf("fork status: %s\n", fork_status());

	/* Before the fork: both directions. */
	fill(a.buf, 1);
	rdma_write(&a, &b);
	err |= check(b.buf, 1, "write before fork");

	if (pipe(go))
		die("pipe", errno);
	fflush(stdout);
	child = fork();
	if (child < 0)
		die("fork", errno);
	if (!child) {
		/*
		 * Scribble on the inherited copy of the buffer, unless fork
		 * protection kept it from being inherited (MADV_DONTFORK).
		 */
		if (!protect)
			memset(a.buf, 0xee, LEN);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		_exit(0);
	}

	/* The child is alive: the parent's pages must still be the HCA's. */
	fill(a.buf, 2);
	rdma_write(&a, &b);
	err |= check(b.buf, 2, "write of data the parent wrote after fork");
	fill(b.buf, 3);
	rdma_write(&b, &a);
	err |= check(a.buf, 3, "write into the parent's buffer after fork");
	fill(a.buf, 4);
	rdma_write(&a, &b);
	err |= check(b.buf, 4, "second write after fork");

	if (write(go[1], &c, 1) != 1)
		die("write", errno);
	if (waitpid(child, &status, 0) != child)
		die("waitpid", errno);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "rc_fork: child status %#x\n", status);
		err = 1;
	}

	/* After the child is gone. */
	fill(b.buf, 5);
	rdma_write(&b, &a);
	err |= check(a.buf, 5, "write after the child exited");

	ibv_destroy_qp(a.qp);
	ibv_destroy_qp(b.qp);
	ibv_dereg_mr(a.mr);
	ibv_dereg_mr(b.mr);
	ibv_destroy_cq(a.cq);
	ibv_destroy_cq(b.cq);
	ibv_dealloc_pd(a.pd);
	ibv_dealloc_pd(b.pd);
	ibv_close_device(a.ctx);
	ibv_close_device(b.ctx);
	if (!err)
		printf("ok\n");
	return err;
}
