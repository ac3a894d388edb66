/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * MetaRoCE kernel <-> userspace provider ABI.
 *
 * The kernel driver (drivers/infiniband/sw/metaroce) and the rdma-core
 * provider (rdma-core-provider/) both include this header.  Every struct is
 * padded to 8 bytes and uses fixed-size types only.
 */
#ifndef METAROCE_ABI_USER_H
#define METAROCE_ABI_USER_H

#include <linux/types.h>

/*
 * uverbs ABI version reported by the kernel (ib_device_ops.uverbs_abi_ver).
 * The provider accepts exactly this range.
 */
#define METAROCE_UVERBS_ABI_VERSION	1

/*
 * Every MetaRoCE ib_device carries this sysfs attribute
 * (/sys/class/infiniband/<ibdev>/metaroce_abi_version).  It holds
 * METAROCE_UVERBS_ABI_VERSION in decimal.  The provider matches devices by
 * this attribute, never by name, so users may name devices freely.
 */
#define METAROCE_SYSFS_ABI_ATTR		"metaroce_abi_version"

/*
 * Kernel driver_id.  An out-of-tree driver cannot add to enum rdma_driver_id,
 * so MetaRoCE reports RDMA_DRIVER_UNKNOWN (0); the provider must pass the
 * same value to verbs_init_and_alloc_context().
 */
#define METAROCE_DRIVER_ID		0

/* Response to ALLOC_UCONTEXT (udata out). */
struct metaroce_alloc_ucontext_resp {
	__u32 abi_version;	/* METAROCE_UVERBS_ABI_VERSION */
	__u32 reserved;
};

/* Response to CREATE_AH (udata out): the number UD WQEs name it by. */
struct metaroce_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

/*
 * Rings.  Every work queue (SQ, RQ, SRQ) and every user CQ is a ring: a
 * 256-byte header followed by a power-of-two number of fixed-size slots.
 * Indices are free-running __u32 counters; slot = index & (slots - 1).
 * Each index is written by one side only and read by the other with
 * acquire/release ordering:
 *   SQ, RQ, SRQ: producer = the poster (userspace for user QPs),
 *                consumer = the kernel;
 *   CQ:          producer = the kernel, consumer = the poller.
 * The kernel never trusts an index userspace wrote: it masks it and checks
 * producer - consumer <= slots before use.
 */
#define METAROCE_RING_HDR_SIZE		256

struct metaroce_ring_hdr {
	__u32 producer;
	__u32 pad0[15];
	__u32 consumer;
	__u32 pad1[15];
	__u32 flags;		/* METAROCE_RING_F_* */
	__u32 pad2[31];
};

/*
 * SQ: set by the kernel when its send worker goes idle; the poster then
 * rings the doorbell (a POST_SEND command with no work requests) after
 * producing, and clears nothing: the kernel clears it when it runs.
 */
#define METAROCE_RING_F_NEED_WAKEUP	(1U << 0)

struct metaroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* Send WQE: 80-byte header, then num_sge SGEs or inline_len bytes. */
struct metaroce_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;		/* enum ib_uverbs_wr_opcode */
	__u32 send_flags;	/* enum ib_uverbs_send_flags */
	__u32 num_sge;
	__u32 inline_len;	/* bytes of inline data in place of the SGEs */
	__u32 imm_data;		/* network byte order, as in ibv_send_wr */
	__u32 invalidate_rkey;
	__aligned_u64 remote_addr;
	__u32 rkey;
	__u32 ah_num;		/* UD: from the create_ah response */
	__u32 remote_qpn;	/* UD */
	__u32 remote_qkey;	/* UD */
	__aligned_u64 compare_add;
	__aligned_u64 swap;
	__u32 reserved[2];
	struct metaroce_sge sge[];
};

/* Receive WQE: 16-byte header, then num_sge SGEs. */
struct metaroce_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
	struct metaroce_sge sge[];
};

/* A user CQ's slots hold struct ib_uverbs_wc (48 bytes, as ibv_wc). */

#endif /* METAROCE_ABI_USER_H */
