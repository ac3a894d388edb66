// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mcast_refused: multicast is not part of MetaRoCE v1 (MRC-DGM-012).
 *
 *   mcast_refused DEV
 *
 * ibv_attach_mcast and ibv_detach_mcast of a UD QP on DEV fail with
 * EOPNOTSUPP, and the QP still exists.  Exit 0 on success.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "dev.h"

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	union ibv_gid mgid = { .raw = { 0xff, 0x0e, [15] = 1 } };
	struct ibv_qp_attr attr;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: mcast_refused DEV\n");
		return 2;
	}
	ctx = open_dev(argv[1]);
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	if (!cq)
		die("PD or CQ", errno);
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	if (!qp)
		die("ibv_create_qp", errno);
	err = ibv_attach_mcast(qp, &mgid, 0);
	if (err != EOPNOTSUPP) {
		fprintf(stderr, "mcast_refused: ibv_attach_mcast: %s, not EOPNOTSUPP\n",
			strerror(err));
		return 1;
	}
	err = ibv_detach_mcast(qp, &mgid, 0);
	if (err != EOPNOTSUPP) {
		fprintf(stderr, "mcast_refused: ibv_detach_mcast: %s, not EOPNOTSUPP\n",
			strerror(err));
		return 1;
	}
	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init))
		die("ibv_query_qp after the refusals", errno);
	if (ibv_destroy_qp(qp) || ibv_destroy_cq(cq) || ibv_dealloc_pd(pd))
		die("destroy", errno);
	ibv_close_device(ctx);
	return 0;
}
