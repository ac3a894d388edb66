// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The generic netlink family of the metaroce tool (uapi metaroce-nl.h):
 * devices, connections with their paths, tunables and planes.
 *
 * A request sees the devices whose netdev is in its network namespace.
 * Dumps keep their place in cb->ctx (device index, local CID, path) and
 * never hold a lock or a reference between two calls.
 */
#include <linux/netdevice.h>
#include <net/genetlink.h>
#include <rdma/metaroce-nl.h>

#include "conn.h"
#include "loss.h"
#include "mroce.h"
#include "netlink.h"
#include "path.h"
#include "pkt.h"
#include "tunables.h"

static struct genl_family mroce_nl_family;

static const struct nla_policy
mroce_nl_tunable_policy[METAROCE_TUNABLE_A_MAX_ATTR + 1] = {
	[METAROCE_TUNABLE_A_NAME] = { .type = NLA_NUL_STRING,
				      .len = METAROCE_TUNABLE_NAME_MAX - 1 },
	[METAROCE_TUNABLE_A_VALUE] = { .type = NLA_U32 },
};

/* Only what a request may carry; anything else is refused (strict). */
static const struct nla_policy mroce_nl_policy[METAROCE_A_MAX + 1] = {
	[METAROCE_A_DEV_NAME] = { .type = NLA_NUL_STRING,
				  .len = IB_DEVICE_NAME_MAX - 1 },
	[METAROCE_A_IFNAME] = { .type = NLA_NUL_STRING, .len = IFNAMSIZ - 1 },
	[METAROCE_A_TUNABLE] = NLA_POLICY_NESTED(mroce_nl_tunable_policy),
	[METAROCE_A_TUNABLES] = NLA_POLICY_NESTED_ARRAY(mroce_nl_tunable_policy),
};

/* One path, copied under conn->lock. */
struct mroce_nl_path {
	u32 id;
	u32 plane;
	u8 state;
	u16 sport;
	u32 cwnd;
	u32 ssthresh;
	u32 bif;
	u32 live;
	u32 holes;
	u32 srtt_us;
	u32 rttvar_us;
	u32 min_rtt_us;
	u32 rto_us;
	u32 backoff;
	u32 reroutes;
	u32 alpha;
	u32 loss_pct;
	u64 tx_pkts;
	u64 retx_pkts;
	u64 lost_pkts;
	u64 ce_marks;
};

/* One connection and its paths, copied under conn->lock. */
struct mroce_nl_conn {
	union ib_gid local;
	union ib_gid peer;
	u32 local_cid;
	u32 peer_cid;
	u8 state;
	u8 initiator;
	u32 streams;
	u32 hint;
	u32 pace_rate;
	u32 nretx;
	u32 npaths;
	struct mroce_nl_path paths[MROCE_MAX_PATHS];
};

/* A dump's place, in cb->ctx. */
struct mroce_nl_dump {
	struct mroce_nl_conn *snap;	/* CONN_GET: the copy buffer */
	u32 pos;			/* device index, or tunable */
	u32 cid;			/* CONN_GET: next local CID */
	u32 path;			/* CONN_GET: next path of that one */
	bool filtered;			/* only device pos */
	bool done;
};

static struct mroce_nl_dump *mroce_nl_dump(struct netlink_callback *cb)
{
	BUILD_BUG_ON(sizeof(struct mroce_nl_dump) > sizeof(cb->ctx));
	return (struct mroce_nl_dump *)cb->ctx;
}

/* Is mdev's netdev in net? */
static bool mroce_nl_in_net(struct mroce_dev *mdev, struct net *net)
{
	struct net_device *ndev;
	bool ok;

	ndev = ib_device_get_netdev(&mdev->ibdev, MROCE_PORT);
	ok = ndev && net_eq(dev_net(ndev), net);
	dev_put(ndev);
	return ok;
}

/* The device of net with the lowest index at or above index, referenced. */
static struct mroce_dev *mroce_nl_next_dev(struct net *net, u32 index)
{
	struct mroce_dev *mdev;

	while ((mdev = mroce_dev_get_from(index))) {
		if (mroce_nl_in_net(mdev, net))
			return mdev;
		index = mdev->ibdev.index + 1;
		ib_device_put(&mdev->ibdev);
	}
	return NULL;
}

/* The device of net called name, referenced, or NULL. */
static struct mroce_dev *mroce_nl_dev_by_name(struct net *net,
					      const char *name)
{
	struct mroce_dev *mdev;
	u32 index = 0;

	while ((mdev = mroce_nl_next_dev(net, index))) {
		if (!strcmp(dev_name(&mdev->ibdev.dev), name))
			return mdev;
		index = mdev->ibdev.index + 1;
		ib_device_put(&mdev->ibdev);
	}
	return NULL;
}

/* The device named by attribute DEV_NAME, with an error message if none. */
static struct mroce_dev *mroce_nl_dev_attr(struct net *net,
					   const struct nlattr *attr,
					   struct netlink_ext_ack *extack)
{
	struct mroce_dev *mdev = mroce_nl_dev_by_name(net, nla_data(attr));

	if (!mdev)
		NL_SET_ERR_MSG_FMT(extack,
				   "no MetaRoCE device %s in this network namespace",
				   (const char *)nla_data(attr));
	if (!mdev)
		NL_SET_BAD_ATTR(extack, attr);
	return mdev;
}

/* --- DEV_GET --------------------------------------------------------- */

static u32 mroce_nl_num_conns(struct mroce_dev *mdev)
{
	unsigned long idx;
	void *conn;
	u32 n = 0;

	xa_for_each(&mdev->conn_xa, idx, conn)
		n++;
	return n;
}

/* One plane, under RCU. */
static int mroce_nl_put_plane(struct sk_buff *skb, struct net_device *ndev,
			      int i)
{
	struct nlattr *plane;
	bool up;

	up = netif_running(ndev) && netif_carrier_ok(ndev);
	plane = nla_nest_start(skb, i + 1);
	if (!plane)
		return -EMSGSIZE;
	if (nla_put_u32(skb, METAROCE_PLANE_A_INDEX, i) ||
	    nla_put_string(skb, METAROCE_PLANE_A_IFNAME, netdev_name(ndev)) ||
	    nla_put_u32(skb, METAROCE_PLANE_A_IFINDEX, ndev->ifindex) ||
	    nla_put_u8(skb, METAROCE_PLANE_A_UP, up)) {
		nla_nest_cancel(skb, plane);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, plane);
	return 0;
}

static int mroce_nl_put_planes(struct sk_buff *skb, struct mroce_dev *mdev)
{
	struct net_device *ndev;
	struct nlattr *planes;
	int i, err = 0;

	planes = nla_nest_start(skb, METAROCE_A_DEV_PLANES);
	if (!planes)
		return -EMSGSIZE;
	rcu_read_lock();
	for (i = 0; i < MROCE_MAX_PLANES && !err; i++) {
		ndev = mroce_plane_dev(mdev, i);
		if (ndev)
			err = mroce_nl_put_plane(skb, ndev, i);
	}
	rcu_read_unlock();
	if (err) {
		nla_nest_cancel(skb, planes);
		return err;
	}
	nla_nest_end(skb, planes);
	return 0;
}

static int mroce_nl_put_dev(struct sk_buff *skb, struct mroce_dev *mdev)
{
	enum ib_port_state state;

	spin_lock_bh(&mdev->port_lock);
	state = mdev->port_state;
	spin_unlock_bh(&mdev->port_lock);

	if (nla_put_string(skb, METAROCE_A_DEV_NAME, dev_name(&mdev->ibdev.dev)) ||
	    nla_put_u32(skb, METAROCE_A_DEV_INDEX, mdev->ibdev.index) ||
	    nla_put_u8(skb, METAROCE_A_DEV_PORT_STATE, state) ||
	    nla_put_u32(skb, METAROCE_A_DEV_LINK_MBPS, READ_ONCE(mdev->link_mbps)) ||
	    nla_put_u32(skb, METAROCE_A_DEV_HINT_MBPS,
			min_t(u64, div_u64(READ_ONCE(mdev->hint_share), 1000),
			      U32_MAX)) ||
	    nla_put_u32(skb, METAROCE_A_DEV_NUM_CONNS, mroce_nl_num_conns(mdev)))
		return -EMSGSIZE;
	return mroce_nl_put_planes(skb, mdev);
}

static int mroce_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mroce_dev *mdev;
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, METAROCE_A_DEV_NAME))
		return -EINVAL;
	mdev = mroce_nl_dev_attr(genl_info_net(info),
				 info->attrs[METAROCE_A_DEV_NAME], info->extack);
	if (!mdev)
		return -ENODEV;
	err = -ENOMEM;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		goto out;
	err = -EMSGSIZE;
	hdr = genlmsg_iput(msg, info);
	if (!hdr || mroce_nl_put_dev(msg, mdev)) {
		nlmsg_free(msg);
		goto out;
	}
	genlmsg_end(msg, hdr);
	err = genlmsg_reply(msg, info);
out:
	ib_device_put(&mdev->ibdev);
	return err;
}

/* Dumps of DEV_GET and CONN_GET: an optional device filter. */
static int mroce_nl_dev_filter(struct netlink_callback *cb)
{
	const struct genl_info *info = genl_info_dump(cb);
	struct mroce_nl_dump *d = mroce_nl_dump(cb);
	struct mroce_dev *mdev;

	if (!info->attrs[METAROCE_A_DEV_NAME])
		return 0;
	mdev = mroce_nl_dev_attr(sock_net(cb->skb->sk),
				 info->attrs[METAROCE_A_DEV_NAME], cb->extack);
	if (!mdev)
		return -ENODEV;
	d->pos = mdev->ibdev.index;
	d->filtered = true;
	ib_device_put(&mdev->ibdev);
	return 0;
}

/* The next device a dump visits, referenced, or NULL. */
static struct mroce_dev *mroce_nl_dump_dev(struct sk_buff *skb,
					   struct mroce_nl_dump *d)
{
	struct mroce_dev *mdev;

	if (d->done)
		return NULL;
	mdev = mroce_nl_next_dev(sock_net(skb->sk), d->pos);
	if (mdev && d->filtered && mdev->ibdev.index != d->pos) {
		ib_device_put(&mdev->ibdev);	/* the filtered one is gone */
		mdev = NULL;
	}
	if (mdev)
		d->pos = mdev->ibdev.index;
	return mdev;
}

/* The device a dump has done with: go on after it. */
static void mroce_nl_dump_dev_done(struct mroce_nl_dump *d,
				   struct mroce_dev *mdev)
{
	ib_device_put(&mdev->ibdev);
	d->pos++;
	d->cid = 0;
	d->path = 0;
	if (d->filtered)
		d->done = true;
}

static int mroce_nl_dev_get_dumpit(struct sk_buff *skb,
				   struct netlink_callback *cb)
{
	struct mroce_nl_dump *d = mroce_nl_dump(cb);
	struct mroce_dev *mdev;
	void *hdr;

	while ((mdev = mroce_nl_dump_dev(skb, d))) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &mroce_nl_family,
				  NLM_F_MULTI, METAROCE_CMD_DEV_GET);
		if (!hdr || mroce_nl_put_dev(skb, mdev)) {
			if (hdr)
				genlmsg_cancel(skb, hdr);
			ib_device_put(&mdev->ibdev);
			return skb->len ?: -EMSGSIZE;
		}
		genlmsg_end(skb, hdr);
		mroce_nl_dump_dev_done(d, mdev);
	}
	return skb->len;
}

/* --- CONN_GET -------------------------------------------------------- */

/* The uapi values of the connection and path states. */
static const u8 mroce_nl_conn_state[] = {
	[MROCE_CONN_CONNECTING] = METAROCE_CONN_CONNECTING,
	[MROCE_CONN_ESTABLISHED] = METAROCE_CONN_ESTABLISHED,
	[MROCE_CONN_CLOSING] = METAROCE_CONN_CLOSING,
	[MROCE_CONN_TOMBSTONE] = METAROCE_CONN_TOMBSTONE,
};

static const u8 mroce_nl_path_state[] = {
	[MROCE_PATH_ACTIVE] = METAROCE_PATH_ACTIVE,
	[MROCE_PATH_SUSPECT] = METAROCE_PATH_SUSPECT,
	[MROCE_PATH_PROBING] = METAROCE_PATH_PROBING,
	[MROCE_PATH_FAILED] = METAROCE_PATH_FAILED,
};

static void mroce_nl_copy_path(struct mroce_nl_path *p,
			       struct mroce_path *path)
{
	p->id = path->id;
	p->plane = path->plane;
	p->state = mroce_nl_path_state[path->state];
	p->sport = ntohs(path->sport);
	p->cwnd = path->cwnd;
	p->ssthresh = path->ssthresh;
	p->bif = path->bif;
	p->live = path->live;
	p->holes = mroce_sack_holes(path);
	p->srtt_us = path->srtt_us;
	p->rttvar_us = path->rttvar_us;
	p->min_rtt_us = path->min_rtt_us;
	p->rto_us = path->rto_us;
	p->backoff = path->backoff;
	p->reroutes = path->reroutes;
	p->alpha = path->alpha;
	p->loss_pct = path->loss_pct;
	p->tx_pkts = path->tx_pkts;
	p->retx_pkts = path->retx_pkts;
	p->lost_pkts = path->lost_pkts;
	p->ce_marks = path->ce_marks;
}

/* Copy conn; the lock is held only for the copy. */
static void mroce_nl_copy_conn(struct mroce_nl_conn *s, struct mroce_conn *conn)
{
	u32 i;

	mroce_conn_lock_bh(conn);
	s->local = conn->local;
	s->peer = conn->peer;
	s->local_cid = conn->local_cid;
	s->peer_cid = conn->peer_cid;
	s->state = mroce_nl_conn_state[conn->state];
	s->initiator = conn->initiator;
	s->streams = conn->streams.count;
	s->hint = conn->cc.hint;
	s->pace_rate = conn->cc.pace_rate;
	s->nretx = conn->tx.nretx;
	s->npaths = min_t(u32, conn->tx.npaths, MROCE_MAX_PATHS);
	for (i = 0; i < s->npaths; i++)
		mroce_nl_copy_path(&s->paths[i], conn->tx.paths[i]);
	mroce_conn_unlock_bh(conn);
}

static int mroce_nl_put_path(struct sk_buff *skb, const struct mroce_nl_path *p)
{
	struct nlattr *nest;

	nest = nla_nest_start(skb, p->id + 1);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, METAROCE_PATH_A_ID, p->id) ||
	    nla_put_u8(skb, METAROCE_PATH_A_STATE, p->state) ||
	    nla_put_u16(skb, METAROCE_PATH_A_SPORT, p->sport) ||
	    nla_put_u32(skb, METAROCE_PATH_A_CWND, p->cwnd) ||
	    nla_put_u32(skb, METAROCE_PATH_A_SSTHRESH, p->ssthresh) ||
	    nla_put_u32(skb, METAROCE_PATH_A_BYTES_IN_FLIGHT, p->bif) ||
	    nla_put_u32(skb, METAROCE_PATH_A_PKTS_IN_FLIGHT, p->live) ||
	    nla_put_u32(skb, METAROCE_PATH_A_SACK_HOLES, p->holes) ||
	    nla_put_u32(skb, METAROCE_PATH_A_SRTT_US, p->srtt_us) ||
	    nla_put_u32(skb, METAROCE_PATH_A_RTTVAR_US, p->rttvar_us) ||
	    nla_put_u32(skb, METAROCE_PATH_A_MIN_RTT_US, p->min_rtt_us) ||
	    nla_put_u32(skb, METAROCE_PATH_A_RTO_US, p->rto_us) ||
	    nla_put_u32(skb, METAROCE_PATH_A_BACKOFF, p->backoff) ||
	    nla_put_u64_64bit(skb, METAROCE_PATH_A_TX_PKTS, p->tx_pkts,
			      METAROCE_PATH_A_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_PATH_A_RETX_PKTS, p->retx_pkts,
			      METAROCE_PATH_A_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_PATH_A_LOST_PKTS, p->lost_pkts,
			      METAROCE_PATH_A_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_PATH_A_CE_MARKS, p->ce_marks,
			      METAROCE_PATH_A_PAD) ||
	    nla_put_u32(skb, METAROCE_PATH_A_REROUTES, p->reroutes) ||
	    nla_put_u32(skb, METAROCE_PATH_A_ALPHA, p->alpha) ||
	    nla_put_u32(skb, METAROCE_PATH_A_LOSS_PCT, p->loss_pct) ||
	    nla_put_u32(skb, METAROCE_PATH_A_PLANE, p->plane)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int mroce_nl_put_conn_attrs(struct sk_buff *skb,
				   const struct mroce_nl_conn *s)
{
	if (nla_put(skb, METAROCE_CONN_A_LOCAL_ADDR, 16, s->local.raw) ||
	    nla_put(skb, METAROCE_CONN_A_PEER_ADDR, 16, s->peer.raw) ||
	    nla_put_u32(skb, METAROCE_CONN_A_LOCAL_CID, s->local_cid) ||
	    nla_put_u32(skb, METAROCE_CONN_A_PEER_CID, s->peer_cid) ||
	    nla_put_u8(skb, METAROCE_CONN_A_STATE, s->state) ||
	    nla_put_u8(skb, METAROCE_CONN_A_INITIATOR, s->initiator) ||
	    nla_put_u32(skb, METAROCE_CONN_A_STREAMS, s->streams) ||
	    nla_put_u32(skb, METAROCE_CONN_A_HINT_MBPS, s->hint) ||
	    nla_put_u32(skb, METAROCE_CONN_A_PACE_RATE, s->pace_rate) ||
	    nla_put_u32(skb, METAROCE_CONN_A_RETXQ_LEN, s->nretx) ||
	    nla_put_u32(skb, METAROCE_CONN_A_NPATHS, s->npaths))
		return -EMSGSIZE;
	return 0;
}

/*
 * One message for s, with its paths from d->path on.  Returns 0 when every
 * path went out, -EMSGSIZE when the skb is full (d->path tells where the
 * next message resumes).
 */
static int mroce_nl_put_conn(struct sk_buff *skb, struct netlink_callback *cb,
			     struct mroce_dev *mdev,
			     const struct mroce_nl_conn *s,
			     struct mroce_nl_dump *d)
{
	struct nlattr *conn, *paths;
	u32 i = d->path;
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &mroce_nl_family, NLM_F_MULTI, METAROCE_CMD_CONN_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_string(skb, METAROCE_A_DEV_NAME, dev_name(&mdev->ibdev.dev)) ||
	    nla_put_u32(skb, METAROCE_A_DEV_INDEX, mdev->ibdev.index))
		goto cancel;
	conn = nla_nest_start(skb, METAROCE_A_CONN);
	if (!conn || mroce_nl_put_conn_attrs(skb, s))
		goto cancel;
	paths = nla_nest_start(skb, METAROCE_CONN_A_PATHS);
	if (!paths)
		goto cancel;
	for (; i < s->npaths; i++)
		if (mroce_nl_put_path(skb, &s->paths[i]))
			break;
	if (i < s->npaths && i == d->path)
		goto cancel;	/* not one path: all of it in the next skb */
	nla_nest_end(skb, paths);
	nla_nest_end(skb, conn);
	genlmsg_end(skb, hdr);
	if (i < s->npaths) {
		d->path = i;
		return -EMSGSIZE;
	}
	d->path = 0;
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* The connections of mdev from local CID d->cid on. */
static int mroce_nl_dump_conns(struct sk_buff *skb, struct netlink_callback *cb,
			       struct mroce_dev *mdev, struct mroce_nl_dump *d)
{
	struct mroce_conn *conn;
	unsigned long idx;
	int err;

	for (;;) {
		idx = d->cid;
		rcu_read_lock();
		conn = xa_find(&mdev->conn_xa, &idx, U32_MAX, XA_PRESENT);
		if (conn)
			mroce_nl_copy_conn(d->snap, conn);
		rcu_read_unlock();
		if (!conn)
			return 0;
		if (idx != d->cid)
			d->path = 0;
		d->cid = idx;
		err = mroce_nl_put_conn(skb, cb, mdev, d->snap, d);
		if (err)
			return err;
		if (idx == U32_MAX)
			return 0;
		d->cid = idx + 1;
	}
}

static int mroce_nl_conn_start(struct netlink_callback *cb)
{
	struct mroce_nl_dump *d = mroce_nl_dump(cb);
	int err;

	err = mroce_nl_dev_filter(cb);
	if (err)
		return err;
	d->snap = kvmalloc(sizeof(*d->snap), GFP_KERNEL);
	return d->snap ? 0 : -ENOMEM;
}

static int mroce_nl_conn_done(struct netlink_callback *cb)
{
	kvfree(mroce_nl_dump(cb)->snap);
	return 0;
}

static int mroce_nl_conn_get_dumpit(struct sk_buff *skb,
				    struct netlink_callback *cb)
{
	struct mroce_nl_dump *d = mroce_nl_dump(cb);
	struct mroce_dev *mdev;
	int err;

	while ((mdev = mroce_nl_dump_dev(skb, d))) {
		err = mroce_nl_dump_conns(skb, cb, mdev, d);
		if (err) {
			ib_device_put(&mdev->ibdev);
			return skb->len ?: err;
		}
		mroce_nl_dump_dev_done(d, mdev);
	}
	return skb->len;
}

/* --- TUNABLE_GET, TUNABLE_SET ---------------------------------------- */

static int mroce_nl_put_tunable(struct sk_buff *skb,
				const struct mroce_tunable *t)
{
	struct nlattr *nest;

	nest = nla_nest_start(skb, METAROCE_A_TUNABLE);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_string(skb, METAROCE_TUNABLE_A_NAME, t->name) ||
	    nla_put_u32(skb, METAROCE_TUNABLE_A_VALUE, mroce_tunable_get(t)) ||
	    nla_put_u32(skb, METAROCE_TUNABLE_A_MIN, t->lo) ||
	    nla_put_u32(skb, METAROCE_TUNABLE_A_MAX, t->hi)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* The tunable named in the nest attr, with an error message if none. */
static const struct mroce_tunable *
mroce_nl_tunable(const struct nlattr *attr, struct nlattr **tb,
		 struct netlink_ext_ack *extack)
{
	const struct mroce_tunable *t;
	const char *name;

	if (nla_parse_nested(tb, METAROCE_TUNABLE_A_MAX_ATTR, attr,
			     mroce_nl_tunable_policy, extack))
		return NULL;
	if (!tb[METAROCE_TUNABLE_A_NAME]) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "tunable name missing");
		return NULL;
	}
	name = nla_data(tb[METAROCE_TUNABLE_A_NAME]);
	t = mroce_tunable_find(name);
	if (!t) {
		NL_SET_ERR_MSG_FMT(extack, "unknown tunable %s", name);
		NL_SET_BAD_ATTR(extack, tb[METAROCE_TUNABLE_A_NAME]);
	}
	return t;
}

static int mroce_nl_tunable_get_doit(struct sk_buff *skb,
				     struct genl_info *info)
{
	struct nlattr *tb[METAROCE_TUNABLE_A_MAX_ATTR + 1];
	const struct mroce_tunable *t;
	struct sk_buff *msg;
	void *hdr;

	if (GENL_REQ_ATTR_CHECK(info, METAROCE_A_TUNABLE))
		return -EINVAL;
	t = mroce_nl_tunable(info->attrs[METAROCE_A_TUNABLE], tb, info->extack);
	if (!t)
		return tb[METAROCE_TUNABLE_A_NAME] ? -ENOENT : -EINVAL;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_iput(msg, info);
	if (!hdr || mroce_nl_put_tunable(msg, t)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int mroce_nl_tunable_get_dumpit(struct sk_buff *skb,
				       struct netlink_callback *cb)
{
	struct mroce_nl_dump *d = mroce_nl_dump(cb);
	void *hdr;

	for (; d->pos < mroce_num_tunables; d->pos++) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &mroce_nl_family,
				  NLM_F_MULTI, METAROCE_CMD_TUNABLE_GET);
		if (!hdr)
			break;
		if (mroce_nl_put_tunable(skb, mroce_tunables[d->pos])) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
	}
	return skb->len;
}

/*
 * Check (set false) or apply (set true) every NAME=VALUE of the request.
 * The check pass finds every error before anything changes.
 */
static int mroce_nl_tunables_walk(struct genl_info *info, bool set)
{
	struct nlattr *tb[METAROCE_TUNABLE_A_MAX_ATTR + 1];
	const struct mroce_tunable *t;
	struct nlattr *cur;
	int rem, n = 0;
	u32 v;

	nla_for_each_nested(cur, info->attrs[METAROCE_A_TUNABLES], rem) {
		t = mroce_nl_tunable(cur, tb, info->extack);
		if (!t)
			return tb[METAROCE_TUNABLE_A_NAME] ? -ENOENT : -EINVAL;
		if (!tb[METAROCE_TUNABLE_A_VALUE]) {
			NL_SET_ERR_MSG_FMT(info->extack, "no value for %s",
					   t->name);
			NL_SET_BAD_ATTR(info->extack, cur);
			return -EINVAL;
		}
		v = nla_get_u32(tb[METAROCE_TUNABLE_A_VALUE]);
		if (!mroce_tunable_valid(t, v)) {
			NL_SET_ERR_MSG_FMT(info->extack,
					   "%s: %u is out of range %u to %u",
					   t->name, v, t->lo, t->hi);
			NL_SET_BAD_ATTR(info->extack,
					tb[METAROCE_TUNABLE_A_VALUE]);
			return -EINVAL;
		}
		if (set && mroce_tunable_set(t, v))
			return -EINVAL;	/* checked just before */
		n++;
	}
	if (!n) {
		NL_SET_ERR_MSG(info->extack, "no tunable to set");
		return -EINVAL;
	}
	return 0;
}

/* Runs under genl_mutex (not parallel_ops): no SET interleaves. */
static int mroce_nl_tunable_set_doit(struct sk_buff *skb,
				     struct genl_info *info)
{
	int err;

	if (GENL_REQ_ATTR_CHECK(info, METAROCE_A_TUNABLES))
		return -EINVAL;
	err = mroce_nl_tunables_walk(info, false);
	if (err)
		return err;
	return mroce_nl_tunables_walk(info, true);
}

/* --- PLANE_ADD, PLANE_DEL -------------------------------------------- */

static int mroce_nl_plane(struct genl_info *info, bool add)
{
	struct nlattr *ifattr = info->attrs[METAROCE_A_IFNAME];
	struct net *net = genl_info_net(info);
	netdevice_tracker tracker;
	struct net_device *ndev;
	struct mroce_dev *mdev;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, METAROCE_A_DEV_NAME) ||
	    GENL_REQ_ATTR_CHECK(info, METAROCE_A_IFNAME))
		return -EINVAL;
	mdev = mroce_nl_dev_attr(net, info->attrs[METAROCE_A_DEV_NAME],
				 info->extack);
	if (!mdev)
		return -ENODEV;
	ndev = netdev_get_by_name(net, nla_data(ifattr), &tracker, GFP_KERNEL);
	if (!ndev) {
		NL_SET_ERR_MSG_FMT(info->extack,
				   "no network device %s in this network namespace",
				   (const char *)nla_data(ifattr));
		NL_SET_BAD_ATTR(info->extack, ifattr);
		err = -ENODEV;
		goto out;
	}
	if (add)
		err = mroce_plane_add(mdev, ndev, info->extack);
	else
		err = mroce_plane_del(mdev, ndev, info->extack);
	netdev_put(ndev, &tracker);
out:
	ib_device_put(&mdev->ibdev);
	return err;
}

static int mroce_nl_plane_add_doit(struct sk_buff *skb, struct genl_info *info)
{
	return mroce_nl_plane(info, true);
}

static int mroce_nl_plane_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	return mroce_nl_plane(info, false);
}

/* --- The family ------------------------------------------------------ */

static int mroce_nl_dump_start(struct netlink_callback *cb)
{
	return mroce_nl_dev_filter(cb);
}

static const struct genl_ops mroce_nl_ops[] = {
	{
		.cmd = METAROCE_CMD_DEV_GET,
		.doit = mroce_nl_dev_get_doit,
		.start = mroce_nl_dump_start,
		.dumpit = mroce_nl_dev_get_dumpit,
	},
	{
		.cmd = METAROCE_CMD_CONN_GET,
		.start = mroce_nl_conn_start,
		.dumpit = mroce_nl_conn_get_dumpit,
		.done = mroce_nl_conn_done,
		/* CIDs, entropies and addresses: for administrators only. */
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = METAROCE_CMD_TUNABLE_GET,
		.doit = mroce_nl_tunable_get_doit,
		.dumpit = mroce_nl_tunable_get_dumpit,
	},
	{
		.cmd = METAROCE_CMD_TUNABLE_SET,
		.doit = mroce_nl_tunable_set_doit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = METAROCE_CMD_PLANE_ADD,
		.doit = mroce_nl_plane_add_doit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = METAROCE_CMD_PLANE_DEL,
		.doit = mroce_nl_plane_del_doit,
		.flags = GENL_ADMIN_PERM,
	},
};

static struct genl_family mroce_nl_family __ro_after_init = {
	.name = METAROCE_GENL_NAME,
	.version = METAROCE_GENL_VERSION,
	.maxattr = METAROCE_A_MAX,
	.policy = mroce_nl_policy,
	.netnsok = true,
	.module = THIS_MODULE,
	.ops = mroce_nl_ops,
	.n_ops = ARRAY_SIZE(mroce_nl_ops),
	.resv_start_op = METAROCE_CMD_MAX + 1,	/* strict for every command */
};

int mroce_nl_init(void)
{
	return genl_register_family(&mroce_nl_family);
}

void mroce_nl_exit(void)
{
	genl_unregister_family(&mroce_nl_family);
}
