// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Netdev events: a MetaRoCE port follows its planes' state and its netdev's
 * MTU, and the device goes away with the netdev (or when the netdev leaves
 * the namespace).
 */
#include <linux/netdevice.h>

#include "conn.h"
#include "mroce.h"

static int mroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct mroce_dev *mdev;
	int plane;

	mdev = mroce_find_by_netdev(ndev);
	if (!mdev)
		return NOTIFY_DONE;
	plane = mroce_plane_of(mdev, ndev);
	switch (event) {
	case NETDEV_UNREGISTER:
		if (plane > 0) {	/* a further plane goes, the device stays */
			mroce_plane_gone(mdev, ndev);
			break;
		}
		/*
		 * Also sent when the netdev moves to another namespace.  The
		 * queued unregistration drops ib_core's netdev reference, which
		 * netdev unregistration waits for.
		 */
		ib_unregister_device_queued(&mdev->ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		/* Every plane carries paths and keeps the port up. */
		mroce_port_update(mdev);
		if (!plane)
			mroce_port_speed_update(mdev, ndev);
		mroce_conns_plane_event(mdev, plane,
					mroce_plane_up(mdev, plane), false);
		break;
	default:
		break;
	}
	ib_device_put(&mdev->ibdev);
	return NOTIFY_DONE;
}

static struct notifier_block mroce_netdev_nb = {
	.notifier_call = mroce_netdev_event,
};

int mroce_netdev_events_init(void)
{
	return register_netdevice_notifier(&mroce_netdev_nb);
}

void mroce_netdev_events_exit(void)
{
	unregister_netdevice_notifier(&mroce_netdev_nb);
}
