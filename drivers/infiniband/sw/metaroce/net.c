// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UDP encapsulation: one pair of kernel UDP sockets (IPv4, IPv6) bound to
 * the MetaRoCE port in every network namespace, so that a device talks
 * through the namespace of its netdev; and the transmit path that adds the
 * CRC32C trailer, routes and sends a MetaRoCE packet.
 */
#include <linux/hash.h>
#include <linux/module.h>
#include <net/ip6_route.h>
#include <net/ipv6_stubs.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/udp_tunnel.h>

#include "counters.h"
#include "crc.h"
#include "mroce.h"
#include "net.h"
#include "pkt.h"
#include "tunables.h"
#include "txpool.h"
#include "wire.h"

unsigned short mroce_udp_port = MROCE_UDP_PORT_DEFAULT;
module_param_named(udp_port, mroce_udp_port, ushort, 0444);
MODULE_PARM_DESC(udp_port, "UDP destination port of MetaRoCE traffic (default 4793)");

struct mroce_net {
	struct socket __rcu *sk4;
	struct socket __rcu *sk6;
};

static unsigned int mroce_net_id;

static struct socket *mroce_sock_open(struct net *net, bool ipv6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = mroce_udp_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(mroce_udp_port),
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		cfg.family = AF_INET6;
		cfg.ipv6_v6only = 1;
		cfg.use_udp6_tx_checksums = 1;
		cfg.use_udp6_rx_checksums = 1;
	} else {
		cfg.family = AF_INET;
		cfg.use_udp_checksums = 1;
	}
	err = udp_sock_create(net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(net, sock, &tcfg);
	/*
	 * A tunnel socket asks for checksum conversion, which makes the stack
	 * checksum every segment of a received UDP GSO batch (spec 4.8) in
	 * software when it cuts the batch (udp_rcv_segment()), only to treat
	 * the segments as verified afterwards.  Our packets carry their own
	 * CRC32C, and a batch's UDP checksum was checked where it was built
	 * (GRO) or never needed (a local sender's CHECKSUM_PARTIAL).
	 */
	inet_dec_convert_csum(sock->sk);
	return sock;
}

static int __net_init mroce_net_setup(struct net *net)
{
	struct mroce_net *mn = net_generic(net, mroce_net_id);
	struct socket *sock;

	sock = mroce_sock_open(net, false);
	if (IS_ERR(sock)) {
		pr_err("metaroce: cannot bind UDP port %u (IPv4): %ld\n",
		       mroce_udp_port, PTR_ERR(sock));
		return PTR_ERR(sock);
	}
	rcu_assign_pointer(mn->sk4, sock);

	if (!ipv6_mod_enabled())
		return 0;
	sock = mroce_sock_open(net, true);
	if (IS_ERR(sock)) {
		/* IPv6 may be disabled in this namespace: IPv4 still works. */
		pr_info("metaroce: no IPv6 socket on UDP port %u: %ld\n",
			mroce_udp_port, PTR_ERR(sock));
		return 0;
	}
	rcu_assign_pointer(mn->sk6, sock);
	return 0;
}

static void __net_exit mroce_net_teardown(struct net *net)
{
	struct mroce_net *mn = net_generic(net, mroce_net_id);
	struct socket *sk4 = rtnl_dereference(mn->sk4);
	struct socket *sk6 = rtnl_dereference(mn->sk6);

	RCU_INIT_POINTER(mn->sk4, NULL);
	RCU_INIT_POINTER(mn->sk6, NULL);
	synchronize_net();
	if (sk4)
		udp_tunnel_sock_release(sk4);
	if (sk6)
		udp_tunnel_sock_release(sk6);
}

static void __net_exit mroce_net_exit_batch(struct list_head *net_list)
{
	struct net *net;

	rtnl_lock();
	list_for_each_entry(net, net_list, exit_list)
		mroce_net_teardown(net);
	rtnl_unlock();
}

static struct pernet_operations mroce_net_ops = {
	.init = mroce_net_setup,
	.exit_batch = mroce_net_exit_batch,
	.id = &mroce_net_id,
	.size = sizeof(struct mroce_net),
};

int mroce_net_init(void)
{
	return register_pernet_subsys(&mroce_net_ops);
}

void mroce_net_exit(void)
{
	unregister_pernet_subsys(&mroce_net_ops);
}

/*
 * An skb for a packet of len bytes, trailer not included.  Without sleep,
 * its head is a page fragment (up to a 4 KiB segment's packet), which a
 * batch then takes as is (see mroce_batch_ref()): in bottom-half context
 * from this CPU's pool of recycled pages (txpool.c), else from the page
 * fragment cache; a caller that may sleep, or a failed fragment, gets a
 * kmalloc head.  Not __netdev_alloc_skb(): a receive allocator, it may
 * take the reserves kept for swap traffic.
 */
struct sk_buff *mroce_alloc_skb(unsigned int len, gfp_t gfp)
{
	unsigned int size = MROCE_SKB_HEADROOM + len + MROCE_CRC_LEN;
	unsigned int frag = SKB_HEAD_ALIGN(size);
	struct sk_buff *skb = NULL;
	void *data;

	if (!gfpflags_allow_blocking(gfp))
		skb = mroce_txpool_skb(frag);
	if (!skb && !gfpflags_allow_blocking(gfp) &&
	    frag <= PAGE_FRAG_CACHE_MAX_SIZE) {
		data = netdev_alloc_frag(frag);
		if (data) {
			skb = build_skb(data, frag);
			if (!skb)
				skb_free_frag(data);
		}
	}
	if (!skb)
		skb = alloc_skb(size, gfp);
	if (skb)
		skb_reserve(skb, MROCE_SKB_HEADROOM);
	return skb;
}

/*
 * The traffic class of skb: dscp for sequenced packets and datagrams,
 * ctrl_dscp for control packets (MRC-ENC-004); ECT(0) unless the ecn
 * tunable is 0 (MRC-ENC-005).
 */
static u8 mroce_tos(const struct sk_buff *skb)
{
	u8 type = ((const struct mroce_bth *)skb->data)->type;
	u8 dscp = mroce_is_data_class(type) ? READ_ONCE(mroce_dscp) :
					      READ_ONCE(mroce_ctrl_dscp);

	return dscp << 2 | (READ_ONCE(mroce_ecn) ? MROCE_ECN_ECT0 : 0);
}

static int mroce_xmit4(struct net *net, struct socket *sock,
		       struct sk_buff *skb, __be32 saddr, __be32 daddr,
		       __be16 sport)
{
	struct flowi4 fl4 = {
		.saddr = saddr,
		.daddr = daddr,
		.flowi4_proto = IPPROTO_UDP,
		.fl4_sport = sport,
		.fl4_dport = htons(mroce_udp_port),
	};
	struct rtable *rt;

	rt = ip_route_output_key(net, &fl4);
	if (IS_ERR(rt))
		return PTR_ERR(rt);
	udp_tunnel_xmit_skb(rt, sock->sk, skb, fl4.saddr, fl4.daddr,
			    mroce_tos(skb), ip4_dst_hoplimit(&rt->dst),
			    htons(IP_DF), sport, htons(mroce_udp_port),
			    false, false);
	return 0;
}

/* The IPv6 Flow Label of an entropy: fixed while it is (MRC-ENC-010). */
static __be32 mroce_flow_label(__be16 sport)
{
	return htonl(hash_32(ntohs(sport), 20) ?: 1);
}

static int mroce_xmit6(struct net *net, struct socket *sock,
		       struct sk_buff *skb, const struct in6_addr *saddr,
		       const struct in6_addr *daddr, __be16 sport)
{
	struct flowi6 fl6 = {
		.saddr = *saddr,
		.daddr = *daddr,
		.flowi6_proto = IPPROTO_UDP,
		.fl6_sport = sport,
		.fl6_dport = htons(mroce_udp_port),
	};
	struct dst_entry *dst;

	dst = ipv6_stub->ipv6_dst_lookup_flow(net, sock->sk, &fl6, NULL);
	if (IS_ERR(dst))
		return PTR_ERR(dst);
	/* No tunnel netdev: a NULL dev keeps the underlay's stats. */
	udp_tunnel6_xmit_skb(dst, sock->sk, skb, NULL, &fl6.saddr,
			     &fl6.daddr, mroce_tos(skb),
			     ip6_dst_hoplimit(dst), mroce_flow_label(sport), sport,
			     htons(mroce_udp_port), false);
	return 0;
}

/*
 * Route skb (a MetaRoCE packet or a GSO batch of them, trailers in place)
 * and send it out of the namespace of mdev's netdev.  Consumes skb.
 */
static int mroce_send(struct mroce_dev *mdev, struct sk_buff *skb,
		      const union ib_gid *sgid, const union ib_gid *dgid,
		      __be16 sport)
{
	struct in6_addr *s6 = (struct in6_addr *)sgid->raw;
	struct in6_addr *d6 = (struct in6_addr *)dgid->raw;
	bool v4 = ipv6_addr_v4mapped(s6) && ipv6_addr_v4mapped(d6);
	struct net *net = dev_net(mdev->ndev);
	struct mroce_net *mn = net_generic(net, mroce_net_id);
	struct socket *sock;
	int err;

	rcu_read_lock();
	sock = v4 ? rcu_dereference(mn->sk4) : rcu_dereference(mn->sk6);
	if (!sock)
		err = -ENETUNREACH;
	else if (v4)
		err = mroce_xmit4(net, sock, skb, s6->s6_addr32[3],
				  d6->s6_addr32[3], sport);
	else if (ipv6_addr_v4mapped(s6) || ipv6_addr_v4mapped(d6))
		err = -EAFNOSUPPORT;
	else
		err = mroce_xmit6(net, sock, skb, s6, d6, sport);
	rcu_read_unlock();

	if (err)
		kfree_skb(skb);
	return err;
}

/*
 * Send one MetaRoCE packet.  skb holds the headers and payload, linear, at
 * skb->data, with MROCE_SKB_HEADROOM in front and room for the trailer.
 * The packet goes out of the namespace of mdev's netdev.  Consumes skb.
 */
int mroce_xmit(struct mroce_dev *mdev, struct sk_buff *skb,
	       const union ib_gid *sgid, const union ib_gid *dgid,
	       __be16 sport)
{
	unsigned int len;
	u32 crc;
	int err;

	/* Over the headers and payload only: computed before the put. */
	crc = mroce_crc(skb->data, skb->len);
	put_unaligned_be32(crc, skb_put(skb, MROCE_CRC_LEN));
	len = skb->len;

	err = mroce_send(mdev, skb, sgid, dgid, sport);
	if (err)
		return err;
	mroce_count(mdev, TX_PACKETS);
	mroce_count_add(mdev, TX_BYTES, len);
	return 0;
}

/* Where mroce_xmit_batch() copies the next bytes of a batch. */
struct mroce_frag_writer {
	struct sk_buff *skb;
	struct page *page;
	u32 off;		/* in page */
};

/* Append n bytes from src to w->skb's page fragments: order-0 pages. */
static int mroce_frag_put(struct mroce_frag_writer *w, const void *src, u32 n)
{
	struct skb_shared_info *si = skb_shinfo(w->skb);
	u32 k;

	while (n) {
		if (!w->page || w->off == PAGE_SIZE) {
			if (si->nr_frags == MAX_SKB_FRAGS)
				return -EMSGSIZE;
			w->page = alloc_page(GFP_ATOMIC | __GFP_NOWARN);
			if (!w->page)
				return -ENOMEM;
			w->off = 0;
			skb_fill_page_desc(w->skb, si->nr_frags, w->page, 0, 0);
			w->skb->truesize += PAGE_SIZE;
		}
		k = min_t(u32, n, PAGE_SIZE - w->off);
		memcpy(page_address(w->page) + w->off, src, k);
		skb_frag_size_add(&si->frags[si->nr_frags - 1], k);
		w->skb->len += k;
		w->skb->data_len += k;
		w->off += k;
		src += k;
		n -= k;
	}
	return 0;
}

/*
 * Append skb's packet to batch w->skb without a copy: its trailer crc
 * goes in place behind it, and the batch gets a fragment that references
 * its head's page.  Only for a linear packet whose head is a page
 * fragment with room for the trailer; false otherwise.
 */
static bool mroce_batch_ref(struct mroce_frag_writer *w, struct sk_buff *skb,
			    const u8 *crc)
{
	struct skb_shared_info *si = skb_shinfo(w->skb);
	struct page *page;

	if (!skb->head_frag || skb_is_nonlinear(skb) ||
	    skb_tailroom(skb) < MROCE_CRC_LEN || si->nr_frags == MAX_SKB_FRAGS)
		return false;
	skb_put_data(skb, crc, MROCE_CRC_LEN);
	mroce_cb(skb)->batch_crc = true;
	page = virt_to_head_page(skb->data);
	get_page(page);
	skb_fill_page_desc(w->skb, si->nr_frags, page,
			   skb->data - (u8 *)page_address(page), skb->len);
	w->skb->len += skb->len;
	w->skb->data_len += skb->len;
	w->skb->truesize += skb->len;
	w->page = NULL;		/* the next copy starts a page of its own */
	return true;
}

/*
 * Send the packets of run, all of one path (the same addresses, entropy
 * and traffic class) and of one length, as one UDP GSO skb (spec 4.8):
 * each packet with its own headers and trailer, back to back in page
 * fragments, gso_size the length of one.  A packet whose head is a page
 * fragment joins as a reference to it, any other as a copy.  The device,
 * or the stack in front of a device that cannot, cuts it into the same
 * datagrams mroce_xmit() would have sent one by one.  Consumes the
 * packets.
 */
int mroce_xmit_batch(struct mroce_dev *mdev, struct sk_buff_head *run,
		     const union ib_gid *sgid, const union ib_gid *dgid,
		     __be16 sport)
{
	struct mroce_frag_writer w = {};
	u32 n = skb_queue_len(run), len;
	struct sk_buff *skb, *gso;
	u8 crc[MROCE_CRC_LEN];
	int err = 0;

	gso = n > 1 ? alloc_skb(MROCE_SKB_HEADROOM, GFP_ATOMIC) : NULL;
	if (!gso)
		goto one_by_one;
	skb_reserve(gso, MROCE_SKB_HEADROOM);
	w.skb = gso;
	len = skb_peek(run)->len + MROCE_CRC_LEN;
	skb_queue_walk(run, skb) {
		put_unaligned_be32(mroce_crc(skb->data, skb->len), crc);
		if (mroce_batch_ref(&w, skb, crc))
			continue;
		err = mroce_frag_put(&w, skb->data, skb->len) ?:
		      mroce_frag_put(&w, crc, MROCE_CRC_LEN);
		if (err) {
			kfree_skb(gso);
			goto one_by_one;
		}
	}
	skb_shinfo(gso)->gso_size = len;
	skb_shinfo(gso)->gso_type = SKB_GSO_UDP_L4;
	skb_shinfo(gso)->gso_segs = n;
	/* udp_set_csum() leaves the checksum of a GSO skb to the device. */
	gso->ip_summed = CHECKSUM_PARTIAL;
	gso->csum_start = skb_headroom(gso) - sizeof(struct udphdr);
	gso->csum_offset = offsetof(struct udphdr, check);
	len = gso->len;
	while ((skb = __skb_dequeue(run)))
		consume_skb(skb);

	err = mroce_send(mdev, gso, sgid, dgid, sport);
	if (err)
		return err;
	mroce_count_add(mdev, TX_PACKETS, n);
	mroce_count_add(mdev, TX_BYTES, len);
	mroce_count(mdev, TX_GSO_BATCHES);
	return 0;

one_by_one:
	while ((skb = __skb_dequeue(run))) {
		if (mroce_cb(skb)->batch_crc) {	/* mroce_xmit() puts it */
			__skb_trim(skb, skb->len - MROCE_CRC_LEN);
			mroce_cb(skb)->batch_crc = false;
		}
		err = mroce_xmit(mdev, skb, sgid, dgid, sport) ?: err;
	}
	return err;
}
