// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Congestion control (spec 12): a byte window per path with slow start,
 * DCTCP-style ECN response and additive increase coupled across the
 * connection's paths; losses shrink a window only when they look like
 * congestion; a token bucket paces the connection at min(window rate,
 * receiver's hint); and the receiver's max-min fair share of its inbound
 * capacity, returned in every ACK.
 */
#include <linux/log2.h>

#include "cc.h"
#include "conn.h"
#include "net.h"
#include "path.h"
#include "pkt.h"
#include "tunables.h"
#include "verbs.h"

#define MROCE_ALPHA_ONE		BIT(16)

static void mroce_cwnd_clamp(const struct mroce_conn *conn,
			     struct mroce_path *path)
{
	u32 mpb = mroce_mpb(conn);

	path->cwnd = clamp(path->cwnd, READ_ONCE(mroce_cwnd_min_pkts) * mpb,
			   READ_ONCE(mroce_max_cwnd_pkts) * mpb);
}

/* Transitions P1, P2 (spec 12.2.2). */
void mroce_cc_path_init(struct mroce_conn *conn, struct mroce_path *path)
{
	path->ssthresh = U32_MAX;
	path->alpha = MROCE_ALPHA_ONE;
	path->round_end = path->next_psn;
	mroce_cc_path_restart(conn, path);
}

/* Transitions P4, P6, P9: a fresh window, ssthresh and alpha kept. */
void mroce_cc_path_restart(struct mroce_conn *conn, struct mroce_path *path)
{
	path->cwnd = READ_ONCE(mroce_init_cwnd_pkts) * mroce_mpb(conn);
	mroce_cwnd_clamp(conn, path);
}

static void mroce_cwnd_cut(struct mroce_conn *conn, struct mroce_path *path)
{
	u64 cut = (u64)path->cwnd * path->alpha >> 17;	/* cwnd * alpha / 2 */

	path->cwnd -= cut;
	mroce_cwnd_clamp(conn, path);
	path->ssthresh = path->cwnd;
	path->round_cut = true;
	mroce_count(conn->mdev, CWND_REDUCTIONS_ECN);
}

static void mroce_round_start(struct mroce_path *path)
{
	path->round_end = path->next_psn;
	path->round_dce = 0;
	path->round_drx = 0;
	path->round_cut = false;
	path->ce_prev_round = path->ce_round;
	path->ce_round = false;
}

/* End of a round: update alpha and answer its marks (spec 12.2.3). */
static void mroce_round_end(struct mroce_conn *conn, struct mroce_path *path)
{
	u32 g = READ_ONCE(mroce_dctcp_g_shift), f = 0;

	if (path->round_drx)
		f = div_u64((u64)min(path->round_dce, path->round_drx) << 16,
			    path->round_drx);
	path->alpha = path->alpha - (path->alpha >> g) + (f >> g);
	if (path->round_dce && !path->round_cut && READ_ONCE(mroce_ecn))
		mroce_cwnd_cut(conn, path);
	mroce_round_start(path);
}

static u32 mroce_w_total(const struct mroce_conn *conn)
{
	u32 w = 0;
	int i;

	for (i = 0; i < conn->tx.npaths; i++)
		if (conn->tx.paths[i]->state == MROCE_PATH_ACTIVE)
			w += conn->tx.paths[i]->cwnd;
	return max(w, 1U);
}

/*
 * The pacing rate of the connection in bytes per ms, 0 for unlimited
 * (spec 12.3), and whether the hint limits it.
 */
static u32 mroce_pace_rate(struct mroce_conn *conn, bool *hint_limited)
{
	u64 rate = 0, plain = 0, hint = 0;
	struct mroce_path *p;
	int i;

	for (i = 0; i < conn->tx.npaths; i++) {
		p = conn->tx.paths[i];
		if (p->state != MROCE_PATH_ACTIVE || !p->srtt_us)
			continue;
		/* bytes per ms = cwnd * 1000 / srtt; gain 2 or 1.25 */
		plain += div_u64((u64)p->cwnd * 1000, p->srtt_us);
		rate += div_u64((u64)p->cwnd * (p->cwnd < p->ssthresh ? 2000 :
						1250), p->srtt_us);
	}
	if (conn->cc.hint &&
	    ktime_ms_delta(mroce_conn_now(conn), conn->cc.hint_at) <
	    READ_ONCE(mroce_hint_ttl_ms))
		hint = (u64)conn->cc.hint * 125;	/* Mb/s to bytes/ms */
	*hint_limited = hint && plain && hint < plain;
	if (hint && (!rate || hint < rate))
		rate = hint;
	return min_t(u64, rate, U32_MAX);
}

/* An ACK for path: grow or shrink its window (spec 12.2). */
void mroce_cc_on_ack(struct mroce_conn *conn, struct mroce_path *path,
		     u32 acked, u32 dce, u32 drx)
{
	bool hint_limited;
	u64 inc;

	path->round_dce += dce;
	path->round_drx += drx;
	if (dce && READ_ONCE(mroce_ecn)) {
		path->ce_round = true;
		if (path->cwnd < path->ssthresh && !path->round_cut) {
			/* The first mark ends slow start at once (12.2.2). */
			mroce_cwnd_cut(conn, path);
			mroce_round_start(path);
			path->ce_round = true;
			path->round_cut = true;
		}
	} else if (acked) {
		mroce_pace_rate(conn, &hint_limited);
		if (hint_limited) {
			mroce_count(conn->mdev, HINT_LIMITED);
		} else if (path->cwnd < path->ssthresh) {
			path->cwnd += acked;
		} else {
			inc = (u64)READ_ONCE(mroce_ai_pkts) * mroce_mpb(conn) *
			      acked;
			path->cwnd += div_u64(inc, mroce_w_total(conn));
		}
		mroce_cwnd_clamp(conn, path);
	}
	if (mroce_seq_diff(path->plw, path->round_end) >= 0)
		mroce_round_end(conn, path);
}

/* Packets of path were declared lost (spec 12.2.5). */
void mroce_cc_on_loss(struct mroce_conn *conn, struct mroce_path *path)
{
	if (path->round_cut)
		return;
	if (!path->ce_round && !path->ce_prev_round &&
	    !READ_ONCE(mroce_loss_is_congestion) && READ_ONCE(mroce_ecn))
		return;		/* a random loss says nothing of congestion */
	path->cwnd /= 2;
	mroce_cwnd_clamp(conn, path);
	path->ssthresh = path->cwnd;
	path->round_cut = true;
	mroce_count(conn->mdev, CWND_REDUCTIONS_LOSS);
}

/* Transition P3 (spec 12.2.5). */
void mroce_cc_on_rto(struct mroce_conn *conn, struct mroce_path *path)
{
	u32 mpb = mroce_mpb(conn);

	path->ssthresh = max(path->cwnd / 2, 2 * mpb);
	path->cwnd = READ_ONCE(mroce_cwnd_min_pkts) * mpb;
	mroce_cwnd_clamp(conn, path);
}

/* May path carry a packet of charge bytes now (MRC-CC-002)? */
bool mroce_cc_window_ok(const struct mroce_path *path, u32 charge)
{
	return !path->bif || path->bif + charge <= path->cwnd;
}

/*
 * The token bucket (spec 12.3): tokens in bytes << 10.  Returns whether a
 * packet of charge bytes may go now; if not, *retry_at says when it may.
 */
bool mroce_cc_pace_ok(struct mroce_conn *conn, u32 charge, ktime_t *retry_at)
{
	u64 burst = (u64)READ_ONCE(mroce_pace_burst_pkts) * mroce_mpb(conn)
		    << 10;
	ktime_t now = mroce_conn_now(conn);
	u64 need, wait_ns, elapsed_ns;
	bool hint_limited;
	u32 rate;

	rate = mroce_pace_rate(conn, &hint_limited);
	conn->cc.pace_rate = rate;
	if (!rate) {
		conn->cc.tokens = burst;
		conn->cc.tokens_at = now;
		return true;
	}
	/* bytes per ms << 10 is bytes << 10 per 10^6 ns */
	elapsed_ns = ktime_to_ns(ktime_sub(now, conn->cc.tokens_at));
	conn->cc.tokens += div_u64((u64)rate * elapsed_ns << 10, NSEC_PER_MSEC);
	conn->cc.tokens_at = now;
	if (conn->cc.tokens >= burst) {
		conn->cc.tokens = burst;
		return true;
	}
	need = (u64)charge << 10;
	if (conn->cc.tokens >= need)
		return true;
	wait_ns = div_u64((need - conn->cc.tokens) * NSEC_PER_MSEC, rate) >> 10;
	*retry_at = ktime_add_ns(now, wait_ns + 1);
	return false;
}

void mroce_cc_pace_charge(struct mroce_conn *conn, u32 charge)
{
	u64 c = (u64)charge << 10;

	conn->cc.tokens = conn->cc.tokens > c ? conn->cc.tokens - c : 0;
}

/*
 * The 16-bit floating-point rate hint of a share of kbps kb/s (spec
 * 12.4.3), rounded down.  Exact for every share that is a whole number of
 * kb/s, as C_t = capacity * rx_target_util_pct / 100 always is
 * (MRC-CC-020).
 */
u16 mroce_hint_encode(u64 kbps)
{
	u64 mbps = div_u64(kbps, 1000);
	u32 e, m;

	if (!mbps)
		return 1 << 11;
	e = ilog2(mbps);
	if (e + 1 > 31)
		return 0xffff;	/* above the largest encodable rate */
	m = div64_u64(kbps << 11, 1000ULL << e) - 2048;
	return (e + 1) << 11 | (m & 0x7ff);
}

/* Mb/s, rounded down to 32 bits; 0: no hint. */
u32 mroce_hint_decode(u16 hint)
{
	u32 e = hint >> 11, m = hint & 0x7ff;

	if (!e)
		return 0;
	if (e - 1 >= 32)
		return U32_MAX;
	return min_t(u64, ((u64)(2048 + m) << (e - 1)) >> 11, U32_MAX);
}

/* Adopt the rate hint of the newest ACK-class packet (MRC-CC-021). */
void mroce_cc_take_hint(struct mroce_conn *conn, u16 hint, u32 ack_seq)
{
	if (conn->cc.hint_seen &&
	    mroce_seq_diff(ack_seq, conn->cc.hint_seq) <= 0)
		return;
	conn->cc.hint_seen = true;
	conn->cc.hint_seq = ack_seq;
	conn->cc.hint = mroce_hint_decode(hint);
	conn->cc.hint_at = mroce_conn_now(conn);
}

/*
 * Max-min water filling over the device's active connections (12.4.2), of
 * a capacity of cap kb/s: the share in kb/s.
 */
static u64 mroce_fair_share(struct mroce_dev *mdev, u64 cap, ktime_t now,
			    struct mroce_conn *fresh)
{
	u32 win = READ_ONCE(mroce_hint_active_us), n = 0, left, i;
	u64 target = cap, r[64], s;
	bool b[64], any;
	struct mroce_conn *c;

	list_for_each_entry_rcu(c, &mdev->conns, list) {
		if (n == ARRAY_SIZE(r))
			break;
		if (c != fresh &&
		    ktime_us_delta(now, READ_ONCE(c->rx.last_at)) > win)
			continue;
		/* bytes per window of win us, in kb/s */
		r[n] = div_u64(READ_ONCE(c->rx.rate_bytes) * 8000, win);
		b[n] = c == fresh || READ_ONCE(c->rx.bklg) ||
		       READ_ONCE(c->rx.bklg_prev);
		n++;
	}
	left = n;
	while (left) {
		s = div_u64(cap, left);
		any = false;
		for (i = 0; i < n; i++) {
			if (b[i] || r[i] >= s)
				continue;
			cap -= r[i];
			r[i] = U64_MAX;		/* out of the set */
			left--;
			any = true;
		}
		if (!any)
			break;
	}
	/* Every connection below its share: each is offered C_t (12.4.2). */
	return left ? div_u64(cap, left) : target;
}

/*
 * Receiver side (spec 12.4): account a sequenced packet of conn, skb, in
 * its hint window.  Per packet: no hint is computed here, only when an
 * ACK carries one (mroce_cc_rx_hint()).  conn->lock held.
 */
void mroce_cc_rx_count(struct mroce_conn *conn, const struct sk_buff *skb)
{
	u32 win = READ_ONCE(mroce_hint_active_us);
	ktime_t now = mroce_conn_now(conn);
	s64 age;

	age = ktime_us_delta(now, conn->rx.window_at);
	if (age >= win) {
		WRITE_ONCE(conn->rx.rate_bytes,
			   age >= 2 * win ? 0 : conn->rx.window_bytes);
		WRITE_ONCE(conn->rx.bklg_prev, conn->rx.bklg);
		conn->rx.window_bytes = 0;
		WRITE_ONCE(conn->rx.bklg, false);
		conn->rx.window_at = now;
	}
	if (ktime_us_delta(now, conn->rx.last_at) > win)
		conn->rx.fresh = true;	/* newly active: recompute at once */
	conn->rx.window_bytes += skb->len + MROCE_CRC_LEN + 28;
	if (ntohs(((const struct mroce_bth *)skb->data)->flags) & MROCE_F_BKLG)
		WRITE_ONCE(conn->rx.bklg, true);
	WRITE_ONCE(conn->rx.last_at, now);
}

/*
 * The encoded hint for an ACK or PROBE_REPLY of conn; 0 when the capacity
 * is not known or conn has no HINT capability.  The device's fair share is
 * recomputed every hint_interval_us, and at once for a connection that
 * has just become active.  conn->lock held, in the receive path (RCU).
 */
u16 mroce_cc_rx_hint(struct mroce_conn *conn)
{
	struct mroce_dev *mdev = conn->mdev;
	struct mroce_conn *fresh;
	u64 cap, share;
	ktime_t now;

	lockdep_assert_held(&conn->lock);

	if (!conn->cx.hints)
		return 0;	/* no HINT capability: no hint (MRC-ACK-004) */
	cap = READ_ONCE(mroce_rx_capacity_mbps) ?: READ_ONCE(mdev->link_mbps);
	if (!cap)
		return 0;
	/* C_t in kb/s: Mb/s * pct / 100 * 1000 */
	cap *= READ_ONCE(mroce_rx_target_util_pct) * 10;
	fresh = conn->rx.fresh ? conn : NULL;
	conn->rx.fresh = false;
	now = mroce_conn_now(conn);
	if (fresh || ktime_us_delta(now, READ_ONCE(mdev->hint_at)) >=
	    READ_ONCE(mroce_hint_interval_us)) {
		WRITE_ONCE(mdev->hint_share,
			   mroce_fair_share(mdev, cap, now, fresh));
		WRITE_ONCE(mdev->hint_at, now);
	}
	share = READ_ONCE(mdev->hint_share);
	return mroce_hint_encode(share ?: cap);
}
