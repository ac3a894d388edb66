/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The reliable transport: connections (one per peer), paths under them and
 * streams (RC QPs) above them (spec 6 to 11).
 *
 * Locking: everything of a connection, its paths, and the transport state
 * of every stream on it, is under conn->lock (a BH lock).  Packets built
 * under the lock are queued on a list and sent after it is dropped.
 *
 * This header holds the types the roles share.  Each role's functions are
 * declared in the header named after its file (conn.h, conn_tx.h,
 * lifecycle.h, close.h, reset.h, path.h, loss.h, cc.h, rxpath.h, rc_req.h,
 * rc_resp.h, rdctx.h, segwin.h, sync.h): a file includes the headers of
 * the roles it calls, so its include list is its dependency list.
 */
#ifndef MROCE_TRANSPORT_H
#define MROCE_TRANSPORT_H

#include <crypto/utils.h>
#include <linux/bitmap.h>
#include <linux/hrtimer.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "rate.h"
#include "wire.h"

struct mroce_dev;
struct mroce_qp;

#define MROCE_TX_WINDOW		256	/* PSNs in flight on a path: the SACK span */
/*
 * A path's in-flight records are kept in page-sized chunks, allocated on
 * their own: one 32 KiB block would be an order-4 atomic allocation, which
 * a fragmented long-running host fails.
 */
#define MROCE_WIN_CHUNK		32	/* records per chunk: 4 KiB */
#define MROCE_WIN_CHUNKS	(MROCE_TX_WINDOW / MROCE_WIN_CHUNK)
#define MROCE_PROBES		4	/* probes a path remembers (spec 7.6) */
#define MROCE_SEG_WIN_SHIFT	11
#define MROCE_SEG_WIN		BIT(MROCE_SEG_WIN_SHIFT)
#define MROCE_MAX_PATHS		64	/* sender paths of a connection */
#define MROCE_MAX_RX_PATHS	64	/* our Max Rx Paths (spec 5.5.12) */
#define MROCE_MTU_OVERHEAD	124	/* spec 4.6 */
#define MROCE_OLD_PORTS		16	/* abandoned entropies remembered */
#define MROCE_MAX_BACKOFF	16	/* RTO doublings; 2^16 x rto_min > rto_max */

/* Tunables (spec 17), module parameters in tunables.c. */
extern unsigned int mroce_tx_batch_pkts;
extern unsigned int mroce_ack_coalesce_pkts;
extern unsigned int mroce_ack_coalesce_us;
extern unsigned int mroce_reo_wnd_min_us;
extern unsigned int mroce_reo_persist_ms;
extern unsigned int mroce_pto_min_us;
extern unsigned int mroce_rto_initial_us;
extern unsigned int mroce_rto_min_us;
extern unsigned int mroce_rto_max_us;
extern unsigned int mroce_paths_per_plane;
extern unsigned int mroce_min_active_paths;
extern unsigned int mroce_reorder_thresh;
extern unsigned int mroce_suspect_probes;
extern unsigned int mroce_probe_max_attempts;
extern unsigned int mroce_failed_probe_interval_ms;
extern unsigned int mroce_loss_window_pkts;
extern unsigned int mroce_path_loss_thresh_pct;
extern unsigned int mroce_init_cwnd_pkts;
extern unsigned int mroce_cwnd_min_pkts;
extern unsigned int mroce_max_cwnd_pkts;
extern unsigned int mroce_ai_pkts;
extern unsigned int mroce_dctcp_g_shift;
extern unsigned int mroce_pace_burst_pkts;
extern unsigned int mroce_loss_is_congestion;
extern unsigned int mroce_ecn;
extern unsigned int mroce_rx_capacity_mbps;
extern unsigned int mroce_rx_target_util_pct;
extern unsigned int mroce_hint_active_us;
extern unsigned int mroce_hint_interval_us;
extern unsigned int mroce_hint_ttl_ms;
extern unsigned int mroce_sport_min;
extern unsigned int mroce_sport_max;
extern unsigned int mroce_conn_idle_timeout_s;
extern unsigned int mroce_rx_msg_slots;
extern unsigned int mroce_conn_dead_timeout_s;
extern unsigned int mroce_tombstone_ms;
extern unsigned int mroce_reset_rate_limit;
extern unsigned int mroce_dscp;
extern unsigned int mroce_ctrl_dscp;
extern unsigned int mroce_hint;
extern unsigned int mroce_connect_retries;
extern unsigned int mroce_half_open_timeout_ms;
extern unsigned int mroce_not_ready_wait_us;
extern unsigned int mroce_max_conns;
extern unsigned int mroce_max_half_open;
extern unsigned int mroce_max_conns_per_peer;
extern unsigned int mroce_conn_rate_limit;
extern unsigned int mroce_probe_reply_rate;
extern unsigned int mroce_nak_rate;
extern unsigned int mroce_ctx_queue_mem_mb;

/* Serial number arithmetic (spec 2.3): a - b as a signed distance. */
static inline s32 mroce_seq_diff(u32 a, u32 b)
{
	return (s32)(a - b);
}

struct mroce_skb_cb {
	__be16 sport;		/* entropy; 0: the handshake's */
	u8 plane;		/* the plane it goes out on (or came in on) */
	bool batch_crc;		/* its trailer is in place (mroce_xmit_batch) */
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

/*
 * What a sequenced packet carries: enough to build it again.  A
 * STREAM_CLOSE has no qp (the QP may be gone): sqpn names the local QP,
 * rkey holds the first word of the SCX and inv_rkey its Failed SSN.
 */
struct mroce_txrec {
	struct mroce_qp *qp;	/* the stream; holds a reference; or NULL */
	u32 sqpn;		/* STREAM_CLOSE: the local QPN */
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
	u32 charge;		/* IP bytes, counted in the path's bytes in flight */
	bool live;		/* sent and not yet acknowledged nor declared lost */
	bool resent;		/* declared lost and its content sent again */
	u8 tries;		/* transmissions of this content so far */
	ktime_t sent;
};

/* Content declared lost, waiting for a path to carry it again (spec 9.3). */
struct mroce_retx {
	struct list_head list;
	struct mroce_txrec rec;	/* holds a reference on rec.qp */
	u8 tries;
	u8 from;		/* the path that lost it */
};

enum mroce_path_state {
	MROCE_PATH_ACTIVE,
	MROCE_PATH_SUSPECT,
	MROCE_PATH_PROBING,
	MROCE_PATH_FAILED,
};

/* The sender side of a path (spec 7, 9, 12). */
struct mroce_path {
	u8 id;
	u8 state;		/* enum mroce_path_state */
	u8 plane;		/* fixed for the path's life (MRC-PATH-003) */
	bool removed;		/* its plane was removed: FAILED for good */
	__be16 sport;		/* entropy */
	u32 next_psn;
	u32 plw;		/* lowest PSN not yet resolved */
	u32 live;		/* packets in flight */
	u32 bif;		/* bytes in flight */
	/* loss detection (spec 9.2) */
	u32 high_acked;		/* highest PSN acknowledged */
	ktime_t reo_at;		/* reorder timer; 0: not armed */
	ktime_t reo_seen;	/* the path last proved to reorder; 0: never */
	u8 reo_mult;		/* reo_wnd multiplier while it reorders, 1-4 */
	ktime_t rto_from;	/* the RTO runs from the later of send and progress */
	ktime_t tlp_at;		/* tail loss probe sent; 0: none this period */
	/* RTT (spec 7.4) */
	u32 srtt_us;
	u32 rttvar_us;
	u32 min_rtt_us;		/* of the current entropy, once it has a sample */
	u32 rto_us;		/* base RTO */
	u8 backoff;		/* RTO doublings, 0 to MROCE_MAX_BACKOFF */
	bool min_rtt_old;	/* min_rtt_us is the last entropy's */
	/* probing (spec 7.5, 7.6) */
	u8 probes_out;		/* unanswered probes on this entropy */
	u8 entropies;		/* entropies tried while PROBING */
	u32 probe_id;		/* the last probe sent */
	u32 probe_base;		/* the first probe on this entropy */
	ktime_t probe_at;	/* when the last probe left */
	struct mroce_probe_rec {	/* the last probes, by id % MROCE_PROBES */
		u32 id;
		u32 psn;	/* next_psn when it left */
		ktime_t at;
	} probes[MROCE_PROBES];
	ktime_t state_at;	/* when the path entered its state */
	u16 old_ports[MROCE_OLD_PORTS];
	u8 old_idx;
	/* loss rate on the current entropy (spec 7.7) */
	u32 ent_sent;
	u32 win_sent;
	u32 win_lost;
	u32 loss_pct;		/* of the last full window */
	/* congestion control (spec 12.2) */
	u32 cwnd;		/* bytes */
	u32 ssthresh;
	u32 alpha;		/* DCTCP alpha, 1 << 16 = 1.0 */
	u32 ack_ce;		/* highest CE / Rx Count the peer reported */
	u32 ack_rx;
	bool ack_seen;
	/*
	 * Rx Count growth less the PSNs found acknowledged while live, since
	 * the first ACK: arrivals of packets declared lost before they came.
	 */
	u32 rx_late;
	u32 spurious;		/* of those, already counted */
	u32 round_end;
	u32 round_dce;
	u32 round_drx;
	bool round_cut;		/* the window shrank in this round */
	bool ce_round;		/* CE rose in this round ... */
	bool ce_prev_round;	/* ... or in the previous one */
	/* statistics (metaroce show) */
	u64 tx_pkts;
	u64 retx_pkts;
	u64 lost_pkts;
	u64 ce_marks;
	u32 reroutes;
	struct mroce_inflight *win[MROCE_WIN_CHUNKS];	/* mroce_slot() */
};

/* The receiver side of a peer's path (spec 7.3). */
struct mroce_rxpath {
	u32 cum;		/* all PSNs up to cum are resolved */
	u32 high;		/* highest PSN received */
	u32 ce_count;
	u32 rx_count;
	u32 ce_acked;		/* CE Count in the last ACK for the path */
	ktime_t high_at;	/* arrival of high: the ACK Delay */
	ktime_t ack_due;	/* a coalesced ACK is due; 0: none (8.2) */
	u16 unacked;		/* NEW packets since the last ACK */
	bool ack_now;		/* the packet in hand needs an ACK now */
	bool last_ce;		/* the previous committed packet was CE */
	bool reordered;		/* a NEW packet came below high since the last ACK */
	bool sr_more;		/* Stream Records left after its last ACK */
	u8 reply_plane;		/* where a coalesced ACK goes: the plane */
	__be16 reply_sport;	/* and entropy of the latest packet */
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
	bool bound;		/* SRQ: rwqe holds the receive taken for it */
	struct mroce_recv_wqe *rwqe;	/* SRQ, receive-consuming: in t's memory */
	DECLARE_BITMAP(segs, MROCE_SEG_WIN);	/* segment seg_base + i */
};

/* A detached stream remembered for tombstone_ms (spec 6.5.5). */
struct mroce_stomb {
	u32 lqpn;
	u32 pqpn;
	ktime_t until;
	ktime_t nak_at;			/* last NAK STREAM_CLOSED sent */
};

struct mroce_conn {
	struct list_head list;		/* mdev->conns, RCU */
	struct hlist_node prehs_node;	/* mdev->prehs_conns, RCU */
	struct rcu_work free_rwork;	/* the last reference is gone */
	struct work_struct reap_work;	/* the tombstone expired */
	struct mroce_dev *mdev;
	spinlock_t lock;		/* the connection and its streams */
	refcount_t ref;			/* mdev->conns and temporary users */
	enum mroce_conn_state state;
	bool reap_queued;		/* reap_work queued (once) */
	bool unlisted;			/* off mdev->conns (conns_lock) */
	u8 close_tries;			/* CONN_CLOSE REQUESTs sent */
	ktime_t idle_at;		/* idle reclaim (6.6); 0: streams */
	ktime_t close_at;		/* CLOSING: resend the REQUEST */
	ktime_t tomb_at;		/* TOMBSTONE: release the CID */
	ktime_t inactive_at;		/* no path seen ACTIVE since (6.8) */
	ktime_t cr_at;			/* last CONNECT on CONNECT_REQUIRED */
	ktime_t cack_at;		/* last CONNECT_ACK resent (C9) */
	ktime_t restart_until;		/* restart check: fail if unanswered */
	ktime_t restart_next;		/* restart check: next PROBE; 0: none */
	u8 restart_probes;		/* restart check: PROBEs sent */
	struct mroce_stomb stombs[MROCE_STOMBS];
	u8 stomb_next;
	bool initiator;
	bool half_open;			/* made by a CONNECT, unconfirmed (6.4) */
	ktime_t confirm_next;		/* next PROBE for a local stream (6.4) */
	bool hints;			/* we advertised HINT (12.4) */
	bool peer_atomic;		/* the peer's CX has ATOMIC (10.5) */
	ktime_t half_open_until;
	struct mroce_rate_window probe_rl;	/* PROBE_REPLYs sent */
	struct mroce_rate_window nak_rl;	/* NAKs sent */
	union ib_gid local;		/* our address */
	union ib_gid peer;		/* the peer's address */
	u32 local_cid;
	u64 local_token;
	u32 peer_cid;
	u64 peer_token;
	u64 peer_epoch;
	__be64 peer_guid;
	u8 css_shift;			/* connection segment size: 256 << shift */
	u8 connect_tries;
	u32 ack_seq;
	u32 streams;			/* attached QPs */
	struct hrtimer timer;		/* handshake, paths, pacing, RNR */
	ktime_t wake_at;		/* extra wakeup asked for; 0: none */
	ktime_t stream_due;		/* no stream timer before; 0: none */
	ktime_t hs_at;			/* handshake retry; 0: none */
	__be16 hs_sport;		/* entropy of handshake packets */
	u8 peer_max_paths;		/* the peer's Max Rx Paths */
	u16 peer_max_ack_delay;		/* us, from the peer's CX (6.3.7) */
	u16 max_ack_delay;		/* us, ours: ack_coalesce_us at creation */
	u32 rx_slots;			/* our Rx Message Slots (CX), fixed */
	u8 peer_seg_win_shift;		/* the peer's Seg Win Shift (10.1.2) */
	u32 peer_slots;			/* the peer's: our messages in flight ... */
	u32 msgs_out;			/* ... at most (MRC-ORD-013) */
	bool ack_now;			/* the packet in hand needs an ACK (8.2) */
	ktime_t ack_due;		/* earliest coalesced ACK due; 0: none */
	u8 npeer_addrs;			/* the peer's plane addresses (CX) */
	union ib_gid peer_addrs[MROCE_MAX_PLANES];
	u8 planes_paired;		/* bit i: plane i has addresses */
	u8 planes_small;		/* bit i: plane i's MTU fell below CSS */
	union ib_gid laddr[MROCE_MAX_PLANES];	/* per plane: ours ... */
	union ib_gid raddr[MROCE_MAX_PLANES];	/* ... and the peer's */
	u8 npaths;
	u8 last_path;			/* spraying: the last path used */
	u8 path_run;			/* new packets in a row on it */
	struct mroce_path *paths[MROCE_MAX_PATHS];
	struct list_head retxq;		/* struct mroce_retx, oldest first */
	u32 nretx;
	/* congestion control of the connection (spec 12.3, 12.4) */
	u32 hint;			/* peer's rate hint, Mb/s; 0: none */
	ktime_t hint_at;
	u32 hint_seq;			/* ACK Sequence the hint came with */
	bool hint_seen;
	u64 tokens;			/* pacing bucket, bytes << 10 */
	ktime_t tokens_at;
	u32 pace_rate;			/* bytes per ms; 0: unlimited */
	bool backlog;			/* more ready than allowed: BKLG */
	/* receiver side */
	struct mroce_rxpath *rxpaths[MROCE_MAX_RX_PATHS];	/* by Path ID */
	u64 rx_window_bytes;		/* sequenced bytes in this hint window */
	u64 rx_rate_bytes;		/* ... in the previous window */
	ktime_t rx_window_at;
	ktime_t rx_last_at;
	bool rx_bklg;			/* BKLG seen in the current window */
	bool rx_bklg_prev;
	bool rx_fresh;			/* newly active: hint recomputed now */
	struct xarray trackers;		/* (qpn << 32 | ssn) index: see conn.c */
	u32 ntrackers;
	/* a freed tracker kept for the next message: none allocated per one */
	struct mroce_tracker *spare_tracker;
	struct list_head wait_qps;	/* streams waiting for window room */
	struct list_head slot_waiters;	/* ... for a message slot (ORD-013) */
	struct list_head streams_list;	/* every attached stream */
	struct list_head sr_pending;	/* streams with a record to report */
	u32 sr_unsent;			/* of those, records not sent yet */
	/* a path last acknowledged a new PSN, or a Stream Record advanced */
	ktime_t progress_at;
	struct sk_buff_head txq;	/* built, in PSN order, to send */
	unsigned long tx_busy;		/* bit 0: a context is sending txq */
	struct work_struct tx_work;	/* sends txq when softirq gave up */
	int tx_cpu;			/* the CPU that sent last, or -1 */
	u32 tx_qtail;			/* its backlog tail after that */
};

/* Per-RC-QP transport state (a stream), under conn->lock. */
/*
 * The segment window of the message a stream is sending (spec 10.1.2,
 * segwin.c): its SSN, its lowest segment not delivered yet, and which
 * segments from there on are (bit seg % MROCE_SEG_WIN).
 */
struct mroce_segwin {
	u32 ssn;
	u32 base;
	DECLARE_BITMAP(done, MROCE_SEG_WIN);
};

/* A responder's READ or ATOMIC context (rdctx.c); left 0: free. */
#define MROCE_RD_CTX	32	/* 2 * MROCE_MAX_RD_ATOMIC */
struct mroce_rdctx {
	u32 ssn;
	u32 left;			/* response packets not delivered */
};

struct mroce_stream {
	struct mroce_conn *conn;
	struct list_head wait_entry;	/* on wait_qps or slot_waiters */
	struct list_head conn_entry;	/* on conn->streams_list */
	struct list_head sr_entry;	/* on conn->sr_pending */
	u8 sr_left;			/* ACKs still to carry the record */
	bool sr_sync;			/* the next record answers a SYNC */
	bool credit_blocked;		/* last record: no receive posted */
	u8 rx_path;			/* our path of its latest request */
	u8 sync_backoff;
	u8 retries;			/* retry timer expiries without progress */
	ktime_t sync_at;		/* SYNC timer; 0: not armed */
	ktime_t retry_at;		/* retry timer (spec 9.5.2); 0: off */
	/* requester */
	u32 next_ssn;
	u32 next_msn;
	u32 send_idx;			/* next SQ shadow index to segment */
	u32 send_off;			/* its bytes already sent */
	u32 peer_completed;		/* peer's Completed SSN for us */
	u32 started_ssn;		/* newest message whose first packet left */
	unsigned long rnr_until;	/* jiffies: paused by an RNR NAK */
	u32 rnr_ssn;			/* the message that NAK was for */
	ktime_t nr_first;		/* first of consecutive NOT_READYs */
	u8 nr_count;			/* how many of them */
	u8 rnr_left;
	u8 retry_left;
	struct mroce_segwin req_win;	/* of the request being sent */
	bool credit_mode;		/* the peer sends CREDIT records */
	u32 msn_limit;			/* ... and its latest MSN Limit */
	ktime_t credit_at;		/* last credit update or probe */
	/* responder */
	u32 completed_ssn;
	u32 recv_msn;			/* MSN of the oldest posted receive */
	u32 rnr_nak_ssn;		/* last message NAKed RNR ... */
	unsigned long rnr_nak_until;	/* ... and until when not again */
	struct mroce_segwin resp_win;	/* of the READ response being sent */
	struct mroce_rdctx rd_ctx[MROCE_RD_CTX];
	u32 atomic_ssn[16];		/* atomic result cache */
	u64 atomic_orig[16];
	/* failure and close (spec 6.5.4) */
	bool close_sent;		/* our STREAM_CLOSE went out */
	bool peer_closed;		/* detached by the peer or a failure */
	unsigned long gone_at;		/* jiffies: then fail what is left */
	u8 fatal_code;			/* the fatal NAK we sent, 0: none */
	u8 fatal_detail;
	u32 fatal_ssn;
	ktime_t nak_at;			/* last NAK to the failed stream */
};

/* Put st on a waiting list of its connection, unless it waits already. */
static inline void mroce_stream_wait(struct mroce_stream *st,
				     struct list_head *list)
{
	if (list_empty(&st->wait_entry))
		list_add_tail(&st->wait_entry, list);
}

#endif /* MROCE_TRANSPORT_H */
