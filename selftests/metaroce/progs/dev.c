// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dev.c - opening a device by name, finding its IPv4-mapped GID and
 * connecting an RC QP, for the test programs (dev.h).
 */
#define _GNU_SOURCE		/* program_invocation_short_name */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dev.h"

void die(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what,
		strerror(err));
	exit(1);
}

struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		die("ibv_get_device_list", errno);
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die(name, ENODEV);
	return ctx;
}

int find_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };
	int i;

	for (i = 0; i < 64; i++) {
		if (ibv_query_gid(ctx, 1, i, gid))
			continue;
		if (!memcmp(gid->raw, v4, sizeof(v4)))
			return i;
	}
	die("no IPv4 GID", ENOENT);
}

void rc_end_open(struct end *e, const char *name, int cq_depth,
		 uint32_t max_wr, int access)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = max_wr, .max_recv_wr = max_wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = access,
	};
	int ret;

	e->ctx = open_dev(name);
	e->gidx = find_gid(e->ctx, &e->gid);
	e->pd = ibv_alloc_pd(e->ctx);
	if (!e->pd)
		die("ibv_alloc_pd", errno);
	e->cq = ibv_create_cq(e->ctx, cq_depth, NULL, NULL, 0);
	if (!e->cq)
		die("ibv_create_cq", errno);
	init.send_cq = e->cq;
	init.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &init);
	if (!e->qp)
		die("ibv_create_qp", errno);
	ret = ibv_modify_qp(e->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		die("to INIT", ret);
}

/*
 * The RC QPs' timeout: MROCE_QP_TIMEOUT from the environment (1 to 31; the
 * tests export a larger one on a slow kernel), else 14 (67 ms a try).
 */
static uint8_t qp_timeout(void)
{
	const char *s = getenv("MROCE_QP_TIMEOUT");
	int t = s ? atoi(s) : 0;

	return t >= 1 && t <= 31 ? t : 14;
}

void rc_connect(struct ibv_qp *qp, int sgid_index, const union ibv_gid *dgid,
		uint32_t dest_qpn, uint8_t rd_atomic)
{
	rc_connect_mtu(qp, sgid_index, dgid, dest_qpn, rd_atomic, IBV_MTU_1024);
}

void rc_connect_mtu(struct ibv_qp *qp, int sgid_index,
		    const union ibv_gid *dgid, uint32_t dest_qpn,
		    uint8_t rd_atomic, enum ibv_mtu mtu)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu,
		.dest_qp_num = dest_qpn,
		.max_dest_rd_atomic = rd_atomic,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = { .dgid = *dgid, .sgid_index = sgid_index,
				 .hop_limit = 64 },
		},
	};
	int ret, tries = 0;

	/*
	 * RTR resolves the peer's MAC through the IP stack: while the route
	 * is down (a link flap of the soak) that fails ENETUNREACH, or
	 * EHOSTUNREACH or ETIMEDOUT with no neighbour.  An application tries
	 * again; so do we, for up to 30 s.
	 */
	while ((ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
				    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER)) &&
	       (ret == ENETUNREACH || ret == EHOSTUNREACH || ret == ETIMEDOUT) &&
	       ++tries < 30)
		sleep(1);
	if (ret)
		die("to RTR", ret);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = qp_timeout();
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = rd_atomic;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			    IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		die("to RTS", ret);
}
