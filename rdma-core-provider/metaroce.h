/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * metaroce.h - internal declarations of the MetaRoCE rdma-core provider
 * (libmetaroce-rdmav34.so).  Nothing here is exported from the library.
 *
 * File layout:
 *   metaroce.c   load-time constructor: self-check, then registration
 *   abi_check.c  verifies the loaded libibverbs is rdma-core release 44
 *   device.c     device matching (sysfs attribute) and device objects
 *   context.c    user context open/close and the verbs_context_ops table
 *   verbs.c      device/port queries, PDs, MRs and address handles
 *   ring.c       mapping the kernel's rings
 *   cq.c         completion queues: mapped rings, polled without syscalls
 *   cq_ex.c      extended CQs: ibv_create_cq_ex, start/next/end_poll,
 *                read_*, completion timestamps, ibv_query_rt_values_ex
 *   wq.c         producing into SQ/RQ/SRQ rings: receive WQEs, publishing
 *                the producer index, doorbells
 *   qp.c         queue pairs: mapped SQ/RQ rings, posting
 *   qp_ex.c      extended QPs: ibv_create_qp_ex and the ibv_wr_* builders
 *   srq.c        shared receive queues: a mapped ring, posted without syscalls
 *   mw.c         memory windows: alloc/dealloc, ibv_bind_mw (type 1), the
 *                BIND_MW WQE that post_send and wr_bind_mw write too
 * The rings' layout and protocol are in <rdma/metaroce-abi.h>.
 */
#ifndef METAROCE_PROVIDER_H
#define METAROCE_PROVIDER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/metaroce-abi.h>

#include "verbs_private.h"

#define METAROCE_PROVIDER_NAME	"metaroce"

#ifndef container_of
#define container_of(ptr, type, member)					\
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

/* One per MetaRoCE ib_device claimed by match_device(). */
struct metaroce_device {
	struct verbs_device vdev;
	uint32_t uverbs_abi;	/* kernel uverbs_abi_ver (sysfs_dev->abi_ver) */
};

/* One per ibv_open_device(). */
struct metaroce_context {
	struct verbs_context vctx;
	uint32_t abi_version;	/* from metaroce_alloc_ucontext_resp */
};

/*
 * GET_CONTEXT response as the provider passes it to ibv_cmd_get_context():
 * the core uverbs response followed directly by our udata-out.
 */
struct metaroce_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct metaroce_alloc_ucontext_resp drv_payload;
};
_Static_assert(offsetof(struct metaroce_get_context_resp, drv_payload) ==
	       sizeof(struct ib_uverbs_get_context_resp),
	       "udata-out must follow the core GET_CONTEXT response directly");
_Static_assert(sizeof(struct metaroce_get_context_resp) ==
	       sizeof(struct ib_uverbs_get_context_resp) +
	       sizeof(struct metaroce_alloc_ucontext_resp),
	       "no trailing padding in the GET_CONTEXT response");
_Static_assert(sizeof(struct metaroce_alloc_ucontext_resp) % 8 == 0,
	       "MetaRoCE uAPI structs are padded to 8 bytes");

/*
 * Responses of the commands whose udata-out is a MetaRoCE struct: the core
 * uverbs response followed directly by ours.
 */
struct metaroce_create_cq_resp_full {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct metaroce_create_cq_resp drv_payload;
};
_Static_assert(offsetof(struct metaroce_create_cq_resp_full, drv_payload) ==
	       sizeof(struct ib_uverbs_create_cq_resp),
	       "udata-out must follow the core CREATE_CQ response directly");

struct metaroce_create_cq_ex_resp_full {
	struct ib_uverbs_ex_create_cq_resp ibv_resp;
	struct metaroce_create_cq_resp drv_payload;
};
_Static_assert(offsetof(struct metaroce_create_cq_ex_resp_full, drv_payload) ==
	       sizeof(struct ib_uverbs_ex_create_cq_resp),
	       "udata-out must follow the core extended CREATE_CQ response directly");

struct metaroce_resize_cq_resp_full {
	struct ib_uverbs_resize_cq_resp ibv_resp;
	struct metaroce_resize_cq_resp drv_payload;
};
_Static_assert(offsetof(struct metaroce_resize_cq_resp_full, drv_payload) ==
	       sizeof(struct ib_uverbs_resize_cq_resp),
	       "udata-out must follow the core RESIZE_CQ response directly");

struct metaroce_create_qp_resp_full {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct metaroce_create_qp_resp drv_payload;
};
_Static_assert(offsetof(struct metaroce_create_qp_resp_full, drv_payload) ==
	       sizeof(struct ib_uverbs_create_qp_resp),
	       "udata-out must follow the core CREATE_QP response directly");

struct metaroce_create_srq_resp_full {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct metaroce_create_srq_resp drv_payload;
};
_Static_assert(offsetof(struct metaroce_create_srq_resp_full, drv_payload) ==
	       sizeof(struct ib_uverbs_create_srq_resp),
	       "udata-out must follow the core CREATE_SRQ response directly");

struct metaroce_create_ah_resp_full {
	struct ib_uverbs_create_ah_resp ibv_resp;
	struct metaroce_create_ah_resp drv_payload;
};
_Static_assert(offsetof(struct metaroce_create_ah_resp_full, drv_payload) ==
	       sizeof(struct ib_uverbs_create_ah_resp),
	       "udata-out must follow the core CREATE_AH response directly");

/* The ring ABI as the provider relies on it. */
_Static_assert(sizeof(struct metaroce_ring_hdr) == METAROCE_RING_HDR_SIZE,
	       "ring header size");
_Static_assert(offsetof(struct metaroce_ring_hdr, producer) == 0 &&
	       offsetof(struct metaroce_ring_hdr, consumer) == 64 &&
	       offsetof(struct metaroce_ring_hdr, flags) == 128,
	       "ring header layout");
_Static_assert(sizeof(struct metaroce_send_wqe) == 80, "send WQE header");
_Static_assert(sizeof(struct metaroce_wqe_bind) == 40 &&
	       offsetof(struct metaroce_send_wqe, bind) == 32 &&
	       offsetof(struct metaroce_send_wqe, remote_addr) == 32 &&
	       offsetof(struct metaroce_send_wqe, swap) == 64 &&
	       offsetof(struct metaroce_send_wqe, reserved) == 72 &&
	       offsetof(struct metaroce_wqe_bind, mw_rkey) == 16 &&
	       offsetof(struct metaroce_wqe_bind, type) == 32,
	       "BIND_MW WQE layout");
/* Memory window verbs' values are the ib_uverbs ones the kernel reads. */
_Static_assert((int)IBV_WR_BIND_MW == (int)IB_UVERBS_WR_BIND_MW &&
	       (int)IBV_WR_LOCAL_INV == (int)IB_UVERBS_WR_LOCAL_INV &&
	       (int)IBV_WC_BIND_MW == (int)IB_UVERBS_WC_BIND_MW &&
	       (int)IBV_WC_LOCAL_INV == (int)IB_UVERBS_WC_LOCAL_INV &&
	       IBV_WC_MW_BIND_ERR == 6 &&
	       /* ALLOC_MW's mw_type: the kernel's IB_MW_TYPE_1, _2 */
	       IBV_MW_TYPE_1 == 1 && IBV_MW_TYPE_2 == 2 &&
	       (int)IBV_ACCESS_REMOTE_WRITE ==
	       (int)IB_UVERBS_ACCESS_REMOTE_WRITE &&
	       (int)IBV_ACCESS_REMOTE_READ == (int)IB_UVERBS_ACCESS_REMOTE_READ &&
	       (int)IBV_ACCESS_REMOTE_ATOMIC ==
	       (int)IB_UVERBS_ACCESS_REMOTE_ATOMIC &&
	       (int)IBV_ACCESS_ZERO_BASED == (int)IB_UVERBS_ACCESS_ZERO_BASED,
	       "memory window values");
_Static_assert(sizeof(struct metaroce_recv_wqe) == 16, "receive WQE header");
_Static_assert(sizeof(struct metaroce_sge) == 16, "SGE");
_Static_assert(sizeof(struct ib_uverbs_wc) == 48 &&
	       sizeof(struct metaroce_cqe) == METAROCE_CQE_SIZE &&
	       offsetof(struct metaroce_cqe, completion_ts) == 48 &&
	       offsetof(struct metaroce_cqe, wallclock_ns) == 56, "CQE");
_Static_assert(sizeof(struct metaroce_ring_info) == 24, "ring info");
_Static_assert(sizeof(struct metaroce_create_cq_resp) % 8 == 0 &&
	       sizeof(struct metaroce_resize_cq_resp) % 8 == 0 &&
	       sizeof(struct metaroce_create_qp_resp) % 8 == 0 &&
	       sizeof(struct metaroce_create_ah_resp) % 8 == 0 &&
	       sizeof(struct metaroce_create_srq_resp) % 8 == 0,
	       "MetaRoCE uAPI structs are padded to 8 bytes");
/* wc_flags in a CQE are libibverbs' values. */
_Static_assert(METAROCE_WC_GRH == IBV_WC_GRH &&
	       METAROCE_WC_WITH_IMM == IBV_WC_WITH_IMM &&
	       METAROCE_WC_WITH_INV == IBV_WC_WITH_INV, "wc_flags");
/* WQE opcodes and flags are the ib_uverbs (= libibverbs) values. */
_Static_assert((int)IBV_WR_RDMA_WRITE == (int)IB_UVERBS_WR_RDMA_WRITE &&
	       (int)IBV_WR_SEND == (int)IB_UVERBS_WR_SEND &&
	       (int)IBV_WR_SEND_WITH_IMM == (int)IB_UVERBS_WR_SEND_WITH_IMM &&
	       (int)IBV_WR_RDMA_READ == (int)IB_UVERBS_WR_RDMA_READ &&
	       (int)IBV_WR_ATOMIC_FETCH_AND_ADD ==
	       (int)IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD &&
	       (int)IBV_WR_SEND_WITH_INV == (int)IB_UVERBS_WR_SEND_WITH_INV &&
	       IBV_SEND_FENCE == 1 && IBV_SEND_SIGNALED == 2 &&
	       IBV_SEND_SOLICITED == 4 && IBV_SEND_INLINE == 8,
	       "WQE opcodes and flags");

/*
 * A ring mapped from the kernel.  idx is our own index: the producer of an
 * SQ/RQ (we post), the consumer of a CQ (we poll).
 */
struct metaroce_uring {
	struct metaroce_ring_hdr *hdr;
	size_t map_size;
	uint32_t mask;		/* slots - 1 */
	uint32_t slot_size;
	uint32_t idx;
};

static inline uint32_t metaroce_uring_slots(const struct metaroce_uring *r)
{
	return r->mask + 1;
}

static inline void *metaroce_uring_slot(const struct metaroce_uring *r,
					uint32_t index)
{
	return (char *)r->hdr + METAROCE_RING_HDR_SIZE +
	       (size_t)(index & r->mask) * r->slot_size;
}

/* ring.c */
int metaroce_uring_map(struct ibv_context *context, struct metaroce_uring *r,
		       const struct metaroce_ring_info *info,
		       uint32_t min_slot_size);
void metaroce_uring_unmap(struct metaroce_uring *r);

struct metaroce_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;	/* poll, resize */
	struct metaroce_uring ring;
	/* Extended polling (cq_ex.c), between start_poll and end_poll: */
	const struct metaroce_cqe *cur;	/* the CQE read_*() look at */
	uint32_t prod;			/* the kernel's producer, last read */
};

/* A send or receive queue. */
struct metaroce_wq {
	pthread_spinlock_t lock;	/* posters */
	struct metaroce_uring ring;
	uint32_t max_sge;
	uint32_t max_inline;		/* SQ */
};

struct metaroce_qp {
	struct verbs_qp vqp;
	struct metaroce_wq sq;
	struct metaroce_wq rq;
	/* ibv_wr_* builders (qp_ex.c), between wr_start and wr_complete: */
	struct metaroce_send_wqe *wr_cur;	/* the WQE being built */
	uint32_t wr_first;	/* SQ index at wr_start */
	int wr_err;		/* first error since wr_start, or 0 */
	bool wr_need_addr;	/* UD: wr_cur still lacks wr_set_ud_addr */
};

struct metaroce_srq {
	struct ibv_srq ibv_srq;
	struct metaroce_wq rq;
};

struct metaroce_ah {
	struct ibv_ah ibv_ah;
	uint32_t ah_num;		/* from the kernel; UD WQEs carry it */
};

static inline struct metaroce_cq *to_mcq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct metaroce_cq, vcq.cq);
}

static inline struct metaroce_cq *to_mcq_ex(struct ibv_cq_ex *ibcq)
{
	return container_of(ibcq, struct metaroce_cq, vcq.cq_ex);
}

static inline struct metaroce_qp *to_mqp_ex(struct ibv_qp_ex *ibqp)
{
	return container_of(ibqp, struct metaroce_qp, vqp.qp_ex);
}

static inline struct metaroce_qp *to_mqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct metaroce_qp, vqp.qp);
}

static inline struct metaroce_srq *to_msrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct metaroce_srq, ibv_srq);
}

static inline struct metaroce_ah *to_mah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct metaroce_ah, ibv_ah);
}

static inline struct metaroce_device *to_mdev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct metaroce_device, vdev.device);
}

static inline struct metaroce_context *to_mctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct metaroce_context, vctx.context);
}

/* Log through libibverbs (shown when VERBS_LOG_LEVEL >= level). */
#define metaroce_log(vctx, level, fmt, ...)				\
	__verbs_log((vctx), (level), METAROCE_PROVIDER_NAME ": %s: " fmt "\n", \
		    (vctx)->context.device->name, ##__VA_ARGS__)
#define metaroce_err(vctx, fmt, ...)					\
	metaroce_log(vctx, VERBS_LOG_ERR, fmt, ##__VA_ARGS__)
#define metaroce_dbg(vctx, fmt, ...)					\
	metaroce_log(vctx, VERBS_LOG_DEBUG, fmt, ##__VA_ARGS__)

/* abi_check.c: 0 if libibverbs is usable; otherwise prints and returns -1. */
int metaroce_check_libibverbs(void);

/* device.c */
bool metaroce_match_device(struct verbs_sysfs_dev *sysfs_dev);
struct verbs_device *metaroce_alloc_device(struct verbs_sysfs_dev *sysfs_dev);
void metaroce_uninit_device(struct verbs_device *vdev);

/* context.c */
struct verbs_context *metaroce_alloc_context(struct ibv_device *ibdev,
					     int cmd_fd, void *private_data);

/* verbs.c */
int metaroce_query_device_ex(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size);
int metaroce_query_port(struct ibv_context *context, uint8_t port_num,
			struct ibv_port_attr *port_attr);
struct ibv_pd *metaroce_alloc_pd(struct ibv_context *context);
int metaroce_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *metaroce_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			       uint64_t hca_va, int access);
int metaroce_dereg_mr(struct verbs_mr *vmr);
int metaroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		      void *addr, size_t length, int access);
struct ibv_ah *metaroce_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int metaroce_destroy_ah(struct ibv_ah *ah);

/* cq.c */
struct ibv_cq *metaroce_create_cq(struct ibv_context *context, int cqe,
				  struct ibv_comp_channel *channel,
				  int comp_vector);
int metaroce_destroy_cq(struct ibv_cq *cq);
int metaroce_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
int metaroce_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int metaroce_resize_cq(struct ibv_cq *cq, int cqe);
int metaroce_cq_finish_create(struct ibv_context *context,
			      struct metaroce_cq *cq, int ret,
			      const struct metaroce_create_cq_resp *resp);

/* cq_ex.c */
struct ibv_cq_ex *metaroce_create_cq_ex(struct ibv_context *context,
					struct ibv_cq_init_attr_ex *attr);
int metaroce_query_rt_values(struct ibv_context *context,
			     struct ibv_values_ex *values);

/* wq.c */
uint32_t metaroce_wq_max_sge(const struct metaroce_uring *r, size_t hdr,
			     uint32_t granted);
bool metaroce_ring_full(const struct metaroce_uring *r);
void metaroce_copy_sges(struct metaroce_sge *dst, const struct ibv_sge *src,
			size_t n);
int metaroce_wq_recv(struct metaroce_wq *wq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr);
/* Publish the producer index; ring the doorbell if the kernel asks. */
int metaroce_sq_publish(struct metaroce_qp *qp);
int metaroce_rq_publish(struct metaroce_qp *qp);
void metaroce_srq_publish(struct metaroce_srq *srq);

/* qp.c */
struct ibv_qp *metaroce_create_qp(struct ibv_pd *pd,
				  struct ibv_qp_init_attr *attr);
int metaroce_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		       int attr_mask);
int metaroce_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_qp_init_attr *init_attr);
int metaroce_destroy_qp(struct ibv_qp *qp);
int metaroce_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		       struct ibv_send_wr **bad_wr);
int metaroce_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);
/* mw.c */
struct ibv_mw *metaroce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int metaroce_dealloc_mw(struct ibv_mw *mw);
int metaroce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		     struct ibv_mw_bind *mw_bind);
int metaroce_bind_check(const struct ibv_qp *qp, const struct ibv_mw *mw,
			enum ibv_mw_type type,
			const struct ibv_mw_bind_info *info);
void metaroce_bind_wqe(struct metaroce_send_wqe *wqe, const struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *info);

/* Shared with qp_ex.c. */
#define METAROCE_SEND_FLAGS (IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
			     IBV_SEND_SOLICITED | IBV_SEND_INLINE)
int metaroce_qp_finish_create(struct ibv_context *context,
			      struct metaroce_qp *qp, int ret,
			      struct ibv_qp_cap *cap,
			      const struct metaroce_create_qp_resp *resp);
bool metaroce_can_send(const struct ibv_qp *ibqp);
bool metaroce_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode op);

/* qp_ex.c */
struct ibv_qp *metaroce_create_qp_ex(struct ibv_context *context,
				     struct ibv_qp_init_attr_ex *attr);

/* srq.c */
struct ibv_srq *metaroce_create_srq(struct ibv_pd *pd,
				    struct ibv_srq_init_attr *attr);
int metaroce_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			int attr_mask);
int metaroce_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int metaroce_destroy_srq(struct ibv_srq *srq);
int metaroce_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad_wr);

#endif /* METAROCE_PROVIDER_H */
