// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Planes (spec 7.1, 7.9): a device sends over its own netdev (plane 0) and
 * over up to seven more netdevs of the same network namespace, added and
 * removed with the metaroce tool.  Each connection pairs every plane with
 * an address of the peer that plane reaches and puts paths on it, so a
 * failed plane costs only its share of the paths.
 */
#include <linux/if_arp.h>
#include <linux/inetdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <net/ip6_route.h>
#include <net/route.h>

#include "conn.h"
#include "mroce.h"

/* The plane index of ndev on mdev: 0 for its own netdev, -1 for none. */
int mroce_plane_of(struct mroce_dev *mdev, const struct net_device *ndev)
{
	int i;

	if (mdev->ndev == ndev)
		return 0;
	for (i = 1; i < MROCE_MAX_PLANES; i++)
		if (rcu_access_pointer(mdev->planes[i]) == ndev)
			return i;
	return -1;
}

/* The netdev of plane i, or NULL.  RCU or RTNL held. */
struct net_device *mroce_plane_dev(struct mroce_dev *mdev, int i)
{
	if (!i)
		return mdev->ndev;
	return rcu_dereference_rtnl(mdev->planes[i]);
}

/*
 * Is plane i of mdev up (MRC-PATH-035): administratively up, with carrier
 * and an MTU that takes the smallest segment?  Any context: the path
 * timers ask it from the connection timer and from every re-arm of it.
 */
bool mroce_plane_up(struct mroce_dev *mdev, int i)
{
	struct net_device *ndev;
	bool up;

	rcu_read_lock();
	ndev = mroce_plane_dev(mdev, i);
	up = ndev && netif_running(ndev) && netif_carrier_ok(ndev) &&
	     READ_ONCE(ndev->mtu) >= 256 + MROCE_MAX_HDR_OVERHEAD;
	rcu_read_unlock();
	return up;
}

/* The first IPv4 address of ndev as a GID; false if it has none.  RCU. */
static bool mroce_plane_addr4(struct net_device *ndev, union ib_gid *gid)
{
	struct in_device *in = __in_dev_get_rcu(ndev);
	const struct in_ifaddr *ifa;

	if (!in)
		return false;
	ifa = rcu_dereference(in->ifa_list);
	if (!ifa)
		return false;
	ipv6_addr_set_v4mapped(ifa->ifa_local, (struct in6_addr *)gid->raw);
	return true;
}

/*
 * The first global IPv6 address of ndev that passed duplicate address
 * detection; false if it has none.  RCU.
 */
static bool mroce_plane_addr6(struct net_device *ndev, union ib_gid *gid)
{
	struct inet6_dev *idev = __in6_dev_get(ndev);
	const struct inet6_ifaddr *ifa;
	bool found = false;

	if (!idev)
		return false;
	read_lock_bh(&idev->lock);
	list_for_each_entry(ifa, &idev->addr_list, if_list) {
		if (ifa->scope || ifa->flags & (IFA_F_TENTATIVE |
						IFA_F_DADFAILED))
			continue;
		memcpy(gid->raw, &ifa->addr, sizeof(gid->raw));
		found = true;
		break;
	}
	read_unlock_bh(&idev->lock);
	return found;
}

/*
 * The address of plane netdev ndev in the family of the connection's
 * address like (MRC-PATH-004): IPv4 planes serve IPv4 connections, IPv6
 * planes IPv6 ones.  RCU held.
 */
bool mroce_plane_addr(struct net_device *ndev, const union ib_gid *like,
		      union ib_gid *gid)
{
	if (ipv6_addr_v4mapped((const struct in6_addr *)like->raw))
		return mroce_plane_addr4(ndev, gid);
	return mroce_plane_addr6(ndev, gid);
}

static bool mroce_plane_reaches4(struct net_device *ndev,
				 const struct in6_addr *s,
				 const struct in6_addr *d)
{
	struct rtable *rt;
	bool ok;

	rt = ip_route_output(dev_net(ndev), d->s6_addr32[3], s->s6_addr32[3],
			     0, 0, RT_SCOPE_UNIVERSE);
	if (IS_ERR(rt))
		return false;
	ok = rt->dst.dev == ndev;
	ip_rt_put(rt);
	return ok;
}

static bool mroce_plane_reaches6(struct net_device *ndev,
				 const struct in6_addr *s,
				 const struct in6_addr *d)
{
	struct flowi6 fl6 = {
		.daddr = *d,
		.saddr = *s,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst;
	bool ok;

	dst = ip6_route_output(dev_net(ndev), NULL, &fl6);
	ok = !dst->error && dst->dev == ndev;
	dst_release(dst);
	return ok;
}

/* Does the route from src to dst leave through ndev (MRC-PATH-004)? */
bool mroce_plane_reaches(struct net_device *ndev, const union ib_gid *src,
			 const union ib_gid *dst)
{
	const struct in6_addr *s = (const struct in6_addr *)src->raw;
	const struct in6_addr *d = (const struct in6_addr *)dst->raw;

	if (ipv6_addr_v4mapped(s) != ipv6_addr_v4mapped(d))
		return false;
	if (ipv6_addr_v4mapped(s))
		return mroce_plane_reaches4(ndev, s, d);
	return mroce_plane_reaches6(ndev, s, d);
}

static int mroce_plane_check(struct mroce_dev *mdev, struct net_device *ndev,
			     struct netlink_ext_ack *extack)
{
	struct mroce_dev *other;

	if (!net_eq(dev_net(ndev), dev_net(mdev->ndev))) {
		NL_SET_ERR_MSG(extack, "plane netdev is in another network namespace");
		return -EINVAL;
	}
	if (ndev->type != ARPHRD_ETHER || (ndev->flags & IFF_LOOPBACK)) {
		NL_SET_ERR_MSG(extack, "plane netdev is not an Ethernet device");
		return -EINVAL;
	}
	other = mroce_find_by_netdev(ndev);
	if (other) {
		ib_device_put(&other->ibdev);
		NL_SET_ERR_MSG(extack, "netdev already serves a MetaRoCE device");
		return -EEXIST;
	}
	return 0;
}

/*
 * Add ndev as a plane of mdev (MRC-PATH-001).  The caller holds a
 * reference on ndev; takes RTNL.
 */
int mroce_plane_add(struct mroce_dev *mdev, struct net_device *ndev,
		    struct netlink_ext_ack *extack)
{
	int i, err;

	rtnl_lock();
	err = mroce_plane_check(mdev, ndev, extack);
	if (err)
		goto out;
	for (i = 1; i < MROCE_MAX_PLANES; i++)
		if (!rtnl_dereference(mdev->planes[i]))
			break;
	if (i == MROCE_MAX_PLANES) {
		NL_SET_ERR_MSG(extack, "device already has 8 planes");
		err = -ENOSPC;
		goto out;
	}
	netdev_hold(ndev, &mdev->plane_tracker[i], GFP_KERNEL);
	rcu_assign_pointer(mdev->planes[i], ndev);
	mroce_port_update(mdev);
	mroce_conns_plane_added(mdev, i);
out:
	rtnl_unlock();
	return err;
}

/* Remove plane i (RTNL held): its paths fail for good (P13). */
static void __mroce_plane_del(struct mroce_dev *mdev, int i)
{
	struct net_device *ndev = rtnl_dereference(mdev->planes[i]);

	mroce_conns_plane_event(mdev, i, false, true);
	RCU_INIT_POINTER(mdev->planes[i], NULL);
	mroce_port_update(mdev);
	synchronize_net();
	netdev_put(ndev, &mdev->plane_tracker[i]);
}

int mroce_plane_del(struct mroce_dev *mdev, struct net_device *ndev,
		    struct netlink_ext_ack *extack)
{
	int i, err = 0;

	rtnl_lock();
	i = mroce_plane_of(mdev, ndev);
	if (i < 0) {
		NL_SET_ERR_MSG(extack, "netdev is not a plane of this device");
		err = -ENOENT;
	} else if (i == 0) {
		NL_SET_ERR_MSG(extack,
			       "plane 0 is the device's own netdev: delete the link");
		err = -EBUSY;
	} else {
		__mroce_plane_del(mdev, i);
	}
	rtnl_unlock();
	return err;
}

/* ndev, a plane of mdev, is being unregistered or moved.  RTNL held. */
void mroce_plane_gone(struct mroce_dev *mdev, struct net_device *ndev)
{
	int i = mroce_plane_of(mdev, ndev);

	if (i > 0)
		__mroce_plane_del(mdev, i);
}

/* Device teardown: drop what planes are left (no path uses them now). */
void mroce_planes_release(struct mroce_dev *mdev)
{
	struct net_device *ndev;
	int i;

	for (i = 1; i < MROCE_MAX_PLANES; i++) {
		ndev = rcu_dereference_protected(mdev->planes[i], true);
		if (!ndev)
			continue;
		RCU_INIT_POINTER(mdev->planes[i], NULL);
		netdev_put(ndev, &mdev->plane_tracker[i]);
	}
}
