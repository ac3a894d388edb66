// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The two devices under test: lookup by name, the index of the RoCE v2 GID
 * of their IPv4 address, the port MTU and the peer's MAC address.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/in.h>
#include <linux/inet.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "kverbs.h"

#define KV_GID_WAIT_MS		5000

/* Find the ::ffff:ip RoCE v2 GID; -ENOENT if it is not (yet) there. */
static int kv_find_gid(struct kv_dev *d, int tbl_len)
{
	const struct ib_gid_attr *attr;
	union ib_gid want;
	int i;

	ipv6_addr_set_v4mapped(d->ip, (struct in6_addr *)want.raw);
	for (i = 0; i < tbl_len; i++) {
		attr = rdma_get_gid_attr(d->ibdev, KV_PORT, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    !memcmp(attr->gid.raw, want.raw, sizeof(want.raw))) {
			d->gid_index = attr->index;
			d->gid = attr->gid;
			rdma_put_gid_attr(attr);
			return 0;
		}
		rdma_put_gid_attr(attr);
	}
	return -ENOENT;
}

int kv_dev_open(struct kv_dev *d, const char *name, const char *ip)
{
	struct ib_port_attr pattr;
	unsigned long end;
	int err;

	d->name = name;
	if (!in4_pton(ip, -1, (u8 *)&d->ip, -1, NULL)) {
		pr_err("Bail out! bad IPv4 address '%s'\n", ip);
		return -EINVAL;
	}
	d->ibdev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!d->ibdev) {
		pr_err("Bail out! no ib device '%s'\n", name);
		return -ENODEV;
	}
	if (!rdma_protocol_roce_udp_encap(d->ibdev, KV_PORT)) {
		pr_err("Bail out! %s port %d is not a RoCE v2 port\n", name,
		       KV_PORT);
		return -EINVAL;
	}
	err = ib_query_port(d->ibdev, KV_PORT, &pattr);
	if (err) {
		pr_err("Bail out! ib_query_port(%s): %d\n", name, err);
		return err;
	}
	d->active_mtu = pattr.active_mtu;
	if (pattr.state != IB_PORT_ACTIVE)
		pr_info("# %s port %d state is %d, not ACTIVE\n", name,
			KV_PORT, pattr.state);

	/* GIDs follow the netdev's addresses asynchronously. */
	end = jiffies + msecs_to_jiffies(KV_GID_WAIT_MS);
	for (;;) {
		err = kv_find_gid(d, pattr.gid_tbl_len);
		if (!err || time_after_eq(jiffies, end))
			break;
		msleep(100);
	}
	if (err) {
		pr_err("Bail out! %s has no RoCE v2 GID ::ffff:%pI4\n", name,
		       &d->ip);
		return err;
	}
	return 0;
}

void kv_dev_close(struct kv_dev *d)
{
	if (d->ibdev)
		ib_device_put(d->ibdev);
	d->ibdev = NULL;
}

u32 kv_mtu_bytes(const struct kv_dev *d)
{
	return ib_mtu_enum_to_int(d->active_mtu);
}

struct kv_resolve {
	struct completion done;
	int status;
};

static void kv_resolve_done(int status, struct sockaddr *src,
			    struct rdma_dev_addr *addr, void *context)
{
	struct kv_resolve *r = context;

	r->status = status;
	complete(&r->done);
}

/*
 * Resolve dst's MAC address as seen from src's GID (its netdev and
 * namespace), as rdma_addr_find_l2_eth_by_grh() does inside ib_core, which
 * does not export it.  MetaRoCE routes by IP and does not need the MAC:
 * on failure the zero MAC is used.
 */
void kv_resolve_peer_mac(struct kv_dev *src, struct kv_dev *dst)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in din = { .sin_family = AF_INET };
	const struct ib_gid_attr *sgid_attr;
	struct rdma_dev_addr dev_addr = {};
	struct kv_resolve r;
	int err;

	eth_zero_addr(src->peer_mac);
	sgid_attr = rdma_get_gid_attr(src->ibdev, KV_PORT, src->gid_index);
	if (IS_ERR(sgid_attr)) {
		err = PTR_ERR(sgid_attr);
		goto out;
	}
	sin.sin_addr.s_addr = src->ip;
	din.sin_addr.s_addr = dst->ip;
	dev_addr.net = &init_net;
	dev_addr.sgid_attr = sgid_attr;
	init_completion(&r.done);
	err = rdma_resolve_ip((struct sockaddr *)&sin, (struct sockaddr *)&din,
			      &dev_addr, 2000, kv_resolve_done, true, &r);
	if (!err) {
		wait_for_completion(&r.done);
		err = r.status;
	}
	if (!err)
		ether_addr_copy(src->peer_mac, dev_addr.dst_dev_addr);
	rdma_put_gid_attr(sgid_attr);
out:
	if (err)
		pr_info("# %s: no MAC for %pI4 (%d), using 00:00:00:00:00:00\n",
			src->name, &dst->ip, err);
}
