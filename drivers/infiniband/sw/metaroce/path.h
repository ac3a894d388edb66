/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sender side of a path (spec 7, 9, 12) and what it carries: the
 * records of sequenced packets in flight and of content waiting to be
 * sent again; path.c's states, probes, the choice of path and resends.
 * Under conn->lock.
 */
#ifndef MROCE_PATH_H
#define MROCE_PATH_H

#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/skbuff.h>

#include "wire.h"

struct mroce_conn;
struct mroce_qp;

#define MROCE_TX_WINDOW		256	/* PSNs in flight on a path: the SACK span */
/*
 * A path's in-flight records are kept in page-sized chunks, allocated on
 * their own (one 32 KiB block would be an order-4 atomic allocation, which
 * a fragmented long-running host fails) and only while the path is in use
 * (txwin.c).
 */
#define MROCE_WIN_CHUNK		32	/* records per chunk: 4 KiB */
#define MROCE_WIN_CHUNKS	(MROCE_TX_WINDOW / MROCE_WIN_CHUNK)
#define MROCE_PROBES		4	/* probes a path remembers (spec 7.6) */
#define MROCE_OLD_PORTS		16	/* abandoned entropies remembered */
#define MROCE_MAX_BACKOFF	16	/* RTO doublings; 2^16 x rto_min > rto_max */

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
	struct mroce_inflight *win[MROCE_WIN_CHUNKS];	/* or NULL: txwin.c */
	u8 win_chunks;		/* of win[] allocated */
	ktime_t win_at;		/* the last allocation of one */
};

int mroce_paths_create(struct mroce_conn *conn);
void mroce_path_confirm(struct mroce_conn *conn, struct sk_buff_head *q);
u32 mroce_path_check_alive(struct mroce_conn *conn, struct sk_buff_head *q);
void mroce_paths_free(struct mroce_conn *conn);
bool mroce_path_has_room(struct mroce_conn *conn);
void mroce_path_send(struct mroce_conn *conn, const struct mroce_txrec *rec,
		     struct sk_buff_head *q);
void mroce_path_timeout(struct mroce_conn *conn, ktime_t now,
			struct sk_buff_head *q);
ktime_t mroce_path_next_event(struct mroce_conn *conn);
void mroce_path_drop_qp(struct mroce_conn *conn, struct mroce_qp *qp);
bool mroce_path_rx_probe_reply(struct mroce_conn *conn, struct sk_buff *skb,
			       struct sk_buff_head *q);
void mroce_paths_plane_down(struct mroce_conn *conn, int plane, bool removed,
			    struct sk_buff_head *q);
void mroce_paths_plane_up(struct mroce_conn *conn, int plane,
			  struct sk_buff_head *q);
int mroce_paths_add_plane(struct mroce_conn *conn, int plane, bool probing,
			  struct sk_buff_head *q);
__be16 mroce_pick_sport(const struct mroce_conn *conn,
			const struct mroce_path *path);
u32 mroce_mpb(const struct mroce_conn *conn);
u32 mroce_charge(const struct mroce_conn *conn, const struct mroce_txrec *rec);
void mroce_path_resend(struct mroce_conn *conn, const struct mroce_txrec *rec,
		       u8 tries, u8 from, struct sk_buff_head *q);
void mroce_retx_flush(struct mroce_conn *conn, struct sk_buff_head *q);
void mroce_retx_drop_qp(struct mroce_conn *conn, struct mroce_qp *qp);

#endif /* MROCE_PATH_H */
