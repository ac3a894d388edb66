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

#endif /* METAROCE_ABI_USER_H */
