// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ud_srq_busy: destroying a shared receive queue that a UD QP uses, from
 * userspace (pyverbs always closes the QPs first, so it cannot ask).
 *
 *   ud_srq_busy DEV_A DEV_B
 *
 * On DEV_B a UD QP receives from an SRQ.  ibv_destroy_srq must fail with
 * EBUSY and leave the SRQ working: a datagram from DEV_A then lands in the
 * WQE posted before, checked byte by byte behind the 40-byte GRH.  Once
 * the QP is destroyed, ibv_destroy_srq succeeds.  Exit 0 on success.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "dev.h"

#define QKEY		0x11111111
#define GRH		40
#define LEN		777
#define SLOT		2048

/* Each end's buffer: one receive slot, or one datagram to send. */
static void open_end(struct end *e, const char *name, uint8_t *buf)
{
	e->ctx = open_dev(name);
	e->gidx = find_gid(e->ctx, &e->gid);
	e->buf = buf;
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = e->pd ? ibv_create_cq(e->ctx, 16, NULL, NULL, 0) : NULL;
	e->mr = e->cq ? ibv_reg_mr(e->pd, e->buf, SLOT,
				   IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!e->mr)
		die("PD, CQ or MR", errno);
}

static struct ibv_qp *ud_qp(struct end *e, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.srq = srq,
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = srq ? 0 : 4,
			 .max_send_sge = 1, .max_recv_sge = srq ? 0 : 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY,
	};
	struct ibv_qp *qp = ibv_create_qp(e->pd, &init);
	int err;

	if (!qp)
		die("ibv_create_qp", errno);
	if (srq && (init.cap.max_recv_wr || init.cap.max_recv_sge))
		die("caps of a QP on an SRQ not 0", EINVAL);
	err = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	attr.qp_state = IBV_QPS_RTR;
	if (!err)
		err = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	attr.qp_state = IBV_QPS_RTS;
	if (!err)
		err = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (err)
		die("UD QP to RTS", err);
	return qp;
}

static void poll_one(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	time_t end = time(NULL) + 20;
	int n;

	while (!(n = ibv_poll_cq(cq, 1, wc)))
		if (time(NULL) > end)
			die(what, ETIMEDOUT);
	if (n < 0 || wc->status != IBV_WC_SUCCESS)
		die(what, EIO);
}

int main(int argc, char **argv)
{
	static uint8_t buf_a[SLOT], buf_b[SLOT];
	static struct end a, b;
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 8,
						     .max_sge = 1 } };
	struct ibv_sge sge = { .length = SLOT };
	struct ibv_recv_wr rwr = { .wr_id = 42, .sg_list = &sge, .num_sge = 1 };
	struct ibv_send_wr swr = { .wr_id = 7, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_ah_attr ah_attr = { .is_global = 1, .port_num = 1 };
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *sbad;
	struct ibv_srq *srq;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	int i, err;

	if (argc != 3) {
		fprintf(stderr, "usage: ud_srq_busy DEV_A DEV_B\n");
		return 2;
	}
	open_end(&a, argv[1], buf_a);
	open_end(&b, argv[2], buf_b);
	srq = ibv_create_srq(b.pd, &sattr);
	if (!srq)
		die("ibv_create_srq", errno);
	b.qp = ud_qp(&b, srq);
	a.qp = ud_qp(&a, NULL);
	sge.addr = (uintptr_t)b.buf;
	sge.lkey = b.mr->lkey;
	memset(b.buf, 0xa5, SLOT);
	err = ibv_post_srq_recv(srq, &rwr, &rbad);
	if (err)
		die("ibv_post_srq_recv", err);

	err = ibv_destroy_srq(srq);
	if (err != EBUSY) {
		fprintf(stderr, "ud_srq_busy: ibv_destroy_srq of an SRQ in use: %d (%s), expected EBUSY\n",
			err, strerror(err));
		return 1;
	}

	ah_attr.grh.dgid = b.gid;
	ah_attr.grh.sgid_index = a.gidx;
	ah_attr.grh.hop_limit = 64;
	ah = ibv_create_ah(a.pd, &ah_attr);
	if (!ah)
		die("ibv_create_ah", errno);
	for (i = 0; i < LEN; i++)
		a.buf[i] = (uint8_t)(i * 7 + 3);
	sge.addr = (uintptr_t)a.buf;
	sge.length = LEN;
	sge.lkey = a.mr->lkey;
	swr.sg_list = &sge;
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = b.qp->qp_num;
	swr.wr.ud.remote_qkey = QKEY;
	err = ibv_post_send(a.qp, &swr, &sbad);
	if (err)
		die("ibv_post_send", err);
	poll_one(a.cq, &wc, "send completion");
	poll_one(b.cq, &wc, "receive after the refused destroy");
	if (wc.wr_id != 42 || wc.qp_num != b.qp->qp_num ||
	    wc.src_qp != a.qp->qp_num || wc.byte_len != GRH + LEN ||
	    !(wc.wc_flags & IBV_WC_GRH)) {
		fprintf(stderr, "ud_srq_busy: receive wr_id %llu qp_num %u src_qp %u byte_len %u wc_flags %#x\n",
			(unsigned long long)wc.wr_id, wc.qp_num, wc.src_qp,
			wc.byte_len, wc.wc_flags);
		return 1;
	}
	for (i = 0; i < LEN; i++)
		if (b.buf[GRH + i] != (uint8_t)(i * 7 + 3))
			die("payload differs", EIO);
	for (i = GRH + LEN; i < SLOT; i++)
		if (b.buf[i] != 0xa5)
			die("written past the datagram", EIO);

	if (ibv_destroy_qp(b.qp))
		die("ibv_destroy_qp", errno);
	err = ibv_destroy_srq(srq);
	if (err)
		die("ibv_destroy_srq after its QP", err);
	ibv_destroy_qp(a.qp);
	ibv_destroy_ah(ah);
	printf("ud_srq_busy: ok\n");
	return 0;
}
