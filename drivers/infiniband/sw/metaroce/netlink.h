/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The MetaRoCE generic netlink family (include/uapi/rdma/metaroce-nl.h),
 * used by the metaroce tool.
 */
#ifndef MROCE_NETLINK_H
#define MROCE_NETLINK_H

struct mroce_dev;
struct net_device;
struct netlink_ext_ack;

/*
 * PLANE_ADD and PLANE_DEL call into plane.c.  Set MROCE_NL_PLANES to 1 once
 * plane.c provides mroce_plane_add() and mroce_plane_del(); until then the
 * two commands are left out and the kernel answers them -EOPNOTSUPP.
 */
#define MROCE_NL_PLANES 0

#if MROCE_NL_PLANES
int mroce_plane_add(struct mroce_dev *mdev, struct net_device *ndev,
		    struct netlink_ext_ack *extack);
int mroce_plane_del(struct mroce_dev *mdev, struct net_device *ndev,
		    struct netlink_ext_ack *extack);
#endif

int mroce_nl_init(void);
void mroce_nl_exit(void);

#endif /* MROCE_NETLINK_H */
