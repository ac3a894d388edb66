/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The net layer: UDP encapsulation per network namespace (spec 4).
 */
#ifndef MROCE_NET_H
#define MROCE_NET_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

struct mroce_dev;

extern unsigned short mroce_udp_port;

/* Headroom for link, IP and UDP headers in front of a MetaRoCE packet. */
#define MROCE_SKB_HEADROOM	(LL_MAX_HEADER + 40 + 8)

int mroce_net_init(void);
void mroce_net_exit(void);

struct sk_buff *mroce_alloc_skb(unsigned int len, gfp_t gfp);
int mroce_xmit(struct mroce_dev *mdev, struct sk_buff *skb,
	       const union ib_gid *sgid, const union ib_gid *dgid,
	       __be16 sport);
int mroce_xmit_batch(struct mroce_dev *mdev, struct sk_buff_head *run,
		     const union ib_gid *sgid, const union ib_gid *dgid,
		     __be16 sport);

/*
 * Most bytes of MetaRoCE packets in one GSO skb: within one IP datagram
 * and, with the headers, below the 64 KiB GSO size most devices take.
 */
#define MROCE_GSO_MAX_BYTES	60000

/* rx.c */
int mroce_udp_encap_recv(struct sock *sk, struct sk_buff *skb);
bool mroce_rx_ce(const struct sk_buff *skb);

#endif /* MROCE_NET_H */
