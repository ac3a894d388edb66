// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The single MetaRoCE port: it is up while any plane is (MRC-PATH-035), and
 * its path MTU follows the MTU of the device's own netdev (plane 0).  GIDs
 * come from that netdev's addresses through ib_core's RoCE GID management.
 */
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "mroce.h"

/* The largest IB MTU m with m + overhead <= netdev MTU (MRC-ENC-019). */
static enum ib_mtu mroce_mtu_from_netdev(unsigned int ndev_mtu)
{
	int room = (int)ndev_mtu - MROCE_MAX_HDR_OVERHEAD;

	if (room >= 4096)
		return IB_MTU_4096;
	if (room >= 2048)
		return IB_MTU_2048;
	if (room >= 1024)
		return IB_MTU_1024;
	if (room >= 512)
		return IB_MTU_512;
	return IB_MTU_256;
}

/*
 * Re-read state and MTU from the planes: the port is ACTIVE while at least
 * one plane is up (MRC-PATH-035).  Called with RTNL held or before the
 * device is registered; dispatches a port event when the state changes on
 * a registered device.
 */
void mroce_port_update(struct mroce_dev *mdev)
{
	enum ib_port_state state = IB_PORT_DOWN, old;
	struct ib_event ev = {};
	int i;

	rcu_read_lock();
	for (i = 0; i < MROCE_MAX_PLANES; i++)
		if (mroce_plane_up(mdev, i))
			state = IB_PORT_ACTIVE;
	rcu_read_unlock();

	spin_lock_bh(&mdev->port_lock);
	old = mdev->port_state;
	mdev->port_state = state;
	mdev->active_mtu = mroce_mtu_from_netdev(READ_ONCE(mdev->ndev->mtu));
	spin_unlock_bh(&mdev->port_lock);

	if (old == state || refcount_read(&mdev->ibdev.refcount) == 0)
		return;

	ev.device = &mdev->ibdev;
	ev.element.port_num = MROCE_PORT;
	ev.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					     IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

/*
 * The link speed of ndev in Mb/s for the rate hint (spec 12.4.1), 0 when
 * the netdev does not know it.  RTNL held.
 */
void mroce_port_speed_update(struct mroce_dev *mdev, struct net_device *ndev)
{
	struct ethtool_link_ksettings ks = {};
	u32 mbps = 0;

	ASSERT_RTNL();
	if (!__ethtool_get_link_ksettings(ndev, &ks) &&
	    ks.base.speed != SPEED_UNKNOWN)
		mbps = ks.base.speed;
	WRITE_ONCE(mdev->link_mbps, mbps);
}

int mroce_query_port(struct ib_device *ibdev, u32 port_num,
		     struct ib_port_attr *attr)
{
	struct mroce_dev *mdev = to_mdev(ibdev);
	struct net_device *ndev;
	int err;

	ndev = ib_device_get_netdev(ibdev, port_num);
	if (!ndev)
		return -ENODEV;

	/* The core zeroes *attr. */
	spin_lock_bh(&mdev->port_lock);
	attr->state = mdev->port_state;
	attr->active_mtu = mdev->active_mtu;
	spin_unlock_bh(&mdev->port_lock);

	attr->max_mtu = IB_MTU_4096;
	attr->gid_tbl_len = MROCE_GID_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->ip_gids = true;
	attr->max_msg_sz = MROCE_MAX_MSG_SIZE;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 1;
	if (attr->state == IB_PORT_ACTIVE)
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	else if (dev_get_flags(ndev) & IFF_UP)
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	else
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;

	err = ib_get_eth_speed(ibdev, port_num, &attr->active_speed,
			       &attr->active_width);
	dev_put(ndev);
	return err;
}

int mroce_get_port_immutable(struct ib_device *ibdev, u32 port_num,
			     struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->gid_tbl_len = MROCE_GID_TBL_LEN;
	immutable->pkey_tbl_len = 1;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

enum rdma_link_layer mroce_get_link_layer(struct ib_device *ibdev,
					  u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

int mroce_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
		     u16 *pkey)
{
	if (index != 0)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

/* The port's active MTU in bytes: the largest datagram payload. */
int mroce_active_mtu_bytes(struct mroce_dev *mdev)
{
	return ib_mtu_enum_to_int(READ_ONCE(mdev->active_mtu));
}
