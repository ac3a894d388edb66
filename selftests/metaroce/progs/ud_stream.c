// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ud_stream: a sustained stream of UD sends from one MetaRoCE device to
 * another, one work request per ibv_post_send() call, as fast as the send
 * queue takes them.  Both devices are used from this one process.
 *
 *   ud_stream [-n COUNT] [-s SIZE] [-c SIGNAL_EVERY] [-k] DEV_A DEV_B
 *   ud_stream -E DEV_A DEV_B
 *
 * -n 0 sends forever.  -k also creates extra objects (QPs of both types,
 * CQs, MRs) and prints "ready" once the stream runs: for the SIGKILL test.
 * Prints "sent N completions C received R" and exits 0 when every
 * signalled send completed successfully.
 *
 * -E checks completion events on a receive CQ armed both ways: with the
 * REQ_NOTIFY_CQ command (libibverbs' generic way, written raw here) and
 * with ibv_req_notify_cq() (the provider arms through the CQ ring).
 * Built with dev.c (build_prog in lib.sh).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "dev.h"

#define QKEY		0x11111111
#define SQ_DEPTH	256
#define RQ_DEPTH	512
#define CQ_DEPTH	1024
#define GRH		40

static struct ibv_qp *make_qp(struct end *e, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr init = {
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.qp_type = type,
		.cap = {
			.max_send_wr = SQ_DEPTH,
			.max_recv_wr = RQ_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = 64,
		},
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = QKEY,
	};
	struct ibv_qp *qp = ibv_create_qp(e->pd, &init);
	int err;

	if (!qp)
		die("ibv_create_qp", errno);
	if (type == IBV_QPT_RC) {
		attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		err = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
		if (err)
			die("RC QP to INIT", err);
		return qp;
	}
	err = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	if (!err) {
		attr.qp_state = IBV_QPS_RTR;
		err = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	}
	if (!err) {
		attr.qp_state = IBV_QPS_RTS;
		attr.sq_psn = 0;
		err = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	if (err)
		die("UD QP to RTS", err);
	return qp;
}

static void setup(struct end *e, const char *name, size_t len,
		  struct ibv_comp_channel **ch)
{
	e->ctx = open_dev(name);
	e->gidx = find_gid(e->ctx, &e->gid);
	e->pd = ibv_alloc_pd(e->ctx);
	if (!e->pd)
		die("ibv_alloc_pd", errno);
	if (ch) {
		*ch = ibv_create_comp_channel(e->ctx);
		if (!*ch)
			die("ibv_create_comp_channel", errno);
	}
	e->cq = ibv_create_cq(e->ctx, CQ_DEPTH, NULL, ch ? *ch : NULL, 0);
	if (!e->cq)
		die("ibv_create_cq", errno);
	e->buf = calloc(1, len);
	if (!e->buf)
		die("calloc", ENOMEM);
	e->mr = ibv_reg_mr(e->pd, e->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!e->mr)
		die("ibv_reg_mr", errno);
	e->qp = make_qp(e, IBV_QPT_UD);
}

static void post_recv(struct end *b, uint64_t id, uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)b->buf + (size_t)(id % RQ_DEPTH) * slot,
		.length = slot,
		.lkey = b->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int err = ibv_post_recv(b->qp, &wr, &bad);

	if (err)
		die("ibv_post_recv", err);
}

/* Extra objects that a killed process leaves for the kernel to clean. */
static void extras(struct end *e)
{
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	void *p;
	int i;

	for (i = 0; i < 4; i++) {
		p = calloc(1, 1 << 16);
		mr = p ? ibv_reg_mr(e->pd, p, 1 << 16, IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE) : NULL;
		if (!mr)
			die("extra MR", errno);
		cq = ibv_create_cq(e->ctx, 64, NULL, NULL, 0);
		if (!cq)
			die("extra CQ", errno);
	}
	for (i = 0; i < 2; i++) {
		make_qp(e, IBV_QPT_UD);
		make_qp(e, IBV_QPT_RC);
	}
}

/* The REQ_NOTIFY_CQ command, as libibverbs' ibv_cmd_req_notify_cq(). */
static int arm_by_command(struct ibv_cq *cq)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_req_notify_cq req;
	} cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_REQ_NOTIFY_CQ,
			.in_words = sizeof(cmd) / 4,
		},
		.req = { .cq_handle = cq->handle },
	};

	return write(cq->context->cmd_fd, &cmd, sizeof(cmd)) == sizeof(cmd) ?
	       0 : errno;
}

/* One send from a to b; is the completion event there within 10 s? */
static int event_after_send(struct end *a, struct end *b, struct ibv_ah *ah,
			    struct ibv_comp_channel *ch)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->buf, .length = 8, .lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	struct ibv_wc wc;
	void *cq_ctx;
	int n;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = b->qp->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	if (ibv_post_send(a->qp, &wr, &bad))
		return 0;
	if (poll(&pfd, 1, 10000) != 1 || ibv_get_cq_event(ch, &cq, &cq_ctx))
		return 0;
	ibv_ack_cq_events(cq, 1);
	for (n = 0; n < 1000 && ibv_poll_cq(b->cq, 1, &wc) == 0; n++)
		usleep(1000);
	while (ibv_poll_cq(a->cq, 1, &wc) == 0)
		;
	return cq == b->cq;
}

static int events(struct end *a, struct end *b, struct ibv_ah *ah,
		  struct ibv_comp_channel *ch)
{
	int err = arm_by_command(b->cq);

	if (err)
		die("REQ_NOTIFY_CQ", err);
	if (!event_after_send(a, b, ah, ch)) {
		fprintf(stderr, "ud_stream: no event, CQ armed by command\n");
		return 1;
	}
	if (ibv_req_notify_cq(b->cq, 0))
		die("ibv_req_notify_cq", EINVAL);
	if (!event_after_send(a, b, ah, ch)) {
		fprintf(stderr, "ud_stream: no event, CQ armed by the provider\n");
		return 1;
	}
	printf("events ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t count = 20000, sent = 0, done = 0, recvd = 0, posted = 0;
	uint32_t size = 256, every = 16, slot;
	struct ibv_ah_attr ah_attr = {};
	struct ibv_wc wc[32];
	struct end a = {}, b = {};
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_ah *ah;
	struct ibv_comp_channel *ch = NULL;
	int kill_mode = 0, ev_mode = 0, ready = 0, opt, n, i, err;
	time_t deadline;

	while ((opt = getopt(argc, argv, "n:s:c:kE")) != -1) {
		switch (opt) {
		case 'n':
			count = strtoull(optarg, NULL, 0);
			break;
		case 's':
			size = strtoul(optarg, NULL, 0);
			break;
		case 'c':
			every = strtoul(optarg, NULL, 0);
			break;
		case 'k':
			kill_mode = 1;
			break;
		case 'E':
			ev_mode = 1;
			break;
		default:
			return 2;
		}
	}
	if (argc - optind != 2 || !every || size > 1024) {
		fprintf(stderr, "usage: ud_stream [-n N] [-s SIZE] [-c SIGNAL_EVERY] [-k] [-E] DEV_A DEV_B\n");
		return 2;
	}
	slot = size + GRH;
	setup(&a, argv[optind], 1 << 16, NULL);
	setup(&b, argv[optind + 1], (size_t)RQ_DEPTH * slot,
	      ev_mode ? &ch : NULL);
	if (kill_mode) {
		extras(&a);
		extras(&b);
	}

	ah_attr.is_global = 1;
	ah_attr.port_num = 1;
	ah_attr.grh.dgid = b.gid;
	ah_attr.grh.sgid_index = a.gidx;
	ah_attr.grh.hop_limit = 64;
	ah = ibv_create_ah(a.pd, &ah_attr);
	if (!ah)
		die("ibv_create_ah", errno);

	for (posted = 0; posted < RQ_DEPTH; posted++)
		post_recv(&b, posted, slot);
	if (ev_mode)
		return events(&a, &b, ah, ch);

	memset(a.buf, 0x5a, size);
	sge.addr = (uintptr_t)a.buf;
	sge.length = size;
	sge.lkey = a.mr->lkey;
	while (!count || sent < count) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = sent;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		if (sent % every == every - 1 || sent + 1 == count)
			wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = b.qp->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
		err = ibv_post_send(a.qp, &wr, &bad);
		if (!err)
			sent++;
		else if (err != ENOMEM)
			die("ibv_post_send", err);

		n = ibv_poll_cq(a.cq, 32, wc);
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "ud_stream: send %llu: %s\n",
					(unsigned long long)wc[i].wr_id,
					ibv_wc_status_str(wc[i].status));
				return 1;
			}
			done++;
		}
		n = ibv_poll_cq(b.cq, 32, wc);
		for (i = 0; i < n; i++) {
			if (wc[i].status == IBV_WC_SUCCESS)
				recvd++;
			post_recv(&b, posted++, slot);
		}
		if (kill_mode && !ready && sent >= 1000) {
			printf("ready\n");
			fflush(stdout);
			ready = 1;
		}
	}

	/* Every signalled send completes: one per every, and the last. */
	deadline = time(NULL) + 60;
	while (done < (count + every - 1) / every) {
		n = ibv_poll_cq(a.cq, 32, wc);
		if (n < 0 || time(NULL) > deadline)
			die("waiting for send completions", ETIMEDOUT);
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				return 1;
			done++;
		}
	}
	printf("sent %llu completions %llu received %llu\n",
	       (unsigned long long)sent, (unsigned long long)done,
	       (unsigned long long)recvd);
	return 0;
}
