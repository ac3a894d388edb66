/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers for the packets of the transport: serial numbers, the control
 * block the transport keeps in an skb, where a received packet's payload
 * is, and constant-time token checks.
 */
#ifndef MROCE_PKT_H
#define MROCE_PKT_H

#include <crypto/utils.h>
#include <linux/skbuff.h>
#include <linux/udp.h>

#include "wire.h"

#define MROCE_MTU_OVERHEAD	124	/* spec 4.6 */

/*
 * What a packet type is (spec 5.4): one row per type byte in mroce_ptypes[]
 * (pkt.c); 0 for a type the spec does not define.
 */
struct mroce_ptype {
	u8 flags;		/* MROCE_PT_* */
	u8 ext_len;		/* sequenced: bytes of its SX and extensions */
	u8 access;		/* IB_ACCESS_REMOTE_* its target needs */
};

#define MROCE_PT_CONN		BIT(0)	/* for the connection layer */
#define MROCE_PT_SEQ		BIT(1)	/* sequenced, with a stream header */
#define MROCE_PT_RECV		BIT(2)	/* consumes a receive WQE */
#define MROCE_PT_RESP		BIT(3)	/* answered by READ_RESP/ATOMIC_RESP */
#define MROCE_PT_DATAGRAM	BIT(4)	/* a UD datagram (spec 11) */
#define MROCE_PT_REPLY		BIT(5)	/* READ_RESP, ATOMIC_RESP */

extern const struct mroce_ptype mroce_ptypes[256];

static inline bool mroce_ptype_is(u8 type, u8 flag)
{
	return mroce_ptypes[type].flags & flag;
}

/* Stream packets: sequenced, with a stream header (spec 5.4). */
static inline bool mroce_is_sequenced(u8 type)
{
	return mroce_ptype_is(type, MROCE_PT_SEQ);
}

/* Sent with dscp, not ctrl_dscp: sequenced packets and datagrams (4.2.1). */
static inline bool mroce_is_data_class(u8 type)
{
	return mroce_ptype_is(type, MROCE_PT_SEQ | MROCE_PT_DATAGRAM);
}

/* Bytes of a sequenced packet's stream header and extensions (5.5). */
static inline u32 mroce_ext_len(u8 type)
{
	return mroce_ptypes[type].ext_len;
}

/* Serial number arithmetic (spec 2.3): a - b as a signed distance. */
static inline s32 mroce_seq_diff(u32 a, u32 b)
{
	return (s32)(a - b);
}

struct mroce_skb_cb {
	__be16 sport;		/* entropy; 0: the handshake's */
	u8 plane;		/* the plane it goes out on (or came in on) */
	bool batch_crc;		/* its trailer is in place (mroce_xmit_batch) */
	bool carry;		/* its AKX is filled when committed (8.6) */
	u8 carry_id;		/* for that Path ID of the peer */
};

/*
 * Is the token a packet carries (wire) the token we hold (mine)?  In
 * constant time, so that timing tells an attacker nothing about how much
 * of a guess was right (MRC-SEC-004).
 */
static inline bool mroce_token_eq(u64 mine, __be64 wire)
{
	__be64 be = cpu_to_be64(mine);

	return !crypto_memneq(&be, &wire, sizeof(be));
}

static inline struct mroce_skb_cb *mroce_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct mroce_skb_cb) > sizeof(skb->cb));
	return (struct mroce_skb_cb *)skb->cb;
}

/*
 * The payload of a received SEND, WRITE or READ_RESP: behind its headers,
 * or, for a datagram of a batch, where the batch put it (rx.c
 * mroce_rx_pull()).
 */
static inline void *mroce_rx_payload(const struct sk_buff *skb)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;

	if (skb_is_nonlinear(skb))
		return skb_frag_address(&skb_shinfo(skb)->frags[0]);
	return skb->data + bth->hdr_len * 4;
}

/* Make skb a reply to in: the same entropy (spec 4.3). */
static inline void mroce_reply_to(struct sk_buff *skb,
				  const struct sk_buff *in)
{
	mroce_cb(skb)->sport = udp_hdr(in)->source;
	mroce_cb(skb)->plane = ((const struct mroce_skb_cb *)in->cb)->plane;
}

#endif /* MROCE_PKT_H */
