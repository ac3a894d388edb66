// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MetaRoCE module entry: the rdma link type and the netdev notifier.
 */
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "mroce.h"

static struct rdma_link_ops mroce_link_ops = {
	.type = MROCE_LINK_TYPE,
	.newlink = mroce_newlink,
};

static int __init mroce_init(void)
{
	int err;

	err = mroce_netdev_events_init();
	if (err)
		return err;
	rdma_link_register(&mroce_link_ops);
	pr_info("metaroce: loaded\n");
	return 0;
}

static void __exit mroce_exit(void)
{
	rdma_link_unregister(&mroce_link_ops);
	mroce_remove_all();
	mroce_netdev_events_exit();
	pr_info("metaroce: unloaded\n");
}

module_init(mroce_init);
module_exit(mroce_exit);

MODULE_AUTHOR("The MetaRoCE developers");
MODULE_DESCRIPTION("MetaRoCE: multipath RDMA transport for lossy Ethernet");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK(MROCE_LINK_TYPE);
