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
 *   verbs.c      device/port queries, PDs and MRs
 * The CQ/QP/SRQ fast path will add its own files (e.g. cq.c, qp.c, srq.c)
 * and register its ops in context.c.
 */
#ifndef METAROCE_PROVIDER_H
#define METAROCE_PROVIDER_H

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

#endif /* METAROCE_PROVIDER_H */
