// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MetaRoCE module entry: the rdma link type and the netdev notifier.
 */
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "crc.h"
#include "mroce.h"
#include "net.h"
#include "netlink.h"
#include "rxsteer.h"
#include "txpool.h"

/* Runs QP send queues; ordered per QP because a work item never reenters. */
struct workqueue_struct *mroce_wq;
struct workqueue_struct *mroce_tx_wq;

static struct rdma_link_ops mroce_link_ops = {
	.type = MROCE_LINK_TYPE,
	.newlink = mroce_newlink,
};

static int __init mroce_init(void)
{
	int err;

	err = mroce_crc_init();
	if (err)
		return err;
	mroce_wq = alloc_workqueue("metaroce", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!mroce_wq)
		return -ENOMEM;
	mroce_tx_wq = alloc_workqueue("metaroce_tx", WQ_HIGHPRI | WQ_MEM_RECLAIM,
				      0);
	if (!mroce_tx_wq) {
		err = -ENOMEM;
		goto err_wq;
	}
	/* Bottom-half work: a connection's packets on its home CPU. */
	mroce_rx_wq = alloc_workqueue("metaroce_rx", WQ_BH, 0);
	if (!mroce_rx_wq) {
		err = -ENOMEM;
		goto err_tx_wq;
	}
	err = mroce_txpool_init();
	if (err)
		goto err_rx_wq;
	err = mroce_net_init();
	if (err)
		goto err_txpool;
	err = mroce_netdev_events_init();
	if (err)
		goto err_net;
	err = mroce_nl_init();
	if (err)
		goto err_events;
	rdma_link_register(&mroce_link_ops);
	pr_info("metaroce: loaded, UDP port %u\n", mroce_udp_port);
	return 0;

err_events:
	mroce_netdev_events_exit();
err_net:
	mroce_net_exit();
err_txpool:
	mroce_txpool_exit();
err_rx_wq:
	destroy_workqueue(mroce_rx_wq);
err_tx_wq:
	destroy_workqueue(mroce_tx_wq);
err_wq:
	destroy_workqueue(mroce_wq);
	return err;
}

static void __exit mroce_exit(void)
{
	mroce_nl_exit();
	rdma_link_unregister(&mroce_link_ops);
	mroce_remove_all();
	mroce_netdev_events_exit();
	mroce_net_exit();
	mroce_txpool_exit();
	destroy_workqueue(mroce_rx_wq);
	destroy_workqueue(mroce_tx_wq);
	destroy_workqueue(mroce_wq);
	pr_info("metaroce: unloaded\n");
}

module_init(mroce_init);
module_exit(mroce_exit);

MODULE_AUTHOR("The MetaRoCE developers");
MODULE_DESCRIPTION("MetaRoCE: multipath RDMA transport for lossy Ethernet");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK(MROCE_LINK_TYPE);
