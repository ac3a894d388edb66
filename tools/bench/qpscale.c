// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qpscale: how many RC QP pairs between two verbs devices can be set up and
 * carry traffic, and what they cost in kernel memory.
 *
 *   qpscale -a DEV_A -b DEV_B -n N [-x GID_A[,GID_A...]]
 *           [-X GID_B[,GID_B...]] [-s SIZE] [-w SECONDS]
 *
 * One process opens both devices (the two ends of a link), creates N QPs on
 * each, connects QP i of A to QP i of B, and moves one RDMA WRITE of SIZE
 * bytes over every pair; B's buffer is checked byte by byte.  With several
 * GIDs (one per address), pair i uses B's (i mod nB)-th and A's
 * ((i / nB) mod nA)-th, so the pairs spread over up to nA x nB address
 * pairs (MetaRoCE: one connection each).
 *
 * Output: key=value lines.  mem_* are /proc/meminfo deltas in kB from
 * before the first verbs call to the moment every QP is in RTS (setup),
 * after the traffic (traffic) and, with -w, SECONDS later with every QP
 * still open (idle); rss_kb is this process's own RSS growth.
 * Exit 0 when all N pairs carried their write intact, 1 otherwise.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define MAX_GIDS 64

/* A comma-separated list of GID indexes into g[]; returns how many. */
static int gid_list(char *arg, int *g)
{
	char *tok;
	int n = 0;

	for (tok = strtok(arg, ","); tok && n < MAX_GIDS; tok = strtok(NULL, ","))
		g[n++] = atoi(tok);
	return n;
}

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_qp **qp;
	enum ibv_mtu mtu;
	int cqe;
};

static const char *mem_keys[] = {
	"MemFree", "Slab", "SUnreclaim", "VmallocUsed", "PageTables",
	"KernelStack",
};
#define NKEYS (sizeof(mem_keys) / sizeof(mem_keys[0]))

struct mem {
	long kb[NKEYS];
	long rss;
};

static long status_kb(const char *path, const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

static void mem_snap(struct mem *m)
{
	FILE *f = fopen("/proc/sys/vm/stat_refresh", "w");
	size_t i;

	/* Fold the per-CPU counters so that the deltas are exact (root only). */
	if (f) {
		fputs("1\n", f);
		fclose(f);
	}

	for (i = 0; i < NKEYS; i++)
		m->kb[i] = status_kb("/proc/meminfo", mem_keys[i]);
	m->rss = status_kb("/proc/self/status", "VmRSS");
}

static void mem_print(const char *tag, const struct mem *a, const struct mem *b)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		printf("mem_%s_%s_kb=%ld\n", tag, mem_keys[i], b->kb[i] - a->kb[i]);
	printf("mem_%s_rss_kb=%ld\n", tag, b->rss - a->rss);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

static int side_init(struct side *s, const char *name, int n, size_t size)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;

	s->ctx = open_dev(name);
	if (!s->ctx) {
		fprintf(stderr, "cannot open %s\n", name);
		return -1;
	}
	if (ibv_query_device(s->ctx, &da) || ibv_query_port(s->ctx, 1, &pa))
		return -1;
	s->mtu = pa.active_mtu;
	s->pd = ibv_alloc_pd(s->ctx);
	s->cqe = n + 16 < da.max_cqe ? n + 16 : da.max_cqe;
	s->cq = s->pd ? ibv_create_cq(s->ctx, s->cqe, NULL, NULL, 0) : NULL;
	s->buf = calloc(n, size);
	s->qp = calloc(n, sizeof(*s->qp));
	if (!s->cq || !s->buf || !s->qp) {
		fprintf(stderr, "%s: pd/cq/buffer: %s\n", name, strerror(errno));
		return -1;
	}
	s->mr = ibv_reg_mr(s->pd, s->buf, (size_t)n * size,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr) {
		fprintf(stderr, "%s: reg_mr: %s\n", name, strerror(errno));
		return -1;
	}
	return 0;
}

static struct ibv_qp *make_qp(struct side *s)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_qp *qp = ibv_create_qp(s->pd, &ia);

	if (!qp)
		return NULL;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

/* RTR then RTS toward remote QPN rqpn at GID dgid, from local GID sgid. */
static int connect_qp(struct ibv_qp *qp, enum ibv_mtu mtu, uint32_t rqpn,
		      const union ibv_gid *dgid, int sgid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = mtu, .dest_qp_num = rqpn,
		.rq_psn = 0, .max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *dgid, .sgid_index = sgid,
				      .hop_limit = 64 } },
	};
	int ret, tries = 0;

	/*
	 * The peer's MAC comes from the IP stack: with the route down (a
	 * link flap) RTR fails ENETUNREACH, EHOSTUNREACH or ETIMEDOUT for a
	 * while.  Try again, for up to 30 s, as an application would.
	 */
	while ((ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER))) {
		if ((ret != ENETUNREACH && ret != EHOSTUNREACH &&
		     ret != ETIMEDOUT) || ++tries >= 30) {
			errno = ret;
			return -1;
		}
		sleep(1);
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static uint8_t pattern(int i, size_t j)
{
	return (uint8_t)(i * 131 + j * 7 + 1);
}

int main(int argc, char **argv)
{
	const char *da = NULL, *db = NULL;
	int n = 0, gid_a[MAX_GIDS] = { 1 }, gid_b[MAX_GIDS] = { 1 }, i, c;
	int ngid_a = 1, ngid_b = 1, idle_s = 0;
	int created = 0, connected = 0, done = 0, bad = 0, errs = 0;
	size_t size = 64, j;
	struct side A = { 0 }, B = { 0 };
	union ibv_gid ga[MAX_GIDS], gb[MAX_GIDS];
	struct mem m0, m1, m2, m3;
	double t0, t1, t2, t3, t4;
	char *ok;

	while ((c = getopt(argc, argv, "a:b:n:x:X:s:w:")) != -1) {
		switch (c) {
		case 'a': da = optarg; break;
		case 'b': db = optarg; break;
		case 'n': n = atoi(optarg); break;
		case 'x': ngid_a = gid_list(optarg, gid_a); break;
		case 'X': ngid_b = gid_list(optarg, gid_b); break;
		case 's': size = strtoul(optarg, NULL, 0); break;
		case 'w': idle_s = atoi(optarg); break;
		default: return 2;
		}
	}
	if (!da || !db || n < 1 || !size || !ngid_a || !ngid_b) {
		fprintf(stderr, "usage: qpscale -a DEV -b DEV -n N [-x GID,...] [-X GID,...] [-s SIZE] [-w S]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	mem_snap(&m0);
	t0 = now();
	if (side_init(&A, da, n, size) || side_init(&B, db, n, size))
		return 1;
	for (i = 0; i < ngid_a; i++)
		if (ibv_query_gid(A.ctx, 1, gid_a[i], &ga[i]))
			return 1;
	for (i = 0; i < ngid_b; i++)
		if (ibv_query_gid(B.ctx, 1, gid_b[i], &gb[i]))
			return 1;
	for (i = 0; i < n; i++) {
		A.qp[i] = make_qp(&A);
		B.qp[i] = A.qp[i] ? make_qp(&B) : NULL;
		if (!B.qp[i]) {
			printf("create_error=%s\n", strerror(errno));
			break;
		}
		created++;
	}
	for (i = 0; i < created; i++) {
		int b = i % ngid_b, a = (i / ngid_b) % ngid_a;

		if (connect_qp(A.qp[i], A.mtu, B.qp[i]->qp_num, &gb[b], gid_a[a]) ||
		    connect_qp(B.qp[i], B.mtu, A.qp[i]->qp_num, &ga[a], gid_b[b])) {
			printf("connect_error=%s\n", strerror(errno));
			break;
		}
		connected++;
	}
	t1 = now();
	mem_snap(&m1);

	for (i = 0; i < connected; i++)
		for (j = 0; j < size; j++)
			A.buf[i * size + j] = pattern(i, j);
	ok = calloc(n, 1);
	if (!ok)
		return 1;
	t2 = now();
	for (i = 0; i < connected || done < i; ) {
		struct ibv_wc wc[32];
		int k, got;

		/* Keep at most cqe - 16 writes outstanding. */
		while (i < connected && i - done < A.cqe - 16) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)A.buf + i * size,
				.length = size, .lkey = A.mr->lkey,
			};
			struct ibv_send_wr wr = {
				.wr_id = i, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { .remote_addr = (uintptr_t)B.buf + i * size,
					     .rkey = B.mr->rkey },
			}, *badwr;

			if (ibv_post_send(A.qp[i], &wr, &badwr)) {
				printf("post_error=%s\n", strerror(errno));
				goto out;
			}
			i++;
		}
		got = ibv_poll_cq(A.cq, 32, wc);
		if (got < 0)
			goto out;
		for (k = 0; k < got; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				if (!errs++)
					printf("wc_error=%s\n", ibv_wc_status_str(wc[k].status));
			} else if (wc[k].wr_id < (uint64_t)n) {
				ok[wc[k].wr_id] = 1;
			}
			done++;
		}
		if (now() - t2 > 120) {
			printf("traffic_error=timeout\n");
			break;
		}
	}
out:
	t3 = now();
	mem_snap(&m2);
	/* Only writes that completed must have landed. */
	for (i = 0; i < connected; i++)
		for (j = 0; ok[i] && j < size; j++)
			if (B.buf[i * size + j] != pattern(i, j)) {
				bad++;
				break;
			}
	printf("qps=%d\ncreated=%d\nconnected=%d\ncompleted=%d\nwc_errors=%d\n"
	       "corrupt=%d\npeers=%d\naddr_pairs=%d\nsetup_s=%.3f\ntraffic_s=%.3f\n",
	       n, created, connected, done, errs, bad, ngid_b,
	       n < ngid_a * ngid_b ? n : ngid_a * ngid_b, t1 - t0, t3 - t2);
	mem_print("setup", &m0, &m1);
	mem_print("traffic", &m0, &m2);
	if (idle_s) {
		sleep(idle_s);
		mem_snap(&m3);
		mem_print("idle", &m0, &m3);
	}
	t4 = now();
	for (i = 0; i < created; i++) {
		ibv_destroy_qp(A.qp[i]);
		ibv_destroy_qp(B.qp[i]);
	}
	printf("teardown_s=%.3f\n", now() - t4);
	ibv_dereg_mr(A.mr);
	ibv_dereg_mr(B.mr);
	ibv_destroy_cq(A.cq);
	ibv_destroy_cq(B.cq);
	ibv_dealloc_pd(A.pd);
	ibv_dealloc_pd(B.pd);
	ibv_close_device(A.ctx);
	ibv_close_device(B.ctx);
	return created == n && connected == n && done == n && !errs && !bad ? 0 : 1;
}
