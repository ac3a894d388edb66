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
#include <rdma/ib_user_verbs.h>

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
 * RQ: set by the kernel while the QP is in the error state; a poster who
 * sees it after producing rings the receive doorbell (a POST_RECV command
 * with no work requests) so that the kernel flushes what it posted.
 * The poster's order: store the producer (release), full barrier, load the
 * flags.  The kernel's: store the flags, full barrier, load the producer.
 */
#define METAROCE_RING_F_NEED_WAKEUP	(1U << 0)

/*
 * CQ: completion notification armed without a system call.  The poller
 * sets one of these with an atomic OR (a full barrier), then polls once
 * more; the kernel publishes a completion (producer, release), issues a
 * full barrier, then loads the flags: when a completion matches an armed
 * bit, the kernel atomically clears both bits and raises the completion
 * event (ibv_get_cq_event).  ARMED_NEXT matches every completion;
 * ARMED_SOLICITED matches solicited receives and unsuccessful completions.
 * The REQ_NOTIFY_CQ command sets the same bits.
 */
#define METAROCE_CQ_F_ARMED_NEXT	(1U << 0)
#define METAROCE_CQ_F_ARMED_SOLICITED	(1U << 1)

struct metaroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/*
 * What a BIND_MW WQE (opcode IB_UVERBS_WR_BIND_MW) carries in place of the
 * remote address fields: bind the memory window named by mw_rkey (type 1:
 * its current rkey; type 2: any key with its index) to [addr, addr +
 * length) of the MR named by mr_lkey, with access
 * (IB_UVERBS_ACCESS_REMOTE_{WRITE,READ,ATOMIC}, and
 * IB_UVERBS_ACCESS_ZERO_BASED for type 2: the window's addresses then start
 * at 0), giving it new_rkey: the same upper 24 bits, the lower 8 chosen by
 * the consumer.  type says which verb made the WQE: ibv_bind_mw()
 * (METAROCE_BIND_TYPE_1) or an IBV_WR_BIND_MW work request
 * (METAROCE_BIND_TYPE_2); it must match the window's type.  A type 1 bind
 * with length 0 (and mr_lkey 0) unbinds the window.  Failures complete
 * with IBV_WC_MW_BIND_ERR and move the QP to the error state.  The WQE has
 * no SGEs and no inline data.
 */
#define METAROCE_BIND_TYPE_1		1
#define METAROCE_BIND_TYPE_2		2

struct metaroce_wqe_bind {
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 mw_rkey;
	__u32 new_rkey;
	__u32 mr_lkey;
	__u32 access;
	__u32 type;		/* METAROCE_BIND_TYPE_* */
	__u32 reserved;
};

/*
 * Send WQE: 80-byte header, then num_sge SGEs or inline_len bytes.
 * LOCAL_INV (IB_UVERBS_WR_LOCAL_INV) names the key in invalidate_rkey.
 */
struct metaroce_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;		/* enum ib_uverbs_wr_opcode */
	/* IB_SEND_* = IBV_SEND_*: FENCE 1, SIGNALED 2, SOLICITED 4, INLINE 8 */
	__u32 send_flags;
	__u32 num_sge;
	__u32 inline_len;	/* bytes of inline data in place of the SGEs */
	__u32 imm_data;		/* network byte order, as in ibv_send_wr */
	__u32 invalidate_rkey;
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 ah_num;		/* UD: from the create_ah response */
			__u32 remote_qpn;	/* UD */
			__u32 remote_qkey;	/* UD */
			__aligned_u64 compare_add;
			__aligned_u64 swap;
		};
		struct metaroce_wqe_bind bind;	/* BIND_MW */
	};
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

/*
 * A user CQ's slots are METAROCE_CQE_SIZE bytes (one cache line), each
 * holding a struct ib_uverbs_wc (48 bytes) at its start; the rest is
 * padding.  Field meanings are those of struct ibv_wc: opcode and status
 * take the ibv_wc_opcode / ibv_wc_status values, wc_flags the
 * METAROCE_WC_* bits below (which are libibverbs' IBV_WC_* values, not the
 * kernel's IB_WC_* ones), ex.imm_data is in network byte order and
 * ex.invalidate_rkey in host order.
 */
#define METAROCE_CQE_SIZE		64

/*
 * The whole CQE.  A CQ created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION
 * (ibv_create_cq_ex() with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP or
 * _WALLCLOCK) also gets the time the kernel produced the completion:
 * completion_ts in CLOCK_MONOTONIC nanoseconds (the device clock: the
 * device reports hca_core_clock = 1000000 kHz and a 64-bit
 * timestamp_mask) and wallclock_ns in CLOCK_REALTIME nanoseconds.  Both
 * are 0 in the CQEs of other CQs.
 */
struct metaroce_cqe {
	struct ib_uverbs_wc wc;
	__aligned_u64 completion_ts;
	__aligned_u64 wallclock_ns;
};

/* The device clock: 1 GHz (nanoseconds), in kHz as ibv_device_attr_ex. */
#define METAROCE_CORE_CLOCK_KHZ		1000000ULL

#define METAROCE_WC_GRH			(1U << 0)
#define METAROCE_WC_WITH_IMM		(1U << 1)
#define METAROCE_WC_WITH_INV		(1U << 3)

/*
 * Where a ring is and how it is laid out.  offset is the mmap() offset on
 * the uverbs command fd; size the length to map (exactly); slots a power
 * of two.
 */
struct metaroce_ring_info {
	__aligned_u64 offset;
	__u32 size;
	__u32 slots;
	__u32 slot_size;
	__u32 reserved;
};

/*
 * Response to CREATE_CQ (and to the extended CREATE_CQ) and to RESIZE_CQ
 * (udata out) for a user CQ.  The CQ holds cqe = ring.slots completions
 * (the core response carries the same number).  After RESIZE_CQ the
 * completions still pending were moved to the new ring, which starts with
 * consumer 0 and producer = their count; the old ring must be unmapped.
 */
struct metaroce_create_cq_resp {
	struct metaroce_ring_info ring;
};

struct metaroce_resize_cq_resp {
	struct metaroce_ring_info ring;
};

/*
 * Response to CREATE_QP (udata out) for a user QP: both rings.  The SQ's
 * slots hold a struct metaroce_send_wqe followed by up to max_send_sge
 * SGEs, or by up to max_inline bytes of inline data; the RQ's hold a
 * struct metaroce_recv_wqe followed by up to max_recv_sge SGEs.  The
 * poster keeps producer - consumer <= slots.  A QP moved to RESET starts
 * over with producer = consumer = 0 in both rings.
 */
struct metaroce_create_qp_resp {
	struct metaroce_ring_info sq;
	struct metaroce_ring_info rq;
	__u32 max_inline;	/* bytes of inline data an SQ slot holds */
	__u32 reserved;
};

/*
 * Response to CREATE_SRQ (udata out) for a user SRQ: its ring, whose slots
 * hold a struct metaroce_recv_wqe followed by up to max_sge SGEs, as the
 * RQ's.  The process posts by producing into it, with no system call; the
 * kernel consumes a WQE when a message of a QP on the SRQ first needs one.
 * A QP created on an SRQ still gets an RQ ring in its create_qp response
 * (one slot, never read): the QP's receives come from the SRQ.
 */
struct metaroce_create_srq_resp {
	struct metaroce_ring_info ring;
};

#endif /* METAROCE_ABI_USER_H */
