/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The reliable transport: connections (one per peer), paths under them and
 * streams (RC QPs) above them (spec 6 to 11).
 *
 * Locking: everything of a connection, its paths, and the transport state
 * of every stream on it, is under conn->lock (a BH lock).  Packets built
 * under the lock are queued on a list and sent after it is dropped.
 */
#ifndef MROCE_TRANSPORT_H
#define MROCE_TRANSPORT_H

#include <linux/bitmap.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <linux/udp.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "wire.h"

struct mroce_dev;
struct mroce_qp;

#define MROCE_TX_WINDOW		256	/* PSNs in flight on a path: the SACK span */
#define MROCE_SEG_WIN_SHIFT	11
#define MROCE_SEG_WIN		BIT(MROCE_SEG_WIN_SHIFT)
#define MROCE_RX_MSG_SLOTS	1024
/* Retransmission timeout bounds (spec 9.4, 17), module parameters. */
extern unsigned int mroce_rto_initial_us;
extern unsigned int mroce_rto_min_us;
extern unsigned int mroce_rto_max_us;
#define MROCE_CONNECT_RETRIES	6
#define MROCE_INIT_CWND		64

/* Serial number arithmetic (spec 2.3): a - b as a signed distance. */
static inline s32 mroce_seq_diff(u32 a, u32 b)
{
	return (s32)(a - b);
}

struct mroce_skb_cb {
	__be16 sport;		/* reply entropy; 0: the path's */
};

static inline struct mroce_skb_cb *mroce_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct mroce_skb_cb) > sizeof(skb->cb));
	return (struct mroce_skb_cb *)skb->cb;
}

/* Make skb a reply to in: the same entropy (spec 4.3). */
static inline void mroce_reply_to(struct sk_buff *skb,
				  const struct sk_buff *in)
{
	mroce_cb(skb)->sport = udp_hdr(in)->source;
}

enum mroce_conn_state {
	MROCE_CONN_CONNECTING,
	MROCE_CONN_ESTABLISHED,
	MROCE_CONN_FAILED,
};

/* What a sequenced packet carries: enough to build it again. */
struct mroce_txrec {
	struct mroce_qp *qp;	/* the stream; holds a reference */
	u8 type;
	u8 segshift;
	u16 flags;		/* SE, LAST */
	u32 dqpn;
	u32 ssn;
	u32 msn;
	u32 msg_len;
	u32 offset;
	u32 plen;
	u64 va;			/* RX/ATX virtual address */
	u32 rkey;
	__be32 imm;
	u32 inv_rkey;
	u64 swap_add;		/* ATOMIC; ATOMIC_RESP: the original value */
	u64 compare;
	u32 wqe_idx;		/* requester data: index in the SQ shadow */
	u64 src_va;		/* READ_RESP: responder memory to read */
	u32 src_rkey;
};

/* A sent packet waiting for its path-level acknowledgment. */
struct mroce_inflight {
	struct mroce_txrec rec;
	u32 psn;
	bool live;		/* sent and not yet acknowledged nor resent */
	u8 tries;		/* transmissions of this content so far */
	ktime_t sent;
};

/* The sender side of a path (spec 7). */
struct mroce_path {
	u8 id;
	__be16 sport;		/* entropy */
	u32 next_psn;
	u32 plw;		/* lowest PSN not yet resolved */
	u32 live;		/* packets in flight */
	u32 cwnd;		/* packets */
	u32 srtt_us;
	u32 rttvar_us;
	u32 rto_us;
	u8 backoff;
	struct mroce_inflight win[MROCE_TX_WINDOW];
};

/* The receiver side of a peer's path (spec 7.3). */
struct mroce_rxpath {
	bool valid;
	u32 cum;		/* all PSNs up to cum are resolved */
	u32 ce_count;
	u32 rx_count;
	DECLARE_BITMAP(sack, MROCE_SACK_BITS);	/* bit i: PSN cum + 1 + i */
};

/* A request message being placed at the responder (spec 10.1). */
struct mroce_tracker {
	u32 ssn;
	u8 type;
	u8 segshift;
	u16 flags;
	u32 msn;
	u32 msg_len;
	u64 va;
	u32 rkey;
	__be32 imm;
	u32 inv_rkey;
	u64 swap_add;
	u64 compare;
	u32 nseg;
	u32 seg_base;		/* lowest segment not placed */
	u32 placed;		/* segments placed */
	bool complete;
	bool executed;		/* READ/ATOMIC: responses queued */
	bool failed;
	DECLARE_BITMAP(segs, MROCE_SEG_WIN);	/* segment seg_base + i */
};

struct mroce_conn {
	struct list_head list;		/* mdev->conns, RCU */
	struct rcu_head rcu;
	struct mroce_dev *mdev;
	spinlock_t lock;		/* the connection and its streams */
	refcount_t ref;
	enum mroce_conn_state state;
	bool initiator;
	union ib_gid local;		/* our address */
	union ib_gid peer;		/* the peer's address */
	u32 local_cid;
	u64 local_token;
	u32 peer_cid;
	u64 peer_token;
	u64 peer_epoch;
	u8 css_shift;			/* connection segment size: 256 << shift */
	u8 connect_tries;
	u32 ack_seq;
	u32 streams;			/* attached QPs */
	struct timer_list timer;	/* handshake and retransmission */
	struct mroce_path path;		/* one path in this first cut */
	struct mroce_rxpath rxpath;	/* the peer's path 0 */
	struct xarray trackers;		/* (qpn << 32 | ssn) index: see conn.c */
	u32 ntrackers;
	struct list_head wait_qps;	/* streams waiting for window room */
	struct sk_buff_head txq;	/* built, in PSN order, to send */
	unsigned long tx_busy;		/* bit 0: a context is sending txq */
};

/* Per-RC-QP transport state (a stream), under conn->lock. */
struct mroce_stream {
	struct mroce_conn *conn;
	struct list_head wait_entry;	/* on conn->wait_qps */
	/* requester */
	u32 next_ssn;
	u32 next_msn;
	u32 send_idx;			/* next SQ shadow index to segment */
	u32 send_off;			/* its bytes already sent */
	u32 peer_completed;		/* peer's Completed SSN for us */
	unsigned long rnr_until;	/* jiffies: paused by an RNR NAK */
	u32 rnr_ssn;			/* the message that NAK was for */
	u8 rnr_left;
	u8 retry_left;
	/* responder */
	u32 completed_ssn;
	u32 recv_msn;			/* MSN of the oldest posted receive */
	u32 rnr_nak_ssn;		/* last message NAKed RNR ... */
	unsigned long rnr_nak_until;	/* ... and until when not again */
	u32 atomic_ssn[16];		/* atomic result cache */
	u64 atomic_orig[16];
};

/* conn.c */
int mroce_conn_attach(struct mroce_qp *qp);
void mroce_conn_detach(struct mroce_qp *qp);
void mroce_conn_rcv(struct mroce_dev *mdev, struct sk_buff *skb);
void mroce_conns_destroy(struct mroce_dev *mdev);
void mroce_conn_tx_commit(struct mroce_conn *conn, struct sk_buff_head *q);
void mroce_conn_xmit(struct mroce_conn *conn);
struct sk_buff *mroce_conn_alloc_pkt(struct mroce_conn *conn, u8 type,
				     u32 ext_len, u32 payload_len);
void mroce_conn_arm_timer(struct mroce_conn *conn);

/* path.c */
bool mroce_path_has_room(struct mroce_conn *conn);
void mroce_path_send(struct mroce_conn *conn, const struct mroce_txrec *rec,
		     struct sk_buff_head *q);
void mroce_path_rx_ack(struct mroce_conn *conn, struct sk_buff *skb,
		       struct sk_buff_head *q);
int mroce_rxpath_accept(struct mroce_conn *conn, const struct sk_buff *skb);
void mroce_send_ack(struct mroce_conn *conn, const struct sk_buff *in,
		    struct mroce_qp *qp, struct sk_buff_head *q);
void mroce_path_timeout(struct mroce_conn *conn, struct sk_buff_head *q);
void mroce_path_drop_qp(struct mroce_conn *conn, struct mroce_qp *qp);

/* rc_req.c */
void mroce_rc_send(struct mroce_qp *qp);
void mroce_rc_kick_waiters(struct mroce_conn *conn, struct sk_buff_head *q);
void mroce_rc_rx_sr(struct mroce_conn *conn, const struct mroce_sr *sr);
void mroce_rc_rx_nak(struct mroce_conn *conn, const struct mroce_nkx *nkx);
void mroce_rc_rx_response(struct mroce_conn *conn, struct mroce_qp *qp,
			  struct sk_buff *skb);
int mroce_rc_build_payload(struct mroce_conn *conn,
			   const struct mroce_txrec *rec, void *buf);
void mroce_rc_stream_reset(struct mroce_qp *qp);
bool mroce_rc_still_needed(struct mroce_conn *conn,
			   const struct mroce_txrec *rec);
void mroce_rc_fill_sr(struct mroce_qp *qp, struct mroce_sr *sr);
void mroce_rc_fail_all(struct mroce_conn *conn, struct mroce_qp *qp);
void mroce_rc_resp_resume(struct mroce_conn *conn, struct mroce_qp *qp,
			  struct sk_buff_head *q);
u32 mroce_ext_len(u8 type);
void mroce_rc_fail(struct mroce_conn *conn, struct mroce_qp *qp, u32 ssn,
		   enum ib_wc_status status);

/* rc_resp.c */
void mroce_rc_rx_request(struct mroce_conn *conn, struct mroce_qp *qp,
			 struct sk_buff *skb, struct sk_buff_head *q);
void mroce_send_nak(struct mroce_conn *conn, const struct sk_buff *in,
		    u8 code, u8 detail, u32 param, struct sk_buff_head *q);
void mroce_trackers_drop_qp(struct mroce_conn *conn, u32 qpn);

#endif /* MROCE_TRANSPORT_H */
