// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sender paths (spec 7): creation, entropy, the path state machine
 * (ACTIVE, SUSPECT, PROBING, FAILED), probes, and the choice of path for
 * each packet, which sprays a connection's packets over its ACTIVE paths.
 * Acknowledgements and loss detection are in loss.c, windows in cc.c.
 */
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "cc.h"
#include "conn.h"
#include "conn_tx.h"
#include "loss.h"
#include "net.h"
#include "path.h"
#include "pkt.h"
#include "rc_req.h"
#include "trace.h"
#include "tunables.h"
#include "txwin.h"
#include "verbs.h"

/* Maximum packet bytes: a full segment and the largest overhead (12.2.1). */
u32 mroce_mpb(const struct mroce_conn *conn)
{
	return (256U << conn->cx.css_shift) + MROCE_MTU_OVERHEAD;
}

/* The charge of a packet: its IP datagram length (spec 12.2.1). */
u32 mroce_charge(const struct mroce_conn *conn, const struct mroce_txrec *rec)
{
	u32 ip = ipv6_addr_v4mapped((const struct in6_addr *)conn->peer.raw) ?
		 sizeof(struct iphdr) : sizeof(struct ipv6hdr);

	return ip + sizeof(struct udphdr) + sizeof(struct mroce_bth) +
	       mroce_ext_len(rec->type) + rec->plen + MROCE_CRC_LEN;
}

static bool mroce_port_taken(const struct mroce_conn *conn,
			     const struct mroce_path *path, u16 port)
{
	int i;

	for (i = 0; i < conn->tx.npaths; i++)
		if (conn->tx.paths[i] && conn->tx.paths[i] != path &&
		    ntohs(conn->tx.paths[i]->sport) == port)
			return true;
	for (i = 0; path && i < MROCE_OLD_PORTS; i++)
		if (path->old_ports[i] == port)
			return true;
	return false;
}

/*
 * A random port of [sport_min, sport_max] no other path uses (7.2); path
 * is NULL for the handshake's port, which path 0 takes over.
 */
__be16 mroce_pick_sport(const struct mroce_conn *conn,
			const struct mroce_path *path)
{
	u32 lo = READ_ONCE(mroce_sport_min), hi = READ_ONCE(mroce_sport_max);
	u16 port = 0;
	int tries;

	if (hi < lo + 63) {	/* an inconsistent pair: the defaults */
		lo = 49152;
		hi = 65535;
	}
	for (tries = 0; tries < 64; tries++) {
		port = lo + get_random_u32_below(hi - lo + 1);
		if (!mroce_port_taken(conn, path, port))
			break;
	}
	return htons(port);
}

/* Move path to fresh entropy (spec 7.7), remembering the port it leaves. */
static void mroce_path_reroute(struct mroce_conn *conn,
			       struct mroce_path *path)
{
	path->old_ports[path->old_idx++ % MROCE_OLD_PORTS] = ntohs(path->sport);
	path->sport = mroce_pick_sport(conn, path);
	path->probe_base = path->probe_id + 1;
	path->min_rtt_old = true;	/* until the new route's first sample */
	path->ent_sent = 0;
	path->win_sent = 0;
	path->win_lost = 0;
	path->loss_pct = 0;
	path->reo_seen = 0;	/* a new route: trusted until it reorders */
	path->reo_mult = 1;
	path->reroutes++;
	mroce_count(conn->mdev, PATH_REROUTES);
	trace_mroce_path_reroute(conn, path);
}

static void mroce_path_set_state(struct mroce_conn *conn,
				 struct mroce_path *path,
				 enum mroce_path_state state)
{
	struct mroce_dev *mdev = conn->mdev;

	if (path->state == state)
		return;
	if (path->state == MROCE_PATH_ACTIVE)
		this_cpu_dec(mdev->stats->c[MROCE_CNT_PATHS_ACTIVE]);
	if (state == MROCE_PATH_ACTIVE)
		mroce_count(mdev, PATHS_ACTIVE);
	else if (state == MROCE_PATH_SUSPECT)
		mroce_count(mdev, PATH_SUSPECT);
	else if (state == MROCE_PATH_FAILED)
		mroce_count(mdev, PATH_FAILED);
	path->state = state;
	path->state_at = ktime_get();
	trace_mroce_path_state(conn, path);
	/* Only replies to probes sent in the new state count (7.5). */
	path->probe_base = path->probe_id + 1;
	if (state != MROCE_PATH_ACTIVE)
		path->reo_at = 0;
}

static void mroce_send_probe(struct mroce_conn *conn, struct mroce_path *path,
			     struct sk_buff_head *q);

static void mroce_path_free(struct mroce_conn *conn, struct mroce_path *path)
{
	mroce_txwin_free(conn, path);
	kfree(path);
}

/*
 * Put paths_per_plane paths on plane, within the peer's Max Rx Paths
 * (MRC-PATH-002): ACTIVE at establishment (P1), PROBING later (P2).
 */
int mroce_paths_add_plane(struct mroce_conn *conn, int plane, bool probing,
			  struct sk_buff_head *q)
{
	u32 cap = min_t(u32, conn->cx.peer_max_paths, MROCE_MAX_PATHS);
	u32 n = min(conn->tx.npaths + READ_ONCE(mroce_paths_per_plane), cap);
	struct mroce_path *path;
	u32 i;

	lockdep_assert_held(&conn->lock);

	for (i = conn->tx.npaths; i < n; i++) {
		/* Its window comes with its first packet (txwin.c). */
		path = kzalloc(sizeof(*path), GFP_ATOMIC | __GFP_NOWARN);
		if (!path)
			break;
		path->id = i;
		path->plane = plane;
		path->state = MROCE_PATH_FAILED;	/* set_state counts */
		/* The CONNECT went with path 0's port (MRC-CONN-011). */
		path->sport = i || !conn->life.hs_sport ?
			      mroce_pick_sport(conn, path) :
			      conn->life.hs_sport;
		path->next_psn = get_random_u32();
		path->plw = path->next_psn;
		path->probe_id = get_random_u32();
		path->probe_base = path->probe_id + 1;
		path->high_acked = path->plw - 1;
		path->rto_us = READ_ONCE(mroce_rto_initial_us);
		path->reo_mult = 1;
		mroce_cc_path_init(conn, path);
		conn->tx.paths[i] = path;
		conn->tx.npaths = i + 1;
		if (probing) {
			mroce_path_set_state(conn, path, MROCE_PATH_PROBING);
			path->entropies = 1;
			mroce_send_probe(conn, path, q);
		} else {
			mroce_path_set_state(conn, path, MROCE_PATH_ACTIVE);
		}
	}
	return conn->tx.npaths ? 0 : -ENOMEM;
}

/* The connection's paths at establishment, on every paired plane (P1). */
int mroce_paths_create(struct mroce_conn *conn)
{
	int p;

	mroce_conn_pair_planes(conn);
	for (p = 0; p < MROCE_MAX_PLANES; p++)
		if (conn->cx.planes_paired & BIT(p))
			mroce_paths_add_plane(conn, p, false, NULL);
	return conn->tx.npaths ? 0 : -ENOMEM;
}

void mroce_paths_free(struct mroce_conn *conn)
{
	int i;

	for (i = 0; i < conn->tx.npaths; i++) {
		if (conn->tx.paths[i]->state == MROCE_PATH_ACTIVE)
			this_cpu_dec(conn->mdev->stats->c[MROCE_CNT_PATHS_ACTIVE]);
		mroce_path_free(conn, conn->tx.paths[i]);
		conn->tx.paths[i] = NULL;
	}
	conn->tx.npaths = 0;
}

/* Effective RTO: the base RTO doubled per consecutive expiry (7.4). */
static u32 mroce_eff_rto(const struct mroce_path *path)
{
	u64 rto = (u64)path->rto_us << path->backoff;

	return min_t(u64, rto, READ_ONCE(mroce_rto_max_us));
}

/* PTO = max(2 srtt + peer Max ACK Delay, pto_min_us) (MRC-LOSS-004). */
static u32 mroce_pto(const struct mroce_conn *conn,
		     const struct mroce_path *path)
{
	if (!path->srtt_us)
		return READ_ONCE(mroce_rto_initial_us);
	return max(2 * path->srtt_us + conn->cx.peer_max_ack_delay,
		   READ_ONCE(mroce_pto_min_us));
}

/*
 * An RTO or probe timeout expired unanswered (P3, P7, P10, P11): the next
 * one waits twice as long (MRC-PATH-019).  Past 16 doublings any RTO is
 * at rto_max_us.
 */
static void mroce_path_back_off(struct mroce_path *path)
{
	if (path->backoff < MROCE_MAX_BACKOFF)
		path->backoff++;
}

/* When the RTO of an ACTIVE path with packets in flight expires. */
static ktime_t mroce_rto_deadline(const struct mroce_path *path)
{
	return ktime_add_us(path->tlp_at, mroce_eff_rto(path));
}

/*
 * The probe timeout of a path (spec 7.5): its effective RTO, which before
 * an RTT sample is rto_initial_us doubled by the path's backoff, or, while
 * it has no sample, the largest effective RTO of the ACTIVE paths if that
 * is longer.  It always grows with the backoff, so a path whose RTT is
 * above rto_initial_us still gets a reply in time (MRC-PATH-019).
 */
static u32 mroce_probe_timeout(const struct mroce_conn *conn,
			       const struct mroce_path *path)
{
	u32 pto = mroce_eff_rto(path);
	int i;

	if (path->srtt_us)
		return pto;
	for (i = 0; i < conn->tx.npaths; i++)
		if (conn->tx.paths[i]->state == MROCE_PATH_ACTIVE &&
		    conn->tx.paths[i]->srtt_us)
			pto = max(pto, mroce_eff_rto(conn->tx.paths[i]));
	return pto;
}

/* Send a PROBE on path (spec 7.6); in PROBING it is full size. */
static void mroce_send_probe(struct mroce_conn *conn, struct mroce_path *path,
			     struct sk_buff_head *q)
{
	bool mtu = path->state == MROCE_PATH_PROBING;
	u32 pad = mtu ? (256U << conn->cx.css_shift) + 24 : 0;
	struct mroce_probe_rec *rec;
	struct mroce_bth *bth;
	struct mroce_pbx *pbx;
	struct sk_buff *skb;

	lockdep_assert_held(&conn->lock);

	path->probe_at = ktime_get();
	path->probe_id++;
	rec = &path->probes[path->probe_id % MROCE_PROBES];
	rec->id = path->probe_id;
	rec->psn = path->next_psn;
	rec->at = path->probe_at;
	path->probes_out++;
	skb = mroce_conn_alloc_pkt(conn, MROCE_T_PROBE, sizeof(*pbx), pad);
	if (!skb)
		return;
	bth = (struct mroce_bth *)skb->data;
	bth->path_id = path->id;
	bth->psn = htonl(path->next_psn);
	bth->plw = htonl(path->plw);
	pbx = (struct mroce_pbx *)(bth + 1);
	pbx->probe_id = htonl(path->probe_id);
	pbx->probe_flags = mtu ? MROCE_PBF_MTU : 0;
	pbx->timestamp = cpu_to_be64(ktime_to_ns(path->probe_at));
	memset(pbx + 1, 0, pad);
	mroce_cb(skb)->sport = path->sport;
	mroce_cb(skb)->plane = path->plane;
	__skb_queue_tail(q, skb);
	mroce_count(conn->mdev, PROBES_SENT);
}

static struct mroce_path *mroce_pick(struct mroce_conn *conn, u32 charge,
				     int avoid);

/*
 * The PTO of an ACTIVE path expired (spec 9.2.3): send its newest
 * unresolved content again on another path, leaving the original
 * outstanding, and PROBE the path; the PROBE_REPLY tells exactly what the
 * path lost.
 */
static void mroce_path_tlp(struct mroce_conn *conn, struct mroce_path *path,
			   struct sk_buff_head *q)
{
	struct mroce_inflight *f = NULL;
	struct mroce_path *other;
	u32 psn;

	lockdep_assert_held(&conn->lock);

	for (psn = path->next_psn - 1; mroce_seq_diff(psn, path->plw) >= 0;
	     psn--) {
		f = mroce_live_slot(path, psn);
		if (f)
			break;
	}
	path->tlp_at = ktime_get();
	if (f && mroce_rc_still_needed(conn, &f->rec)) {
		other = mroce_pick(conn, mroce_charge(conn, &f->rec), path->id);
		if (other) {
			mroce_path_emit(conn, other, &f->rec, f->tries,
					MROCE_F_RETX | MROCE_F_AR, q);
			other->retx_pkts++;
			mroce_count(conn->mdev, RETRANSMITS);
			mroce_count(conn->mdev, TLP_PROBES);
		}
	}
	path->probes_out = 0;
	mroce_send_probe(conn, path, q);
}

/*
 * The handshake completed at the initiator: a PROBE on path 0 takes the
 * responder's connection out of the half-open state even when no data
 * follows (MRC-CONN-013), and gives the path its first RTT sample.
 */
void mroce_path_confirm(struct mroce_conn *conn, struct sk_buff_head *q)
{
	lockdep_assert_held(&conn->lock);

	if (conn->tx.npaths)
		mroce_send_probe(conn, conn->tx.paths[0], q);
}

/*
 * Is the peer incarnation of conn still there (restart check, spec
 * 6.7.2)?  PROBE an ACTIVE path, path 0 if none is; returns that path's
 * probe timeout, us, or 0 if conn has no path.
 */
u32 mroce_path_check_alive(struct mroce_conn *conn, struct sk_buff_head *q)
{
	struct mroce_path *path;
	int i;

	lockdep_assert_held(&conn->lock);

	if (!conn->tx.npaths)
		return 0;
	path = conn->tx.paths[0];
	for (i = 0; i < conn->tx.npaths; i++) {
		if (conn->tx.paths[i]->state == MROCE_PATH_ACTIVE) {
			path = conn->tx.paths[i];
			break;
		}
	}
	mroce_send_probe(conn, path, q);
	return mroce_probe_timeout(conn, path);
}

/* Leave the current entropy and probe the new one (P8, P10, P12). */
static void mroce_path_probe_new(struct mroce_conn *conn,
				 struct mroce_path *path,
				 struct sk_buff_head *q)
{
	lockdep_assert_held(&conn->lock);

	if (path->state != MROCE_PATH_PROBING)
		path->entropies = 0;
	mroce_path_set_state(conn, path, MROCE_PATH_PROBING);
	mroce_path_reroute(conn, path);
	path->entropies++;
	path->probes_out = 0;
	mroce_send_probe(conn, path, q);
}

static u32 mroce_paths_active(const struct mroce_conn *conn)
{
	u32 n = 0;
	int i;

	for (i = 0; i < conn->tx.npaths; i++)
		n += conn->tx.paths[i]->state == MROCE_PATH_ACTIVE;
	return n;
}

/* Transition P3: the RTO of an ACTIVE path expired (spec 9.2.4). */
static void mroce_path_rto(struct mroce_conn *conn, struct mroce_path *path,
			   struct sk_buff_head *q)
{
	lockdep_assert_held(&conn->lock);

	mroce_count(conn->mdev, RTO_TIMEOUTS);
	trace_mroce_path_rto(conn, path);
	mroce_path_back_off(path);
	mroce_path_set_state(conn, path, MROCE_PATH_SUSPECT);
	mroce_cc_on_rto(conn, path);
	mroce_declare_all_lost(conn, path, q);
	path->probes_out = 0;
	mroce_send_probe(conn, path, q);
}

/* Reorder timer expiry (spec 9.2.2). */
static void mroce_path_reorder_expired(struct mroce_conn *conn,
				       struct mroce_path *path, ktime_t now,
				       struct sk_buff_head *q)
{
	s64 reo = mroce_reo_wnd(path);
	struct mroce_inflight *f;
	bool lost = false;
	u32 psn;

	lockdep_assert_held(&conn->lock);

	path->reo_at = 0;
	for (psn = path->plw; mroce_seq_diff(path->high_acked, psn) > 0; psn++) {
		f = mroce_live_slot(path, psn);
		if (!f)
			continue;
		if (ktime_us_delta(now, f->sent) >= reo) {
			mroce_count(conn->mdev, FAST_RETRANSMITS);
			mroce_declare_lost(conn, path, f, q);
			lost = true;
		} else if (!path->reo_at) {
			path->reo_at = ktime_add_us(f->sent, reo);
		}
	}
	mroce_advance_plw(path);
	if (lost)
		mroce_cc_on_loss(conn, path);
}

/* The timers of path's state (spec 7.5, 9.2). */
static void mroce_path_tick_state(struct mroce_conn *conn,
				  struct mroce_path *path, ktime_t now,
				  bool short_failed, struct sk_buff_head *q)
{
	s64 pto = mroce_probe_timeout(conn, path);
	s64 since_probe = ktime_us_delta(now, path->probe_at);

	switch (path->state) {
	case MROCE_PATH_ACTIVE:
		if (path->reo_at && ktime_compare(now, path->reo_at) >= 0)
			mroce_path_reorder_expired(conn, path, now, q);
		if (!path->live)
			break;
		/* A TLP and a PROBE always go before the RTO can fire. */
		if (!path->tlp_at) {
			if (ktime_us_delta(now, path->rto_from) >=
			    min(mroce_pto(conn, path), mroce_eff_rto(path)))
				mroce_path_tlp(conn, path, q);
		} else if (ktime_compare(now, mroce_rto_deadline(path)) >= 0) {
			mroce_path_rto(conn, path, q);
		}
		break;
	case MROCE_PATH_SUSPECT:
		if (since_probe < pto)
			break;
		if (path->probes_out < READ_ONCE(mroce_suspect_probes)) {
			mroce_path_back_off(path);	/* P7 */
			mroce_send_probe(conn, path, q);
		} else {
			mroce_path_probe_new(conn, path, q);	/* P8 */
		}
		break;
	case MROCE_PATH_PROBING:
		if (since_probe < pto)
			break;
		/*
		 * A reply slower than the estimate (a loaded peer) must be
		 * able to arrive before the path moves on and its probes go
		 * stale: each entropy waits twice as long as the last.
		 */
		mroce_path_back_off(path);
		if (path->entropies < READ_ONCE(mroce_probe_max_attempts))
			mroce_path_probe_new(conn, path, q);	/* P10 */
		else
			mroce_path_set_state(conn, path, MROCE_PATH_FAILED);
		break;
	case MROCE_PATH_FAILED:
		if (path->removed || !mroce_conn_plane_usable(conn, path->plane))
			break;
		if (short_failed ? since_probe >= pto :
		    ktime_ms_delta(now, path->state_at) >=
		    READ_ONCE(mroce_failed_probe_interval_ms))
			mroce_path_probe_new(conn, path, q);	/* P12 */
		break;
	}
}

static void mroce_path_tick(struct mroce_conn *conn, struct mroce_path *path,
			    ktime_t now, bool short_failed,
			    struct sk_buff_head *q)
{
	bool had_live = path->live;

	lockdep_assert_held(&conn->lock);

	mroce_txwin_trim(conn, path, now);
	mroce_path_tick_state(conn, path, now, short_failed, q);
	/* Emptied by this run (an RTO): idle from now (txwin.c). */
	if (had_live && !path->live)
		path->win_at = now;
}

/* The connection timer fired: run every path's timers (spec 7.5, 9.2). */
void mroce_path_timeout(struct mroce_conn *conn, ktime_t now,
			struct sk_buff_head *q)
{
	bool short_failed;
	int i;

	lockdep_assert_held(&conn->lock);

	for (i = 0; i < conn->tx.npaths; i++) {
		/* Fewer than min_active_paths: probe failed ones at once. */
		short_failed = mroce_paths_active(conn) <
			       READ_ONCE(mroce_min_active_paths);
		mroce_path_tick(conn, conn->tx.paths[i], now, short_failed, q);
	}
}

/* When the connection timer must next run for the paths. */
ktime_t mroce_path_next_event(struct mroce_conn *conn)
{
	bool short_failed = mroce_paths_active(conn) <
			    READ_ONCE(mroce_min_active_paths);
	ktime_t next = KTIME_MAX, t;
	struct mroce_path *path;
	int i;

	for (i = 0; i < conn->tx.npaths; i++) {
		path = conn->tx.paths[i];
		t = KTIME_MAX;
		switch (path->state) {
		case MROCE_PATH_ACTIVE:
			if (path->live)
				t = path->tlp_at ? mroce_rto_deadline(path) :
				    ktime_add_us(path->rto_from,
						 min(mroce_pto(conn, path),
						     mroce_eff_rto(path)));
			if (path->reo_at && ktime_before(path->reo_at, t))
				t = path->reo_at;
			break;
		case MROCE_PATH_SUSPECT:
		case MROCE_PATH_PROBING:
			t = ktime_add_us(path->probe_at,
					 mroce_probe_timeout(conn, path));
			break;
		case MROCE_PATH_FAILED:
			if (path->removed ||
			    !mroce_conn_plane_usable(conn, path->plane))
				break;
			t = short_failed ?
			    ktime_add_us(path->probe_at,
					 mroce_probe_timeout(conn, path)) :
			    ktime_add_ms(path->state_at,
					 READ_ONCE(mroce_failed_probe_interval_ms));
			break;
		}
		if (ktime_before(t, next))
			next = t;
		t = mroce_txwin_trim_at(path);
		if (ktime_before(t, next))
			next = t;
	}
	return next;
}

/*
 * A PROBE_REPLY for one of our paths (spec 7.6, 9.2.3).  True if it was
 * taken: then the path may carry more.
 */
bool mroce_path_rx_probe_reply(struct mroce_conn *conn, struct sk_buff *skb,
			       struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_pbx *pbx = (const struct mroce_pbx *)(bth + 1);
	const struct mroce_akx *akx = (const struct mroce_akx *)(pbx + 1);
	const struct mroce_probe_rec *rec;
	struct mroce_path *path;
	s64 rtt;
	u32 id;

	lockdep_assert_held(&conn->lock);

	if (bth->hdr_len * 4 != sizeof(*bth) + sizeof(*pbx) + sizeof(*akx) ||
	    bth->payload_len || akx->num_sr ||
	    bth->path_id >= conn->tx.npaths) {
		mroce_count(conn->mdev, DROP_BAD_HEADER);
		return false;
	}
	id = ntohl(pbx->probe_id);
	path = conn->tx.paths[bth->path_id];
	/*
	 * Only an answer to one of this entropy's recent probes counts
	 * (MRC-PATH-028), and it speaks for the packets sent before that
	 * probe, not before a later one (MRC-LOSS-006).
	 */
	rec = &path->probes[id % MROCE_PROBES];
	if (path->state == MROCE_PATH_FAILED || rec->id != id ||
	    mroce_seq_diff(path->probe_id, id) < 0 ||
	    mroce_seq_diff(id, path->probe_base) < 0 ||
	    ktime_us_delta(ktime_get(), rec->at) >
	    READ_ONCE(mroce_rto_max_us)) {
		mroce_count(conn->mdev, DROP_OUT_OF_WINDOW);
		return false;
	}
	mroce_count(conn->mdev, PROBE_REPLIES_RCVD);
	mroce_count(conn->mdev, ACKS_RCVD);
	mroce_cc_take_hint(conn, ntohs(akx->rate_hint), ntohl(bth->psn));
	if (!mroce_loss_process_akx(conn, path, akx, &rec->psn, q))
		return false;	/* an ACK that does not fit the path */
	/* Probe IDs are never reused: any matched one is a clean sample. */
	rtt = ktime_us_delta(ktime_get(), rec->at);
	if (rtt > 0 && rtt < READ_ONCE(mroce_rto_max_us))
		mroce_rtt_sample(conn, path, rtt);
	if (path->state != MROCE_PATH_ACTIVE) {	/* P6, P9 */
		if (path->state == MROCE_PATH_PROBING)
			path->ssthresh = U32_MAX;	/* a new route */
		mroce_path_set_state(conn, path, MROCE_PATH_ACTIVE);
		mroce_cc_path_restart(conn, path);
		path->backoff = 0;
		path->rto_from = ktime_get();
	}
	path->probes_out = 0;
	path->entropies = 0;
	path->tlp_at = 0;
	path->rto_from = ktime_get();
	return true;
}

/*
 * A plane went down or was removed: its paths fail at once (P5, P13,
 * MRC-PATH-024); their packets go to the other planes' paths.
 */
void mroce_paths_plane_down(struct mroce_conn *conn, int plane, bool removed,
			    struct sk_buff_head *q)
{
	struct mroce_path *path;
	int i;

	lockdep_assert_held(&conn->lock);

	for (i = 0; i < conn->tx.npaths; i++) {
		path = conn->tx.paths[i];
		if (path->plane != plane)
			continue;
		path->removed |= removed;
		if (path->state == MROCE_PATH_FAILED)
			continue;
		mroce_path_set_state(conn, path, MROCE_PATH_FAILED);
		mroce_declare_all_lost(conn, path, q);
	}
}

/* A plane came up: probe its failed paths at once (P12, MRC-PATH-037). */
void mroce_paths_plane_up(struct mroce_conn *conn, int plane,
			  struct sk_buff_head *q)
{
	struct mroce_path *path;
	int i;

	lockdep_assert_held(&conn->lock);

	for (i = 0; i < conn->tx.npaths; i++) {
		path = conn->tx.paths[i];
		if (path->plane == plane && !path->removed &&
		    path->state == MROCE_PATH_FAILED) {
			path->backoff = 0;	/* timeouts of a plane down */
			mroce_path_probe_new(conn, path, q);
		}
	}
}

static int mroce_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* Transition P4: a path losing far more than the others moves (7.7). */
static void mroce_path_loss_window(struct mroce_conn *conn,
				   struct mroce_path *path)
{
	u32 pct[MROCE_MAX_PATHS], n = 0, median;
	int i;

	path->loss_pct = path->win_lost * 100 / path->win_sent;
	path->win_sent = 0;
	path->win_lost = 0;
	if (path->ent_sent < READ_ONCE(mroce_loss_window_pkts) ||
	    path->loss_pct <= READ_ONCE(mroce_path_loss_thresh_pct))
		return;
	for (i = 0; i < conn->tx.npaths; i++)
		if (conn->tx.paths[i]->state == MROCE_PATH_ACTIVE)
			pct[n++] = conn->tx.paths[i]->loss_pct;
	if (!n)
		return;
	sort(pct, n, sizeof(pct[0]), mroce_cmp_u32, NULL);
	median = pct[n / 2];
	if (path->loss_pct > 2 * median) {
		mroce_path_reroute(conn, path);
		path->ssthresh = U32_MAX;	/* P4: a new route */
		mroce_cc_path_restart(conn, path);
	}
}

/* Account a packet sent on path for its loss rate (spec 7.7). */
static void mroce_path_count_sent(struct mroce_conn *conn,
				  struct mroce_path *path)
{
	path->tx_pkts++;
	path->ent_sent++;
	if (++path->win_sent >= READ_ONCE(mroce_loss_window_pkts))
		mroce_path_loss_window(conn, path);
}

static bool mroce_path_psn_room(const struct mroce_path *path)
{
	return path->state == MROCE_PATH_ACTIVE &&
	       path->next_psn - path->plw < MROCE_TX_WINDOW;
}

/* May path take a packet of charge bytes now (PSN room and window)? */
static bool mroce_path_takes(const struct mroce_path *path, u32 charge)
{
	return mroce_path_psn_room(path) && mroce_cc_window_ok(path, charge);
}

/*
 * The path for a packet of charge bytes (spec 7.8): among the ACTIVE paths
 * whose window allows it, the least loaded one, load being bytes in
 * flight / cwnd in sixteenths, starting after the last path used so that
 * equally loaded paths take turns.  A sender that is not window-limited
 * thus sprays over every path, and a path with a small window (new, or
 * back from a failure) gets packets to grow it with.  Avoid is a path not
 * to use if another one can.  With batches on (tx_batch_pkts > 1) new data
 * keeps its path for up to a batch of packets while that path's window
 * allows, so that spraying goes batch by batch.
 */
static struct mroce_path *mroce_pick_best(struct mroce_conn *conn, u32 charge,
					  int avoid)
{
	struct mroce_path *best = NULL, *p;
	u64 score, best_score = 0;
	int i, n = conn->tx.npaths;

	/* Batches (MRC-PATH-040): new data stays on its path for a batch. */
	if (avoid < 0 && conn->tx.last_path < n &&
	    conn->tx.path_run < min(mroce_tx_batch_max(),
				 MROCE_GSO_MAX_BYTES / max(charge, 1U))) {
		p = conn->tx.paths[conn->tx.last_path];
		if (conn->tx.path_run && mroce_path_takes(p, charge))
			return p;
	}
	for (i = 1; i <= n; i++) {
		p = conn->tx.paths[(conn->tx.last_path + i) % n];
		if (!mroce_path_takes(p, charge) || (p->id == avoid && n > 1))
			continue;
		score = div_u64((u64)p->bif << 4, max(p->cwnd, 1U));
		if (!best || score < best_score) {
			best = p;
			best_score = score;
		}
	}
	if (!best && avoid >= 0 && avoid < n &&
	    mroce_path_takes(conn->tx.paths[avoid], charge))
		best = conn->tx.paths[avoid];
	return best;
}

/*
 * mroce_pick_best(), with a record for the packet on the path.  Without
 * memory for one, the timer tries again in a millisecond.
 */
static struct mroce_path *mroce_pick(struct mroce_conn *conn, u32 charge,
				     int avoid)
{
	struct mroce_path *path = mroce_pick_best(conn, charge, avoid);

	if (!path || mroce_txwin_ready(conn, path))
		return path;
	mroce_conn_wake_at(conn, ktime_add_ms(ktime_get(), 1));
	return NULL;
}

/*
 * May charge bytes go now under the connection's pacing (spec 12.3)?  If
 * not, the timer comes back when they may.
 */
static bool mroce_path_paced(struct mroce_conn *conn, u32 charge)
{
	ktime_t at;

	if (mroce_cc_pace_ok(conn, charge, &at))
		return true;
	mroce_conn_wake_at(conn, at);
	return false;
}

/* May a stream send a new packet now?  Lost content goes first. */
bool mroce_path_has_room(struct mroce_conn *conn)
{
	/* An unconfirmed connection carries no stream data (spec 6.4). */
	if (conn->life.half_open)
		return false;
	u32 mpb = mroce_mpb(conn);
	struct mroce_path *path;

	conn->tx.room_path = 0;
	if (conn->state != MROCE_CONN_ESTABLISHED ||
	    !list_empty(&conn->tx.retxq))
		return false;
	path = mroce_pick(conn, mpb, -1);
	if (!path || !mroce_path_paced(conn, mpb)) {
		conn->cc.backlog = true;
		return false;
	}
	conn->tx.room_path = path->id + 1;
	return true;
}

/*
 * The path for new content of charge bytes: the one the room check just
 * before it picked, if it still takes the packet (nothing was sent in
 * between: the same pick), else the best one now.
 */
static struct mroce_path *mroce_pick_new(struct mroce_conn *conn, u32 charge)
{
	u8 id = conn->tx.room_path;
	struct mroce_path *path;

	if (id && id <= conn->tx.npaths) {
		path = conn->tx.paths[id - 1];
		if (mroce_path_takes(path, charge) &&
		    mroce_txwin_ready(conn, path))
			return path;
	}
	return mroce_pick(conn, charge, -1);
}

/* Queue content for a path that can take it (spec 9.3). */
static void mroce_retx_queue(struct mroce_conn *conn,
			     const struct mroce_txrec *rec, u8 tries, u8 from)
{
	struct mroce_retx *r;

	r = kmalloc(sizeof(*r), GFP_ATOMIC | __GFP_NOWARN);
	if (!r) {
		/* Nowhere to keep it: the stream's retry recovers it. */
		mroce_count(conn->mdev, DROP_NO_RESOURCE);
		return;
	}
	r->rec = *rec;
	if (rec->qp)
		mroce_qp_hold(rec->qp);
	r->tries = tries;
	r->from = from;
	list_add_tail(&r->list, &conn->tx.retxq);
	conn->tx.nretx++;
}

/*
 * Send content of charge bytes on path, the caller's pick: new content
 * (tries 1) or content declared lost on path from (tries > 1).  Without a
 * path it waits in the queue for one.  A path that had nothing in flight
 * has an RTO deadline now: the timer is armed for it.
 */
static void mroce_path_carry(struct mroce_conn *conn,
			     const struct mroce_txrec *rec, u32 charge,
			     u8 tries, int from, struct mroce_path *path,
			     struct sk_buff_head *q)
{
	bool was_idle;

	lockdep_assert_held(&conn->lock);

	conn->tx.room_path = 0;
	if (!path) {
		mroce_retx_queue(conn, rec, tries, from < 0 ? 0 : from);
		return;
	}
	was_idle = !path->live;
	if (tries > 1)
		conn->tx.path_run = 0;
	else if (path->id != conn->tx.last_path)
		conn->tx.path_run = 1;
	else if (conn->tx.path_run < U8_MAX)
		conn->tx.path_run++;
	conn->tx.last_path = path->id;
	mroce_cc_pace_charge(conn, charge);
	mroce_path_emit(conn, path, rec, tries,
			tries > 1 ? MROCE_F_RETX : 0, q);
	mroce_path_count_sent(conn, path);
	if (was_idle || !hrtimer_is_queued(&conn->timer))
		mroce_conn_arm_timer(conn);
	if (tries > 1) {
		path->retx_pkts++;
		mroce_count(conn->mdev, RETRANSMITS);
	}
}

/* Send new content rec (spec 7.8).  The caller checked for room. */
void mroce_path_send(struct mroce_conn *conn, const struct mroce_txrec *rec,
		     struct sk_buff_head *q)
{
	u32 charge = mroce_charge(conn, rec);

	lockdep_assert_held(&conn->lock);

	conn->cc.backlog = false;
	mroce_path_carry(conn, rec, charge, 1, -1,
			 mroce_pick_new(conn, charge), q);
}

/*
 * Resend content declared lost on path from, or queue it behind older lost
 * content or until the pacing bucket allows it (spec 9.3, MRC-LOSS-011).
 */
void mroce_path_resend(struct mroce_conn *conn, const struct mroce_txrec *rec,
		       u8 tries, u8 from, struct sk_buff_head *q)
{
	u32 charge = mroce_charge(conn, rec);

	lockdep_assert_held(&conn->lock);

	if (!list_empty(&conn->tx.retxq) || !mroce_path_paced(conn, charge))
		mroce_retx_queue(conn, rec, tries, from);
	else
		mroce_path_carry(conn, rec, charge, tries, from,
				 mroce_pick(conn, charge, from), q);
}

/*
 * Send queued lost content while paths and the pacing bucket can take it,
 * oldest first.  Content no longer needed just leaves the queue.
 */
void mroce_retx_flush(struct mroce_conn *conn, struct sk_buff_head *q)
{
	struct mroce_path *path = NULL;
	struct mroce_retx *r;
	bool needed;
	u32 charge;

	lockdep_assert_held(&conn->lock);

	while ((r = list_first_entry_or_null(&conn->tx.retxq, struct mroce_retx,
					     list))) {
		charge = mroce_charge(conn, &r->rec);
		needed = mroce_rc_still_needed(conn, &r->rec);
		if (needed) {
			path = mroce_pick(conn, charge, r->from);
			if (!path || !mroce_path_paced(conn, charge))
				return;
		}
		list_del(&r->list);
		conn->tx.nretx--;
		/* On the path just checked: the queue cannot spin. */
		if (needed)
			mroce_path_carry(conn, &r->rec, charge, r->tries,
					 r->from, path, q);
		if (r->rec.qp)
			mroce_qp_put(r->rec.qp);
		kfree(r);
	}
}

/* Forget queued lost content of qp (it is being destroyed or reset). */
void mroce_retx_drop_qp(struct mroce_conn *conn, struct mroce_qp *qp)
{
	struct mroce_retx *r, *tmp;

	list_for_each_entry_safe(r, tmp, &conn->tx.retxq, list) {
		if (qp && r->rec.qp != qp)
			continue;
		list_del(&r->list);
		conn->tx.nretx--;
		if (r->rec.qp)
			mroce_qp_put(r->rec.qp);
		kfree(r);
	}
}

/* Forget every packet of qp on every path (it is being destroyed). */
void mroce_path_drop_qp(struct mroce_conn *conn, struct mroce_qp *qp)
{
	struct mroce_inflight *f;
	struct mroce_path *path;
	u32 psn;
	int i;

	for (i = 0; i < conn->tx.npaths; i++) {
		path = conn->tx.paths[i];
		for (psn = path->plw; psn != path->next_psn; psn++) {
			f = mroce_live_slot(path, psn);
			if (!f || f->rec.qp != qp)
				continue;
			mroce_resolve(path, f);
			/* Its arrival will not be a spurious resend. */
			path->rx_late--;
		}
		mroce_advance_plw(path);
	}
	mroce_retx_drop_qp(conn, qp);
}
