/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * verbs_private.h - the part of libibverbs' *private* provider ABI that the
 * MetaRoCE provider uses.
 *
 * Debian ships no rdma-core provider headers (libibverbs/driver.h,
 * kern-abi.h), so this header declares, from the documented facts, exactly
 * the subset we rely on.  It targets rdma-core release 44 (Debian 12:
 * libibverbs1 44.0-2, library file libibverbs.so.1.14.44.0), whose private
 * symbols carry the ELF version IBVERBS_PRIVATE_34.
 *
 * The private ABI is NOT stable across rdma-core releases even while the
 * IBVERBS_PRIVATE_34 tag stays the same (34 was used from v34 to v56), so:
 *   - every size and offset below is pinned with _Static_assert, and
 *   - the provider refuses at load time to register with any libibverbs
 *     file that is not release 44 (see abi_check.c).
 *
 * Public types (struct ibv_*, struct verbs_context) come from
 * <infiniband/verbs.h>; kernel uAPI structs (struct ib_uverbs_*) come from
 * <rdma/ib_user_verbs.h>.
 *
 * This is the only file that may declare private libibverbs interfaces.
 * When later code starts calling another private function, add its
 * prototype here AND add it to METAROCE_PRIVATE_SYMBOLS below; the Makefile
 * fails the build if the library imports an IBVERBS_PRIVATE_34 symbol that
 * is not in that list.
 */
#ifndef METAROCE_VERBS_PRIVATE_H
#define METAROCE_VERBS_PRIVATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

/* Private ABI generation and the matching rdma-core release. */
#define METAROCE_IBVERBS_PABI		34
#define METAROCE_IBVERBS_PABI_TAG	"IBVERBS_PRIVATE_34"
/* File name prefix of the only libibverbs we accept (release 44). */
#define METAROCE_IBVERBS_FILE_PREFIX	"libibverbs.so.1.14.44."

/*
 * Every IBVERBS_PRIVATE_34 symbol the provider imports.  abi_check.c looks
 * each one up with dlvsym() before registering, and the Makefile checks the
 * built library's imports against this list.  Keep one entry per line, in
 * the form X(name).
 */
#define METAROCE_PRIVATE_SYMBOLS(X)		\
	X(verbs_register_driver_34)		\
	X(_verbs_init_and_alloc_context)	\
	X(verbs_set_ops)			\
	X(verbs_uninit_context)			\
	X(__verbs_log)				\
	X(ibv_read_ibdev_sysfs_file)		\
	X(ibv_cmd_get_context)			\
	X(ibv_cmd_query_device_any)		\
	X(ibv_cmd_query_port)			\
	X(ibv_cmd_alloc_pd)			\
	X(ibv_cmd_dealloc_pd)			\
	X(ibv_cmd_reg_mr)			\
	X(ibv_cmd_dereg_mr)			\
	X(ibv_cmd_create_cq)			\
	X(ibv_cmd_resize_cq)			\
	X(ibv_cmd_destroy_cq)			\
	X(ibv_cmd_create_qp)			\
	X(ibv_cmd_modify_qp)			\
	X(ibv_cmd_query_qp)			\
	X(ibv_cmd_destroy_qp)			\
	X(ibv_cmd_create_ah)			\
	X(ibv_cmd_destroy_ah)			\
	X(ibv_cmd_create_srq)			\
	X(ibv_cmd_modify_srq)			\
	X(ibv_cmd_query_srq)			\
	X(ibv_cmd_destroy_srq)			\
	X(ibv_cmd_create_cq_ex)			\
	X(ibv_cmd_create_qp_ex)			\
	X(ibv_cmd_rereg_mr)			\
	X(ibv_cmd_alloc_mw)			\
	X(ibv_cmd_dealloc_mw)

/* ------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------ */

#define VP_OFFSET_IS(type, member, off)					\
	_Static_assert(offsetof(type, member) == (off),			\
		       "rdma-core 44 ABI: offsetof(" #type ", " #member	\
		       ") != " #off)
#define VP_SIZE_IS(type, size)						\
	_Static_assert(sizeof(type) == (size),				\
		       "rdma-core 44 ABI: sizeof(" #type ") != " #size)

/* Doubly linked list link as used by libibverbs' internal lists (ccan). */
struct verbs_list_link {
	struct verbs_list_link *next;
	struct verbs_list_link *prev;
};

/* ------------------------------------------------------------------------
 * Device discovery and matching
 * ------------------------------------------------------------------------ */

/* verbs_match_ent.kind */
enum {
	VERBS_MATCH_SENTINEL	= 0,	/* terminates a match table */
	VERBS_MATCH_PCI		= 1,
	VERBS_MATCH_MODALIAS	= 2,
	VERBS_MATCH_DRIVER_ID	= 3,
};

/* One entry of a provider's optional match table. */
struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;	/* PCI / MODALIAS kinds: fnmatch pattern */
		uint64_t driver_id;	/* DRIVER_ID kind */
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/*
 * What libibverbs learned about one uverbs device from sysfs/netlink.  It is
 * handed to match_device() and alloc_device() and stays owned by libibverbs.
 */
struct verbs_sysfs_dev {
	struct verbs_list_link entry;
	void *provider_data;			/* free for the provider */
	const struct verbs_match_ent *match;	/* table entry that matched */
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];	/* uverbsN */
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];	/* e.g. "mr0" */
	char ibdev_path[IBV_SYSFS_PATH_MAX];	/* /sys/class/infiniband/<ibdev> */
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;			/* enum rdma_driver_id */
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;			/* kernel uverbs_abi_ver */
	struct timespec time_created;
};

struct verbs_device;
struct verbs_context;

/* The provider's registration record (one per provider library). */
struct verbs_device_ops {
	const char *name;

	/* Accepted range of the kernel's uverbs_abi_ver (sysfs_dev->abi_ver). */
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;	/* may be NULL */
	const struct verbs_device_ops **static_providers;

	/* If set, always called; its result decides whether we claim. */
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);

	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);

	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/*
 * libibverbs' view of a device.  The provider allocates it (embedded in its
 * own struct) in alloc_device(); libibverbs fills everything in it.
 */
struct verbs_device {
	struct ibv_device device;		/* must stay the first member */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct verbs_list_link entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* ------------------------------------------------------------------------
 * Provider operations (copied slot by slot by verbs_set_ops()).
 *
 * The slot order is alphabetical and is part of the ABI: inserting or
 * removing a slot shifts every later one.  All 76 slots are declared and
 * every offset is pinned below.
 * ------------------------------------------------------------------------ */

struct verbs_mr;

struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
					      struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
						struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(struct ibv_context *context,
							  struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(struct ibv_context *context,
							  struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *init_attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp,
				      enum ibv_wr_opcode op, uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* ------------------------------------------------------------------------
 * Object wrappers.  libibverbs reaches the extra fields with container_of,
 * so objects handed to it must always be allocated inside these.
 * ------------------------------------------------------------------------ */

/* verbs_mr.mr_type */
enum ibv_mr_type {
	IBV_MR_TYPE_MR		= 0,
	IBV_MR_TYPE_NULL_MR	= 1,
	IBV_MR_TYPE_IMPORTED_MR	= 2,
	IBV_MR_TYPE_DMABUF_MR	= 3,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;	/* set by ibv_cmd_reg_mr() */
	int access;			/* set by ibv_cmd_reg_mr() */
};

struct verbs_xrcd;	/* only ever used through pointers */

/* verbs_qp.comp_mask */
enum {
	VERBS_QP_XRCD	= 1 << 0,
	VERBS_QP_EX	= 1 << 1,	/* qp_ex is valid: ibv_qp_to_qp_ex() works */
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;	/* qp_ex.qp_base aliases qp */
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/* ------------------------------------------------------------------------
 * Command wrappers.
 *
 * libibverbs' ibv_cmd_*() helpers take "wrapper" buffers laid out as
 *	[uverbs header][core uAPI request][provider request (udata in)]
 * and responses laid out as
 *	[core uAPI response][provider response (udata out)].
 * The core part sizes are compiled into libibverbs; whatever follows them
 * (cmd_size / resp_size beyond the core part) is passed to the kernel
 * driver as udata.  A provider payload must therefore start exactly at
 * sizeof(wrapper) / sizeof(core response) - no padding in between.
 *
 * The uAPI structs end in flexible "driver_data" arrays; embedding them as
 * the core_payload member relies on the GNU C extension that the kernel and
 * rdma-core use as well.
 * ------------------------------------------------------------------------ */

/* Header of the extended (ex) write() commands. */
struct verbs_ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

#define VP_WRITE_CMD(name, kabi)					\
	struct name {							\
		struct ib_uverbs_cmd_hdr hdr;				\
		struct kabi core_payload;				\
	}
#define VP_WRITE_CMD_EX(name, kabi)					\
	struct name {							\
		struct verbs_ex_hdr hdr;				\
		struct kabi core_payload;				\
	}

/* Used now. */
VP_WRITE_CMD(ibv_get_context, ib_uverbs_get_context);
VP_WRITE_CMD(ibv_query_port, ib_uverbs_query_port);
VP_WRITE_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
VP_WRITE_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
VP_WRITE_CMD(ibv_rereg_mr, ib_uverbs_rereg_mr);
VP_WRITE_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);

/* The CQ/QP path. */
VP_WRITE_CMD(ibv_create_cq, ib_uverbs_create_cq);
VP_WRITE_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
VP_WRITE_CMD(ibv_create_qp, ib_uverbs_create_qp);
VP_WRITE_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
VP_WRITE_CMD(ibv_query_qp, ib_uverbs_query_qp);
/*
 * The doorbells: written to the command fd by the provider itself (legacy
 * write() ABI: header, then the core request; the kernel reads the response
 * pointer from the request).
 */
VP_WRITE_CMD(ibv_post_send, ib_uverbs_post_send);
VP_WRITE_CMD(ibv_post_recv, ib_uverbs_post_recv);

/* SRQs (srq.c). */
VP_WRITE_CMD(ibv_create_srq, ib_uverbs_create_srq);
VP_WRITE_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
VP_WRITE_CMD(ibv_query_srq, ib_uverbs_query_srq);

/* Not called yet (extended CQ/QP, XRC); sizes pinned already. */
VP_WRITE_CMD_EX(ibv_create_cq_ex, ib_uverbs_ex_create_cq);
VP_WRITE_CMD_EX(ibv_create_qp_ex, ib_uverbs_ex_create_qp);
VP_WRITE_CMD(ibv_create_xsrq, ib_uverbs_create_xsrq);

/* ------------------------------------------------------------------------
 * Exported IBVERBS_PRIVATE_34 functions we call.
 * ------------------------------------------------------------------------ */

/* Log levels of __verbs_log(); the user selects one with VERBS_LOG_LEVEL. */
enum {
	VERBS_LOG_LEVEL_NONE	= 0,
	VERBS_LOG_ERR		= 1,
	VERBS_LOG_WARN		= 2,
	VERBS_LOG_INFO		= 3,
	VERBS_LOG_DEBUG		= 4,
};

void verbs_register_driver_34(const struct verbs_device_ops *ops);

/*
 * calloc()s alloc_size bytes, initialises the verbs_context found
 * context_offset bytes into it (passed as a fake pointer) and returns the
 * allocation.  Takes ownership of cmd_fd: closes it on failure.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);

/* Typed front end: ptr is a pointer variable of the provider context type. */
#define verbs_init_and_alloc_context(ibdev, cmd_fd, ptr, member, driver_id)	\
	((__typeof__(ptr))_verbs_init_and_alloc_context(			\
		(ibdev), (cmd_fd), sizeof(*(ptr)),				\
		&((__typeof__(ptr))NULL)->member, (driver_id)))

void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);
/* Releases what verbs_init_and_alloc_context() set up; closes cmd_fd. */
void verbs_uninit_context(struct verbs_context *vctx);

void __verbs_log(struct verbs_context *vctx, uint32_t level,
		 const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Reads <sysfs_dev->ibdev_path>/<fnfmt...>; strips one trailing newline.
 * Returns the length read, or -1. */
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The helpers below return 0 or a positive errno value. */
int ibv_cmd_get_context(struct verbs_context *vctx,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);

/*
 * CQ, QP and AH commands.  cmd / resp are the wrapper buffers described
 * above; what follows the core part is our udata.  ibv_cmd_create_cq()
 * fills cq (handle, cqe, context); ibv_cmd_create_qp() fills qp and writes
 * the granted capabilities back to attr->cap; ibv_cmd_resize_cq() updates
 * cq->cqe; ibv_cmd_create_ah() fills ah->handle and ah->context.
 */
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe,
		      struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr,
		      struct ibv_create_qp *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

/*
 * SRQ commands.  ibv_cmd_create_srq() fills srq->handle and writes the
 * granted max_wr / max_sge back to attr->attr.
 */
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp, size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);

/*
 * Extended CQ and QP creation.  ibv_cmd_create_cq_ex() turns the timestamp
 * wc_flags into IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION for the kernel and
 * fills cq->cq (handle, cqe, context); cmd_flags is a mask of the enum
 * below.  ibv_cmd_create_qp_ex() sends the legacy CREATE_QP command (so
 * the udata is laid out as for ibv_cmd_create_qp()), accepts only the
 * PD, XRCD and SEND_OPS_FLAGS comp_mask bits, fills qp->qp and writes the
 * granted capabilities back to attr_ex->cap.
 */
enum {
	CREATE_CQ_CMD_FLAGS_TS_IGNORED_EX = 1 << 0,
};
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);

/*
 * REREG_MR: flags are IBV_REREG_MR_CHANGE_*; on success the kernel's new
 * lkey/rkey are stored in vmr->ibv_mr (ibv_rereg_mr() itself updates
 * pd, addr and length).
 */
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);

/*
 * Memory windows (mw.c).  ibv_cmd_alloc_mw() fills mw (context, pd, rkey,
 * handle, type); ibv_cmd_dealloc_mw() destroys the kernel object only.
 */
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size,
		     struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);

/* ------------------------------------------------------------------------
 * Layout pins
 * ------------------------------------------------------------------------ */

/* Architecture independent. */
VP_OFFSET_IS(struct verbs_device, device, 0);
VP_OFFSET_IS(struct verbs_mr, ibv_mr, 0);
VP_OFFSET_IS(struct verbs_qp, qp, 0);
VP_OFFSET_IS(struct verbs_qp, qp_ex, 0);
VP_OFFSET_IS(struct ibv_qp_ex, qp_base, 0);
VP_OFFSET_IS(struct verbs_cq, cq, 0);
VP_OFFSET_IS(struct verbs_cq, cq_ex, 0);
VP_OFFSET_IS(struct verbs_srq, srq, 0);
VP_SIZE_IS(struct verbs_ex_hdr, 24);
VP_SIZE_IS(struct ib_uverbs_cmd_hdr, 8);

/* Wrapper sizes: header + core request, nothing else. */
VP_SIZE_IS(struct ibv_get_context, 16);
VP_SIZE_IS(struct ibv_alloc_pd, 16);
VP_SIZE_IS(struct ibv_reg_mr, 48);
VP_SIZE_IS(struct ibv_rereg_mr, 56);
VP_SIZE_IS(struct ibv_alloc_mw, 24);
VP_OFFSET_IS(struct ibv_alloc_mw, core_payload, 8);
VP_SIZE_IS(struct ibv_query_port, 24);
VP_SIZE_IS(struct ibv_create_cq, 40);
VP_SIZE_IS(struct ibv_create_cq_ex, 56);
VP_SIZE_IS(struct ibv_create_qp, 64);
VP_SIZE_IS(struct ibv_create_qp_ex, 88);
VP_SIZE_IS(struct ibv_create_srq, 40);
VP_SIZE_IS(struct ibv_create_xsrq, 56);
VP_SIZE_IS(struct ibv_modify_srq, 24);
VP_SIZE_IS(struct ibv_resize_cq, 24);
VP_SIZE_IS(struct ibv_modify_qp, 120);
VP_SIZE_IS(struct ibv_query_qp, 24);
VP_SIZE_IS(struct ibv_query_srq, 24);
VP_SIZE_IS(struct ibv_post_send, 32);
VP_SIZE_IS(struct ibv_post_recv, 32);
VP_OFFSET_IS(struct ibv_post_send, core_payload, 8);
VP_OFFSET_IS(struct ibv_post_recv, core_payload, 8);
VP_OFFSET_IS(struct ibv_get_context, core_payload, 8);
VP_OFFSET_IS(struct ibv_reg_mr, core_payload, 8);
VP_OFFSET_IS(struct ibv_create_cq_ex, core_payload, 24);
VP_OFFSET_IS(struct ibv_create_qp_ex, core_payload, 24);

/* Core response sizes: the provider's udata-out starts right after these. */
VP_SIZE_IS(struct ib_uverbs_get_context_resp, 8);
VP_SIZE_IS(struct ib_uverbs_alloc_pd_resp, 4);
VP_SIZE_IS(struct ib_uverbs_reg_mr_resp, 12);
VP_SIZE_IS(struct ib_uverbs_alloc_mw_resp, 8);
VP_SIZE_IS(struct ib_uverbs_create_cq_resp, 8);
VP_SIZE_IS(struct ib_uverbs_ex_create_cq_resp, 16);
VP_SIZE_IS(struct ib_uverbs_create_qp_resp, 32);
VP_SIZE_IS(struct ib_uverbs_ex_create_qp_resp, 40);
VP_SIZE_IS(struct ib_uverbs_create_srq_resp, 16);
VP_SIZE_IS(struct ib_uverbs_resize_cq_resp, 8);
VP_SIZE_IS(struct ib_uverbs_create_ah_resp, 4);
VP_SIZE_IS(struct ib_uverbs_post_send_resp, 4);
VP_SIZE_IS(struct ib_uverbs_post_recv_resp, 4);
/* Smallest wqe_size the kernel accepts in POST_SEND / POST_RECV. */
VP_SIZE_IS(struct ib_uverbs_send_wr, 56);
VP_SIZE_IS(struct ib_uverbs_recv_wr, 16);

#if defined(__x86_64__)

/* Public types embedded in private ones (verbs.h of release 44). */
VP_SIZE_IS(struct ibv_device, 664);
VP_SIZE_IS(struct ibv_mr, 48);
VP_SIZE_IS(struct ibv_srq, 128);
VP_SIZE_IS(struct ibv_qp_ex, 352);
VP_SIZE_IS(struct ibv_cq_ex, 288);
VP_SIZE_IS(struct verbs_context, 648);
VP_OFFSET_IS(struct verbs_context, context, 320);

VP_SIZE_IS(struct verbs_list_link, 16);

VP_SIZE_IS(struct verbs_device_ops, 72);
VP_OFFSET_IS(struct verbs_device_ops, name, 0);
VP_OFFSET_IS(struct verbs_device_ops, match_min_abi_version, 8);
VP_OFFSET_IS(struct verbs_device_ops, match_max_abi_version, 12);
VP_OFFSET_IS(struct verbs_device_ops, match_table, 16);
VP_OFFSET_IS(struct verbs_device_ops, static_providers, 24);
VP_OFFSET_IS(struct verbs_device_ops, match_device, 32);
VP_OFFSET_IS(struct verbs_device_ops, alloc_context, 40);
VP_OFFSET_IS(struct verbs_device_ops, import_context, 48);
VP_OFFSET_IS(struct verbs_device_ops, alloc_device, 56);
VP_OFFSET_IS(struct verbs_device_ops, uninit_device, 64);

VP_SIZE_IS(struct verbs_device, 712);
VP_OFFSET_IS(struct verbs_device, ops, 664);
VP_OFFSET_IS(struct verbs_device, refcount, 672);
VP_OFFSET_IS(struct verbs_device, entry, 680);
VP_OFFSET_IS(struct verbs_device, sysfs, 696);
VP_OFFSET_IS(struct verbs_device, core_support, 704);

VP_SIZE_IS(struct verbs_match_ent, 24);
VP_OFFSET_IS(struct verbs_match_ent, driver_data, 0);
VP_OFFSET_IS(struct verbs_match_ent, u.modalias, 8);
VP_OFFSET_IS(struct verbs_match_ent, u.driver_id, 8);
VP_OFFSET_IS(struct verbs_match_ent, vendor, 16);
VP_OFFSET_IS(struct verbs_match_ent, device, 18);
VP_OFFSET_IS(struct verbs_match_ent, kind, 20);

VP_SIZE_IS(struct verbs_sysfs_dev, 992);
VP_OFFSET_IS(struct verbs_sysfs_dev, entry, 0);
VP_OFFSET_IS(struct verbs_sysfs_dev, provider_data, 16);
VP_OFFSET_IS(struct verbs_sysfs_dev, match, 24);
VP_OFFSET_IS(struct verbs_sysfs_dev, flags, 32);
VP_OFFSET_IS(struct verbs_sysfs_dev, sysfs_name, 36);
VP_OFFSET_IS(struct verbs_sysfs_dev, sysfs_cdev, 104);
VP_OFFSET_IS(struct verbs_sysfs_dev, ibdev_name, 112);
VP_OFFSET_IS(struct verbs_sysfs_dev, ibdev_path, 176);
VP_OFFSET_IS(struct verbs_sysfs_dev, modalias, 432);
VP_OFFSET_IS(struct verbs_sysfs_dev, node_guid, 944);
VP_OFFSET_IS(struct verbs_sysfs_dev, driver_id, 952);
VP_OFFSET_IS(struct verbs_sysfs_dev, node_type, 956);
VP_OFFSET_IS(struct verbs_sysfs_dev, ibdev_idx, 960);
VP_OFFSET_IS(struct verbs_sysfs_dev, num_ports, 964);
VP_OFFSET_IS(struct verbs_sysfs_dev, abi_ver, 968);
VP_OFFSET_IS(struct verbs_sysfs_dev, time_created, 976);

VP_SIZE_IS(struct verbs_context_ops, 608);
VP_OFFSET_IS(struct verbs_context_ops, advise_mr, 0);
VP_OFFSET_IS(struct verbs_context_ops, alloc_dm, 8);
VP_OFFSET_IS(struct verbs_context_ops, alloc_mw, 16);
VP_OFFSET_IS(struct verbs_context_ops, alloc_null_mr, 24);
VP_OFFSET_IS(struct verbs_context_ops, alloc_parent_domain, 32);
VP_OFFSET_IS(struct verbs_context_ops, alloc_pd, 40);
VP_OFFSET_IS(struct verbs_context_ops, alloc_td, 48);
VP_OFFSET_IS(struct verbs_context_ops, async_event, 56);
VP_OFFSET_IS(struct verbs_context_ops, attach_counters_point_flow, 64);
VP_OFFSET_IS(struct verbs_context_ops, attach_mcast, 72);
VP_OFFSET_IS(struct verbs_context_ops, bind_mw, 80);
VP_OFFSET_IS(struct verbs_context_ops, close_xrcd, 88);
VP_OFFSET_IS(struct verbs_context_ops, cq_event, 96);
VP_OFFSET_IS(struct verbs_context_ops, create_ah, 104);
VP_OFFSET_IS(struct verbs_context_ops, create_counters, 112);
VP_OFFSET_IS(struct verbs_context_ops, create_cq, 120);
VP_OFFSET_IS(struct verbs_context_ops, create_cq_ex, 128);
VP_OFFSET_IS(struct verbs_context_ops, create_flow, 136);
VP_OFFSET_IS(struct verbs_context_ops, create_flow_action_esp, 144);
VP_OFFSET_IS(struct verbs_context_ops, create_qp, 152);
VP_OFFSET_IS(struct verbs_context_ops, create_qp_ex, 160);
VP_OFFSET_IS(struct verbs_context_ops, create_rwq_ind_table, 168);
VP_OFFSET_IS(struct verbs_context_ops, create_srq, 176);
VP_OFFSET_IS(struct verbs_context_ops, create_srq_ex, 184);
VP_OFFSET_IS(struct verbs_context_ops, create_wq, 192);
VP_OFFSET_IS(struct verbs_context_ops, dealloc_mw, 200);
VP_OFFSET_IS(struct verbs_context_ops, dealloc_pd, 208);
VP_OFFSET_IS(struct verbs_context_ops, dealloc_td, 216);
VP_OFFSET_IS(struct verbs_context_ops, dereg_mr, 224);
VP_OFFSET_IS(struct verbs_context_ops, destroy_ah, 232);
VP_OFFSET_IS(struct verbs_context_ops, destroy_counters, 240);
VP_OFFSET_IS(struct verbs_context_ops, destroy_cq, 248);
VP_OFFSET_IS(struct verbs_context_ops, destroy_flow, 256);
VP_OFFSET_IS(struct verbs_context_ops, destroy_flow_action, 264);
VP_OFFSET_IS(struct verbs_context_ops, destroy_qp, 272);
VP_OFFSET_IS(struct verbs_context_ops, destroy_rwq_ind_table, 280);
VP_OFFSET_IS(struct verbs_context_ops, destroy_srq, 288);
VP_OFFSET_IS(struct verbs_context_ops, destroy_wq, 296);
VP_OFFSET_IS(struct verbs_context_ops, detach_mcast, 304);
VP_OFFSET_IS(struct verbs_context_ops, free_context, 312);
VP_OFFSET_IS(struct verbs_context_ops, free_dm, 320);
VP_OFFSET_IS(struct verbs_context_ops, get_srq_num, 328);
VP_OFFSET_IS(struct verbs_context_ops, import_dm, 336);
VP_OFFSET_IS(struct verbs_context_ops, import_mr, 344);
VP_OFFSET_IS(struct verbs_context_ops, import_pd, 352);
VP_OFFSET_IS(struct verbs_context_ops, modify_cq, 360);
VP_OFFSET_IS(struct verbs_context_ops, modify_flow_action_esp, 368);
VP_OFFSET_IS(struct verbs_context_ops, modify_qp, 376);
VP_OFFSET_IS(struct verbs_context_ops, modify_qp_rate_limit, 384);
VP_OFFSET_IS(struct verbs_context_ops, modify_srq, 392);
VP_OFFSET_IS(struct verbs_context_ops, modify_wq, 400);
VP_OFFSET_IS(struct verbs_context_ops, open_qp, 408);
VP_OFFSET_IS(struct verbs_context_ops, open_xrcd, 416);
VP_OFFSET_IS(struct verbs_context_ops, poll_cq, 424);
VP_OFFSET_IS(struct verbs_context_ops, post_recv, 432);
VP_OFFSET_IS(struct verbs_context_ops, post_send, 440);
VP_OFFSET_IS(struct verbs_context_ops, post_srq_ops, 448);
VP_OFFSET_IS(struct verbs_context_ops, post_srq_recv, 456);
VP_OFFSET_IS(struct verbs_context_ops, query_device_ex, 464);
VP_OFFSET_IS(struct verbs_context_ops, query_ece, 472);
VP_OFFSET_IS(struct verbs_context_ops, query_port, 480);
VP_OFFSET_IS(struct verbs_context_ops, query_qp, 488);
VP_OFFSET_IS(struct verbs_context_ops, query_qp_data_in_order, 496);
VP_OFFSET_IS(struct verbs_context_ops, query_rt_values, 504);
VP_OFFSET_IS(struct verbs_context_ops, query_srq, 512);
VP_OFFSET_IS(struct verbs_context_ops, read_counters, 520);
VP_OFFSET_IS(struct verbs_context_ops, reg_dm_mr, 528);
VP_OFFSET_IS(struct verbs_context_ops, reg_dmabuf_mr, 536);
VP_OFFSET_IS(struct verbs_context_ops, reg_mr, 544);
VP_OFFSET_IS(struct verbs_context_ops, req_notify_cq, 552);
VP_OFFSET_IS(struct verbs_context_ops, rereg_mr, 560);
VP_OFFSET_IS(struct verbs_context_ops, resize_cq, 568);
VP_OFFSET_IS(struct verbs_context_ops, set_ece, 576);
VP_OFFSET_IS(struct verbs_context_ops, unimport_dm, 584);
VP_OFFSET_IS(struct verbs_context_ops, unimport_mr, 592);
VP_OFFSET_IS(struct verbs_context_ops, unimport_pd, 600);

VP_SIZE_IS(struct verbs_qp, 368);
VP_OFFSET_IS(struct verbs_qp, comp_mask, 352);
VP_OFFSET_IS(struct verbs_qp, xrcd, 360);

VP_SIZE_IS(struct verbs_cq, 288);

VP_SIZE_IS(struct verbs_srq, 160);
VP_OFFSET_IS(struct verbs_srq, srq_type, 128);
VP_OFFSET_IS(struct verbs_srq, xrcd, 136);
VP_OFFSET_IS(struct verbs_srq, cq, 144);
VP_OFFSET_IS(struct verbs_srq, srq_num, 152);

VP_SIZE_IS(struct verbs_mr, 56);
VP_OFFSET_IS(struct verbs_mr, mr_type, 48);
VP_OFFSET_IS(struct verbs_mr, access, 52);

#else
/*
 * The numbers above were only verified for x86_64.  Other LP64 targets are
 * probably identical, but re-derive them before removing this.
 */
#error "MetaRoCE provider: private ABI layout only verified on x86_64"
#endif

#endif /* METAROCE_VERBS_PRIVATE_H */
