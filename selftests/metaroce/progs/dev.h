/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * dev.h - for the test programs: a device opened by name, its IPv4-mapped
 * GID, connecting an RC QP, and one end of a connection between two
 * devices (rc_fork, ud_stream).  Errors end the program (exit 1) with
 * "PROGRAM: WHAT: ERROR" on stderr.
 */
#ifndef MROCE_PROGS_DEV_H
#define MROCE_PROGS_DEV_H

#include <stdint.h>

#include <infiniband/verbs.h>

/* One end: a device and its objects. */
struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	int gidx;
	union ibv_gid gid;
};

void die(const char *what, int err) __attribute__((noreturn));
/* The device called name, opened. */
struct ibv_context *open_dev(const char *name);
/* The index of ctx's IPv4-mapped GID (::ffff:a.b.c.d), stored in *gid. */
int find_gid(struct ibv_context *ctx, union ibv_gid *gid);
/*
 * e opened on device name: its GID, a PD, a CQ of cq_depth and an RC QP
 * (max_wr WRs of one SGE each way, on that CQ) in INIT with access.  The
 * caller makes the buffer and MR.
 */
void rc_end_open(struct end *e, const char *name, int cq_depth,
		 uint32_t max_wr, int access);
/*
 * An RC QP in INIT to RTR then RTS, towards dest_qpn at dgid through GID
 * sgid_index, with rd_atomic RDMA READs / atomics outstanding each way;
 * retry count 7, timeout MROCE_QP_TIMEOUT from the environment or 14.
 */
void rc_connect(struct ibv_qp *qp, int sgid_index, const union ibv_gid *dgid,
		uint32_t dest_qpn, uint8_t rd_atomic);
/* The same with path MTU mtu instead of 1024 bytes. */
void rc_connect_mtu(struct ibv_qp *qp, int sgid_index,
		    const union ibv_gid *dgid, uint32_t dest_qpn,
		    uint8_t rd_atomic, enum ibv_mtu mtu);

#endif /* MROCE_PROGS_DEV_H */
