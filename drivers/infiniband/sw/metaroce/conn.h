/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A connection: one per peer, with paths under it and streams (RC QPs)
 * above it (spec 6 to 11); conn.c's lookup, attach, receive dispatch,
 * timers and planes.
 *
 * Locking: everything of a connection, its paths (path.h, rxpath.h) and
 * the transport state of every stream on it (stream.h) is under conn->lock,
 * a BH lock, taken with mroce_conn_lock_bh() or mroce_conn_lock() (which
 * also give each hold one clock reading, mroce_conn_now()).  Packets built
 * under it are queued on a list and sent after it is dropped (conn_tx.c).
 * What is not under it says so at the field: the list links under
 * mdev->conns_lock, ref, and the transmit queue (tx.q's own lock,
 * tx.busy).  The connection's state is grouped by role:
 * what the handshake settled (cx), its life (life), the sending side (tx),
 * congestion control (cc), the receiving side (rx) and the streams on it
 * (streams).
 *
 * The roles' functions are declared in the header named after their file
 * (conn.h, conn_tx.h, lifecycle.h, close.h, reset.h, path.h, loss.h, cc.h,
 * rxpath.h, rc_req.h, rc_resp.h, rdctx.h, segwin.h, sync.h): a file
 * includes the headers of the roles it calls, so its include list is its
 * dependency list.
 */
#ifndef MROCE_CONN_H
#define MROCE_CONN_H

#include <linux/hrtimer.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "rate.h"
#include "rxsteer.h"
#include "wire.h"

struct mroce_dev;
struct mroce_path;
struct mroce_qp;
struct mroce_rxpath;
struct mroce_tracker;

#define MROCE_MAX_PATHS		64	/* sender paths of a connection */
#define MROCE_MAX_RX_PATHS	64	/* our Max Rx Paths (spec 5.5.12) */

/* Connection states (spec 6.2). */
enum mroce_conn_state {
	MROCE_CONN_CONNECTING,
	MROCE_CONN_ESTABLISHED,
	MROCE_CONN_CLOSING,
	MROCE_CONN_TOMBSTONE,
};

/* STREAM_CLOSE reasons (spec 5.5.15) and CONN_CLOSE ops (spec 5.5.14). */
#define MROCE_SC_DESTROYED	1
#define MROCE_SC_RESET		2
#define MROCE_SC_ERROR		3
#define MROCE_CC_REQUEST	1
#define MROCE_CC_ACCEPT		2
#define MROCE_CC_REFUSE		3
#define MROCE_CONN_CLOSE_TRIES	3	/* REQUEST and 2 resends (6.6) */
#define MROCE_STOMBS		16	/* stream tombstones per connection */

/* A detached stream remembered for tombstone_ms (spec 6.5.5). */
struct mroce_stomb {
	u32 lqpn;
	u32 pqpn;
	ktime_t until;
	ktime_t nak_at;			/* last NAK STREAM_CLOSED sent */
};

/*
 * What the handshake settled (spec 6.3): the peer's CX, our own offer, and
 * the addresses of both ends on every plane.  Fixed once ESTABLISHED but for
 * the plane pairing, which plane events change.
 */
struct mroce_conn_cx {
	u8 css_shift;			/* connection segment size: 256 << shift */
	bool hints;			/* we advertised HINT (12.4) */
	bool cack;			/* we advertised CACK (8.6) */
	bool peer_atomic;		/* the peer's CX has ATOMIC (10.5) */
	bool peer_cack;			/* the peer's CX has CACK (8.6) */
	u8 peer_max_paths;		/* the peer's Max Rx Paths */
	u16 peer_max_ack_delay;		/* us, from the peer's CX (6.3.7) */
	u16 max_ack_delay;		/* us, ours: ack_coalesce_us at creation */
	u32 rx_slots;			/* our Rx Message Slots (CX), fixed */
	u8 peer_seg_win_shift;		/* the peer's Seg Win Shift (10.1.2) */
	u32 peer_slots;			/* the peer's: our messages in flight */
	u8 npeer_addrs;			/* the peer's plane addresses (CX) */
	union ib_gid peer_addrs[MROCE_MAX_PLANES];
	u8 planes_paired;		/* bit i: plane i has addresses */
	u8 planes_small;		/* bit i: plane i's MTU fell below CSS */
	union ib_gid laddr[MROCE_MAX_PLANES];	/* per plane: ours ... */
	union ib_gid raddr[MROCE_MAX_PLANES];	/* ... and the peer's */
};

/*
 * The connection's life (spec 6.2 to 6.8; lifecycle.c, close.c, reset.c):
 * handshake retries, half-open and restart checks, idle reclaim, closing,
 * the tombstone, the dead-connection timer and the rate limits of what it
 * answers.
 */
struct mroce_conn_life {
	ktime_t hs_at;			/* handshake retry; 0: none */
	__be16 hs_sport;		/* entropy of handshake packets */
	u8 connect_tries;
	bool half_open;			/* made by a CONNECT, unconfirmed (6.4) */
	ktime_t half_open_until;
	ktime_t confirm_next;		/* next PROBE for a local stream (6.4) */
	ktime_t restart_until;		/* restart check: fail if unanswered */
	ktime_t restart_next;		/* restart check: next PROBE; 0: none */
	u8 restart_probes;		/* restart check: PROBEs sent */
	u8 close_tries;			/* CONN_CLOSE REQUESTs sent */
	ktime_t idle_at;		/* idle reclaim (6.6); 0: streams */
	ktime_t close_at;		/* CLOSING: resend the REQUEST */
	ktime_t tomb_at;		/* TOMBSTONE: release the CID */
	ktime_t inactive_at;		/* no path seen ACTIVE since (6.8) */
	/* a path last acknowledged a new PSN, or a Stream Record advanced */
	ktime_t progress_at;
	ktime_t cr_at;			/* last CONNECT on CONNECT_REQUIRED */
	ktime_t cack_at;		/* last CONNECT_ACK resent (C9) */
	struct mroce_stomb stombs[MROCE_STOMBS];
	u8 stomb_next;
	struct mroce_rate_window probe_rl;	/* PROBE_REPLYs sent */
	struct mroce_rate_window nak_rl;	/* NAKs sent */
};

/*
 * The sending side: the paths (path.h), content waiting to be sent again,
 * and the queue of built packets.  q, busy, work, cpu and qtail belong to
 * the transmit code (conn_tx.c): q has its own lock, busy is an atomic bit.
 */
struct mroce_conn_tx {
	u8 npaths;
	u8 last_path;			/* spraying: the last path used */
	u8 path_run;			/* new packets in a row on it */
	u8 room_path;			/* mroce_path_has_room()'s pick + 1 */
	struct mroce_path *paths[MROCE_MAX_PATHS];
	struct list_head retxq;		/* struct mroce_retx, oldest first */
	u32 nretx;
	u32 msgs_out;			/* at most cx.peer_slots (ORD-013) */
	struct sk_buff_head q;		/* built, in PSN order, to send */
	unsigned long busy;		/* bit 0: a context is sending q */
	struct work_struct work;	/* sends q when softirq gave up */
	int cpu;			/* the CPU that sent last, or -1 */
	u32 qtail;			/* its backlog tail after that */
};

/* Congestion control of the connection (spec 12.3, 12.4; cc.c). */
struct mroce_conn_cc {
	u32 hint;			/* peer's rate hint, Mb/s; 0: none */
	ktime_t hint_at;
	u32 hint_seq;			/* ACK Sequence the hint came with */
	bool hint_seen;
	u64 tokens;			/* pacing bucket, bytes << 10 */
	ktime_t tokens_at;
	u32 pace_rate;			/* bytes per ms; 0: unlimited */
	bool backlog;			/* more ready than allowed: BKLG */
};

/*
 * The receiving side: the peer's paths (rxpath.h), ACKs, the rate the
 * receiver measures for its hint, and the request messages in placement
 * (rc_resp.h).
 */
struct mroce_conn_rx {
	struct mroce_rxpath *paths[MROCE_MAX_RX_PATHS];	/* by Path ID */
	u32 ack_seq;
	bool ack_now;			/* the packet in hand needs an ACK (8.2) */
	ktime_t ack_due;		/* earliest coalesced ACK due; 0: none */
	/*
	 * Carried ACKs (8.6): the path whose packet is in hand, whose ACK
	 * a packet built meanwhile may carry (MROCE_NO_CARRY: none);
	 * whether one does; and how many packets in the queue being built
	 * carry an AKX to fill when it is committed (mroce_ack_fill_carried;
	 * a count that only says whether to look).
	 */
	u8 carry_for;
	bool carried;
	u16 carrying;
	unsigned long hinted_at;	/* jiffies: an ACK with a Rate Hint */
	u64 window_bytes;		/* sequenced bytes in this hint window */
	u64 rate_bytes;			/* ... in the previous window */
	ktime_t window_at;
	ktime_t last_at;
	bool bklg;			/* BKLG seen in the current window */
	bool bklg_prev;
	bool fresh;			/* newly active: hint recomputed now */
	struct xarray trackers;		/* (qpn << 32 | ssn) index: see conn.c */
	u32 ntrackers;
	/* a freed tracker kept for the next message: none allocated per one */
	struct mroce_tracker *spare_tracker;
};

/* The streams (RC QPs, stream.h) attached to the connection. */
struct mroce_conn_streams {
	u32 count;
	struct list_head list;		/* every attached stream */
	struct list_head wait;		/* streams waiting for window room */
	struct list_head slot_waiters;	/* ... for a message slot (ORD-013) */
	struct list_head sr_pending;	/* streams with a record to report */
	u32 sr_unsent;			/* of those, records not sent yet */
	ktime_t due;			/* no stream timer before; 0: none */
};

struct mroce_conn {
	struct list_head list;		/* mdev->conns, RCU */
	struct list_head addr_entry;	/* mdev->addr_conns (conns_lock) */
	struct hlist_node prehs_node;	/* mdev->prehs_conns, RCU */
	struct rcu_work free_rwork;	/* the last reference is gone */
	struct work_struct reap_work;	/* the tombstone expired */
	struct mroce_dev *mdev;
	spinlock_t lock;		/* the connection and its streams */
	refcount_t ref;			/* mdev->conns and temporary users */
	enum mroce_conn_state state;
	bool reap_queued;		/* reap_work queued (once) */
	bool unlisted;			/* off mdev->conns (conns_lock) */
	bool initiator;
	union ib_gid local;		/* our address */
	union ib_gid peer;		/* the peer's address */
	u32 local_cid;
	u64 local_token;
	u32 peer_cid;
	u64 peer_token;
	u64 peer_epoch;
	__be64 peer_guid;
	struct hrtimer timer;		/* handshake, paths, pacing, RNR */
	ktime_t timer_floor;		/* never armed before: see the timer */
	ktime_t wake_at;		/* extra wakeup asked for; 0: none */
	ktime_t clk;			/* this hold's clock reading; 0: none */
	struct mroce_conn_cx cx;
	struct mroce_conn_life life;
	struct mroce_conn_tx tx;
	struct mroce_conn_cc cc;
	struct mroce_conn_rx rx;
	struct mroce_conn_streams streams;
	struct mroce_conn_steer steer;
};

/*
 * Taking and releasing conn->lock.  A hold reads the clock once for what
 * it stamps, measures and arms (mroce_conn_now()): a small message took
 * about twenty clock reads in its two packets' bookkeeping, cheap with a
 * TSC but each an emulated device access where the clock is an HPET (as
 * in the test VMs).  Both ends of a hold forget the reading.
 */
static inline void mroce_conn_lock_bh(struct mroce_conn *conn)
	__acquires(&conn->lock)
{
	spin_lock_bh(&conn->lock);
	conn->clk = 0;
}

static inline void mroce_conn_unlock_bh(struct mroce_conn *conn)
	__releases(&conn->lock)
{
	conn->clk = 0;
	spin_unlock_bh(&conn->lock);
}

/* The same with bottom halves off already (softirq, the timer). */
static inline void mroce_conn_lock(struct mroce_conn *conn)
	__acquires(&conn->lock)
{
	spin_lock(&conn->lock);
	conn->clk = 0;
}

static inline void mroce_conn_unlock(struct mroce_conn *conn)
	__releases(&conn->lock)
{
	conn->clk = 0;
	spin_unlock(&conn->lock);
}

/* The time of this hold of conn->lock: read at its first use. */
static inline ktime_t mroce_conn_now(struct mroce_conn *conn)
{
	lockdep_assert_held(&conn->lock);
	if (!conn->clk)
		conn->clk = ktime_get();
	return conn->clk;
}

/* The time now, for a send time: read again, and the hold's from then on. */
static inline ktime_t mroce_conn_now_fresh(struct mroce_conn *conn)
{
	lockdep_assert_held(&conn->lock);
	conn->clk = ktime_get();
	return conn->clk;
}

int mroce_conn_attach(struct mroce_qp *qp);
void mroce_conn_detach(struct mroce_qp *qp, u8 reason);
void mroce_conn_rcv(struct mroce_dev *mdev, struct sk_buff *skb);
void mroce_conn_rcv_pkts(struct mroce_conn *conn, struct sk_buff_head *pkts);
struct sk_buff *mroce_conn_alloc_pkt(struct mroce_conn *conn, u8 type,
				     u32 ext_len, u32 payload_len);
void mroce_conn_arm_timer(struct mroce_conn *conn);
void mroce_conn_wake_at(struct mroce_conn *conn, ktime_t when);
void mroce_conn_pair_planes(struct mroce_conn *conn);
void mroce_conns_plane_event(struct mroce_dev *mdev, int plane, bool up,
			     bool removed);
void mroce_conns_plane_added(struct mroce_dev *mdev, int plane);
void mroce_conn_resend_connect(struct mroce_conn *conn, struct sk_buff_head *q);
bool mroce_conn_plane_usable(struct mroce_conn *conn, int plane);

#endif /* MROCE_CONN_H */
