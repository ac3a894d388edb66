// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive: the UDP socket hands every datagram for the MetaRoCE port here.
 * Steps 1 to 6 of spec 4.7 (length, version, length consistency, CRC32C,
 * type and header length) run before anything else looks at the packet;
 * every drop is counted by reason.
 */
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/inet_ecn.h>
#include <net/ipv6_stubs.h>
#include <net/udp.h>

#include "conn.h"
#include "crc.h"
#include "net.h"
#include "pkt.h"
#include "verbs.h"
#include "wire.h"

/* The device that owns the packet's destination address, referenced. */
static struct mroce_dev *mroce_rx_device(struct sock *sk, struct sk_buff *skb)
{
	struct net *net = sock_net(sk);
	struct net_device *ndev;

	if (skb->protocol == htons(ETH_P_IP))
		ndev = __ip_dev_find(net, ip_hdr(skb)->daddr, false);
	else if (ipv6_stub->ipv6_dev_find)
		ndev = ipv6_stub->ipv6_dev_find(net, &ipv6_hdr(skb)->daddr,
						NULL);
	else
		ndev = NULL;
	return ndev ? mroce_find_by_netdev(ndev) : NULL;
}

/* Did the packet arrive with ECN CE?  (ECN counting, spec 12.) */
bool mroce_rx_ce(const struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return INET_ECN_is_ce(ip_hdr(skb)->tos);
	return INET_ECN_is_ce(ipv6_get_dsfield(ipv6_hdr(skb)));
}

/* Types whose payload the transport reads through mroce_rx_payload(). */
static bool mroce_rx_placed(u8 type)
{
	return (type >= MROCE_T_SEND && type <= MROCE_T_WRITE_IMM) ||
	       type == MROCE_T_READ_RESP;
}

/*
 * Make the headers of the packet at skb->data (after the UDP header)
 * linear.  A datagram of a batch that the stack cut (spec 4.8) keeps its
 * packet in one page fragment: for a type whose payload is placed, only
 * its headers are pulled and the payload stays where it is (see
 * mroce_rx_payload()); anything else is made linear.  False if the skb
 * cannot be.
 */
static bool mroce_rx_pull(struct sk_buff *skb)
{
	const struct mroce_bth *bth;
	u32 hdr;

	if (!skb_is_nonlinear(skb))
		return true;
	if (skb_has_frag_list(skb) || skb_shinfo(skb)->nr_frags != 1 ||
	    !skb_frags_readable(skb) ||
	    PageHighMem(skb_frag_page(&skb_shinfo(skb)->frags[0])) ||
	    !pskb_may_pull(skb, sizeof(*bth)))
		return !skb_linearize(skb);
	bth = (const struct mroce_bth *)skb->data;
	hdr = bth->hdr_len * 4;
	if (!mroce_rx_placed(bth->type) || hdr < sizeof(*bth) ||
	    hdr + MROCE_CRC_LEN > skb->len || !pskb_may_pull(skb, hdr) ||
	    skb_headlen(skb) != hdr)
		return !skb_linearize(skb);
	return true;
}

/*
 * Validate the framing of the MetaRoCE packet at skb->data (spec 4.7 steps
 * 1 to 5) and trim the CRC trailer.  The packet is linear, or its headers
 * are and the rest is in one page fragment (mroce_rx_pull()).  Returns the
 * counter to charge on error, or for a good packet -1 (linear) or
 * MROCE_CNT_RX_FRAG_PACKETS (its payload stays in the fragment).
 */
static int mroce_rx_check(struct sk_buff *skb)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	u32 len = skb->len, hdr, mac, crc;
	const u8 *rest;

	if (len < sizeof(*bth) + MROCE_CRC_LEN)
		return MROCE_CNT_DROP_BAD_HEADER;
	if (bth->ver_rsvd >> 4 != MROCE_VERSION)
		return MROCE_CNT_DROP_BAD_VERSION;
	hdr = bth->hdr_len * 4;
	mac = ntohs(bth->flags) & MROCE_F_MAC ? MROCE_MAC_LEN : 0;
	if (hdr < sizeof(*bth) ||
	    hdr + ntohs(bth->payload_len) + mac + MROCE_CRC_LEN != len)
		return MROCE_CNT_DROP_BAD_HEADER;
	if (!skb_is_nonlinear(skb)) {
		crc = get_unaligned_be32(skb->data + len - MROCE_CRC_LEN);
		if (mroce_crc(skb->data, len - MROCE_CRC_LEN) != crc)
			return MROCE_CNT_DROP_BAD_CRC;
		__skb_trim(skb, len - MROCE_CRC_LEN);
		return -1;
	}
	rest = skb_frag_address(&skb_shinfo(skb)->frags[0]);
	len = skb->data_len - MROCE_CRC_LEN;
	crc = get_unaligned_be32(rest + len);
	if (mroce_crc2(skb->data, hdr, rest, len) != crc)
		return MROCE_CNT_DROP_BAD_CRC;
	/* A clone (a packet tap's) keeps its fragment: pskb_trim() copies. */
	if (pskb_trim(skb, skb->len - MROCE_CRC_LEN))
		return MROCE_CNT_DROP_NO_RESOURCE;
	/* With no payload the fragment is gone: linear again. */
	return skb_is_nonlinear(skb) ? MROCE_CNT_RX_FRAG_PACKETS : -1;
}

/* UDP encap_rcv: called in softirq under RCU; always consumes skb. */
int mroce_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct mroce_dev *mdev;
	int bad;
	u8 type;

	mdev = mroce_rx_device(sk, skb);
	if (!mdev)
		goto free;
	if (!pskb_may_pull(skb, sizeof(struct udphdr))) {
		mroce_count(mdev, DROP_BAD_HEADER);
		goto put;
	}
	__skb_pull(skb, sizeof(struct udphdr));
	if (!mroce_rx_pull(skb)) {
		mroce_count(mdev, DROP_BAD_HEADER);
		goto put;
	}

	bad = mroce_rx_check(skb);
	if (bad >= 0) {
		this_cpu_inc(mdev->stats->c[bad]);
		if (bad != MROCE_CNT_RX_FRAG_PACKETS)
			goto put;
	}
	if (mroce_rx_ce(skb))
		mroce_count(mdev, ECN_CE_RCVD);

	type = ((struct mroce_bth *)skb->data)->type;
	if (mroce_ptype_is(type, MROCE_PT_CONN)) {
		mroce_conn_rcv(mdev, skb);	/* consumes skb */
		ib_device_put(&mdev->ibdev);
		return 0;
	}
	if (!mroce_ptype_is(type, MROCE_PT_DATAGRAM)) {
		mroce_count(mdev, DROP_BAD_HEADER);
		goto put;
	}
	mroce_ud_rcv(mdev, skb);
	/* Taken by the transport (its own drops are counted there). */
	ib_device_put(&mdev->ibdev);
	consume_skb(skb);
	return 0;
put:
	ib_device_put(&mdev->ibdev);
free:
	kfree_skb(skb);
	return 0;
}
