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

#include "crc.h"
#include "net.h"
#include "transport.h"
#include "verbs.h"
#include "wire.h"
#include "conn.h"

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

/*
 * Validate the framing of the MetaRoCE packet at skb->data (spec 4.7 steps
 * 1 to 5) and trim the CRC trailer.  Returns the counter to charge on error,
 * or -1 when the packet is good.
 */
static int mroce_rx_check(struct sk_buff *skb)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	u32 len = skb->len, hdr, mac, crc;

	if (len < sizeof(*bth) + MROCE_CRC_LEN)
		return MROCE_CNT_DROP_BAD_HEADER;
	if (bth->ver_rsvd >> 4 != MROCE_VERSION)
		return MROCE_CNT_DROP_BAD_VERSION;
	hdr = bth->hdr_len * 4;
	mac = ntohs(bth->flags) & MROCE_F_MAC ? MROCE_MAC_LEN : 0;
	if (hdr < sizeof(*bth) ||
	    hdr + ntohs(bth->payload_len) + mac + MROCE_CRC_LEN != len)
		return MROCE_CNT_DROP_BAD_HEADER;
	crc = get_unaligned_be32(skb->data + len - MROCE_CRC_LEN);
	if (mroce_crc(skb->data, len - MROCE_CRC_LEN) != crc)
		return MROCE_CNT_DROP_BAD_CRC;
	__skb_trim(skb, len - MROCE_CRC_LEN);
	return -1;
}

/* UDP encap_rcv: called in softirq under RCU; always consumes skb. */
int mroce_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct mroce_dev *mdev;
	int bad;

	mdev = mroce_rx_device(sk, skb);
	if (!mdev)
		goto free;
	if (skb_linearize(skb) || skb->len < sizeof(struct udphdr)) {
		mroce_count(mdev, DROP_BAD_HEADER);
		goto put;
	}
	__skb_pull(skb, sizeof(struct udphdr));

	bad = mroce_rx_check(skb);
	if (bad >= 0) {
		this_cpu_inc(mdev->stats->c[bad]);
		goto put;
	}
	if (mroce_rx_ce(skb))
		mroce_count(mdev, ECN_CE_RCVD);

	switch (((struct mroce_bth *)skb->data)->type) {
	case MROCE_T_DATAGRAM:
		mroce_ud_rcv(mdev, skb);
		break;
	case MROCE_T_SEND ... MROCE_T_STREAM_CLOSE:
	case MROCE_T_ACK ... MROCE_T_SYNC:
	case MROCE_T_CONNECT ... MROCE_T_RESET:
		mroce_conn_rcv(mdev, skb);
		break;
	default:
		mroce_count(mdev, DROP_BAD_HEADER);
		goto put;
	}
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
