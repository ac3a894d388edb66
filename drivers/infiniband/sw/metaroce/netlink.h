/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The MetaRoCE generic netlink family (include/uapi/rdma/metaroce-nl.h),
 * used by the metaroce tool.
 */
#ifndef MROCE_NETLINK_H
#define MROCE_NETLINK_H

int mroce_nl_init(void);
void mroce_nl_exit(void);

#endif /* MROCE_NETLINK_H */
