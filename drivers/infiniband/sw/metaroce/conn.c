// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Connections (spec 6): one per (device, peer address), created by the first
 * RC QP that needs it with a CONNECT / CONNECT_ACK exchange, found on receive
 * by the Destination Connection ID, and guarded by a random token.
 *
 * Its paths are created once the handshake tells the peer's limits; the
 * initiator sends data only once the connection is ESTABLISHED (no
 * pre-handshake packets).  One timer serves the handshake, every path's
 * RTO, probe and reorder deadlines, pacing and RNR waits.
 */
#include <linux/jhash.h>
#include <linux/log2.h>
#include <linux/random.h>
#include <linux/udp.h>

#include "cc.h"
#include "close.h"
#include "conn.h"
#include "conn_tx.h"
#include "lifecycle.h"
#include "loss.h"
#include "net.h"
#include "path.h"
#include "pkt.h"
#include "rc_req.h"
#include "rc_resp.h"
#include "reset.h"
#include "rxpath.h"
#include "segwin.h"
#include "stream.h"
#include "sync.h"
#include "tunables.h"
#include "verbs.h"

static u8 mroce_mtu_shift(enum ib_mtu mtu)
{
	return ilog2(ib_mtu_enum_to_int(mtu)) - 8;
}

/*
 * A packet of conn: base header filled, extension headers zeroed, payload
 * room reserved; the caller fills in the rest.
 */
struct sk_buff *mroce_conn_alloc_pkt(struct mroce_conn *conn, u8 type,
				     u32 ext_len, u32 payload_len)
{
	u32 hdr = sizeof(struct mroce_bth) + ext_len;
	struct mroce_bth *bth;
	struct sk_buff *skb;

	skb = mroce_alloc_skb(hdr + payload_len, GFP_ATOMIC);
	if (!skb)
		return NULL;
	mroce_cb(skb)->sport = 0;
	mroce_cb(skb)->plane = 0;
	bth = skb_put_zero(skb, hdr);
	skb_put(skb, payload_len);	/* the caller fills it */
	bth->ver_rsvd = MROCE_VERSION << 4;
	bth->type = type;
	bth->hdr_len = hdr / 4;
	bth->payload_len = htons(payload_len);
	bth->dcid = htonl(conn->peer_cid);
	bth->scid = htonl(conn->local_cid);
	bth->token = cpu_to_be64(conn->peer_token);
	return skb;
}

/*
 * The connection's earliest deadline, and the slack the timer may take:
 * 20 us, but none for a due ACK: it must not wait past Max ACK Delay
 * (MRC-ACK-007).  KTIME_MAX: none.
 */
static ktime_t mroce_conn_next_event(struct mroce_conn *conn, u64 *slack)
{
	ktime_t next;

	*slack = 20 * NSEC_PER_USEC;
	if (conn->state == MROCE_CONN_TOMBSTONE)
		return conn->reap_queued ? KTIME_MAX : conn->life.tomb_at;
	next = min(mroce_path_next_event(conn), mroce_conn_life_next(conn));
	if (conn->life.hs_at && ktime_before(conn->life.hs_at, next))
		next = conn->life.hs_at;
	if (conn->wake_at && ktime_before(conn->wake_at, next))
		next = conn->wake_at;
	if (conn->rx.ack_due && !ktime_after(conn->rx.ack_due, next)) {
		next = conn->rx.ack_due;
		*slack = 0;
	}
	return next;
}

static void mroce_conn_timer_start(struct mroce_conn *conn, ktime_t next,
				   u64 slack)
{
	if (next == KTIME_MAX)
		return;
	/* Not before the floor the last run of the timer set (its end). */
	if (ktime_before(next, conn->timer_floor))
		next = conn->timer_floor;
	if (hrtimer_is_queued(&conn->timer) &&
	    !ktime_before(next, hrtimer_get_expires(&conn->timer)))
		return;
	hrtimer_start_range_ns(&conn->timer, next, slack,
			       HRTIMER_MODE_ABS_SOFT);
}

/* (Re)arm the timer for the earliest deadline.  conn->lock held. */
void mroce_conn_arm_timer(struct mroce_conn *conn)
{
	ktime_t next;
	u64 slack;

	lockdep_assert_held(&conn->lock);

	next = mroce_conn_next_event(conn, &slack);
	mroce_conn_timer_start(conn, next, slack);
}

/*
 * Run the timer at when at the latest (pacing, RNR, stream timers).
 * conn->lock held.  A wakeup asked for at or before when is pending
 * already: whoever asked armed the timer for it, and only the timer's own
 * run clears it (then re-arming for everything still due), so nothing is
 * left to do: the stream timers ask on every acknowledged packet.
 */
void mroce_conn_wake_at(struct mroce_conn *conn, ktime_t when)
{
	lockdep_assert_held(&conn->lock);

	if (conn->wake_at && !ktime_before(when, conn->wake_at))
		return;
	conn->wake_at = when;
	mroce_conn_arm_timer(conn);
}

static void mroce_conn_hs_retry_at(struct mroce_conn *conn)
{
	conn->life.hs_at = ktime_add_us(ktime_get(),
					READ_ONCE(mroce_rto_initial_us) <<
					conn->life.connect_tries);
	mroce_conn_arm_timer(conn);
}

/*
 * Our plane addresses for a CX, in plane order, the connection's own
 * first (spec 5.5.12): the planes' addresses of the connection's family.
 */
static u8 mroce_cx_addrs(struct mroce_conn *conn, union ib_gid *addrs)
{
	struct net_device *ndev;
	u8 n = 1;
	int i;

	addrs[0] = conn->local;
	rcu_read_lock();
	for (i = 1; i < MROCE_MAX_PLANES; i++) {
		ndev = mroce_plane_dev(conn->mdev, i);
		if (ndev && mroce_plane_addr(ndev, &conn->local, &addrs[n]))
			n++;
	}
	rcu_read_unlock();
	return n;
}

/*
 * Pair plane i (not 0) with the first peer address it reaches
 * (MRC-PATH-004): true if it does.  RCU held.
 */
static bool mroce_conn_pair_plane(struct mroce_conn *conn, int i)
{
	struct net_device *ndev = mroce_plane_dev(conn->mdev, i);
	union ib_gid src;
	int k;

	if (!ndev || !mroce_plane_addr(ndev, &conn->local, &src))
		return false;
	for (k = 0; k < conn->cx.npeer_addrs; k++) {
		if (!mroce_plane_reaches(ndev, &src, &conn->cx.peer_addrs[k]))
			continue;
		conn->cx.laddr[i] = src;
		conn->cx.raddr[i] = conn->cx.peer_addrs[k];
		return true;
	}
	return false;
}

/*
 * Pair each plane with the first peer address it reaches (MRC-PATH-004).
 * Plane 0 always uses the connection's addresses.
 */
void mroce_conn_pair_planes(struct mroce_conn *conn)
{
	u8 paired = BIT(0);
	int i;

	conn->cx.laddr[0] = conn->local;
	conn->cx.raddr[0] = conn->peer;
	rcu_read_lock();
	for (i = 1; i < MROCE_MAX_PLANES; i++)
		if (mroce_conn_pair_plane(conn, i))
			paired |= BIT(i);
	rcu_read_unlock();
	WRITE_ONCE(conn->cx.planes_paired, paired);
}

/*
 * Plane i came up: an established connection that has no paths on it
 * because no peer address was reachable through it (it was down, or had no
 * route, when the connection paired its planes) pairs it now and creates
 * them (P2); one that has paths revives them (P12).  MRC-PATH-037.
 */
static void mroce_conn_plane_up(struct mroce_conn *conn, int i,
				struct sk_buff_head *q)
{
	bool paired;

	lockdep_assert_held(&conn->lock);

	if (conn->cx.planes_paired & BIT(i)) {
		mroce_paths_plane_up(conn, i, q);
		return;
	}
	rcu_read_lock();
	paired = mroce_conn_pair_plane(conn, i);
	rcu_read_unlock();
	if (!paired)
		return;
	WRITE_ONCE(conn->cx.planes_paired, conn->cx.planes_paired | BIT(i));
	mroce_paths_add_plane(conn, i, true, q);
}

static void mroce_build_connect(struct mroce_conn *conn, u8 type,
				struct sk_buff_head *q)
{
	union ib_gid addrs[MROCE_MAX_PLANES];
	struct mroce_dev *mdev = conn->mdev;
	struct sk_buff *skb;
	struct mroce_cx *cx;
	u8 naddrs;

	lockdep_assert_held(&conn->lock);

	naddrs = mroce_cx_addrs(conn, addrs);
	skb = mroce_conn_alloc_pkt(conn, type, sizeof(*cx) + 16 * naddrs, 0);
	if (!skb)
		return;
	if (type == MROCE_T_CONNECT) {
		struct mroce_bth *bth = (struct mroce_bth *)skb->data;

		bth->dcid = 0;
		bth->token = 0;
	}
	cx = (struct mroce_cx *)(skb->data + sizeof(struct mroce_bth));
	cx->vmin_vmax = MROCE_VERSION << 4 | MROCE_VERSION;
	cx->num_addrs = naddrs;
	cx->caps = htons(MROCE_CAP_ATOMIC |
			 (conn->cx.hints ? MROCE_CAP_HINT : 0) |
			 (conn->cx.cack ? MROCE_CAP_CACK : 0));
	cx->epoch = cpu_to_be64(mdev->epoch);
	cx->token = cpu_to_be64(conn->local_token);
	cx->guid = mdev->ibdev.node_guid;
	cx->maxsh_rsvd = mroce_mtu_shift(READ_ONCE(mdev->active_mtu)) << 4;
	cx->max_rx_paths = MROCE_MAX_RX_PATHS;
	cx->seg_win_shift = MROCE_SEG_WIN_SHIFT;
	cx->rx_msg_slots = htonl(conn->cx.rx_slots);
	cx->max_streams = htonl(MROCE_MAX_QP);
	cx->max_ack_delay = htons(conn->cx.max_ack_delay);
	memcpy(cx + 1, addrs, 16 * naddrs);
	__skb_queue_tail(q, skb);
}

/* Send the CONNECT of a handshake in progress again.  conn->lock held. */
void mroce_conn_resend_connect(struct mroce_conn *conn, struct sk_buff_head *q)
{
	lockdep_assert_held(&conn->lock);

	mroce_count(conn->mdev, CONNECT_RETRIES);
	mroce_build_connect(conn, MROCE_T_CONNECT, q);
}

static enum hrtimer_restart mroce_conn_timer(struct hrtimer *t)
{
	struct mroce_conn *conn = container_of(t, struct mroce_conn, timer);
	struct sk_buff_head q;
	ktime_t now, next;
	u64 slack;

	__skb_queue_head_init(&q);
	mroce_conn_lock_bh(conn);
	now = mroce_conn_now(conn);
	if (conn->wake_at && !ktime_after(conn->wake_at, now))
		conn->wake_at = 0;
	if (conn->state == MROCE_CONN_CONNECTING) {
		if (conn->life.hs_at && ktime_after(conn->life.hs_at, now)) {
			/* not yet */
		} else if (conn->life.connect_tries++ <
			   READ_ONCE(mroce_connect_retries)) {
			mroce_conn_resend_connect(conn, &q);	/* C6 */
			mroce_conn_hs_retry_at(conn);
		} else {
			mroce_conn_fail(conn);		/* C7 */
		}
	} else if (conn->state == MROCE_CONN_ESTABLISHED ||
		   conn->state == MROCE_CONN_CLOSING) {
		mroce_ack_tick(conn, now, &q);
		mroce_path_timeout(conn, now, &q);
		mroce_sync_tick(conn, now, &q);
		mroce_retx_flush(conn, &q);
		mroce_rc_kick_waiters(conn, &q);
		mroce_conn_life_tick(conn, now, &q);
	} else if (!conn->reap_queued &&
		   !ktime_after(conn->life.tomb_at, now)) {
		conn->reap_queued = true;		/* C16 */
		queue_work(mroce_wq, &conn->reap_work);
	}
	/*
	 * Whatever is still due was declined by its handler just now: not
	 * again in this pass.  A deadline at or before now would make the
	 * hrtimer softirq run this again at once (it runs every timer that
	 * expired before the pass began), for ever if the handler keeps
	 * declining, and the CPU would never leave the softirq.  So until
	 * the next run, nobody arms the timer before 1 us after this one
	 * began (timer_floor), and it is set here over what a handler may
	 * have armed it for meanwhile.
	 */
	conn->timer_floor = ktime_add_us(now, 1);
	next = mroce_conn_next_event(conn, &slack);
	if (next != KTIME_MAX && !ktime_after(next, now))
		mroce_count(conn->mdev, TIMER_OVERDUE);
	else if (next == KTIME_MAX && hrtimer_is_queued(&conn->timer) &&
		 !ktime_after(hrtimer_get_softexpires(&conn->timer), now))
		next = conn->timer_floor;	/* armed for what went */
	if (next != KTIME_MAX)
		hrtimer_start_range_ns(&conn->timer,
				       max(next, conn->timer_floor), slack,
				       HRTIMER_MODE_ABS_SOFT);
	mroce_conn_tx_commit(conn, &q);
	mroce_conn_unlock_bh(conn);
	mroce_conn_xmit(conn);
	return HRTIMER_NORESTART;
}

/* The mdev->addr_conns bucket of connections from local to peer. */
static struct list_head *mroce_addr_bucket(struct mroce_dev *mdev,
					   const union ib_gid *local,
					   const union ib_gid *peer)
{
	u32 h = jhash(peer, sizeof(*peer), jhash(local, sizeof(*local), 0));

	return &mdev->addr_conns[h % MROCE_ADDR_BUCKETS];
}

static struct mroce_conn *mroce_conn_new(struct mroce_dev *mdev,
					 const union ib_gid *local,
					 const union ib_gid *peer)
{
	struct mroce_conn *conn;
	u32 cid;
	int err;

	conn = kvzalloc(sizeof(*conn), GFP_ATOMIC);
	if (!conn)
		return NULL;
	conn->mdev = mdev;
	spin_lock_init(&conn->lock);
	refcount_set(&conn->ref, 1);
	conn->local = *local;
	conn->peer = *peer;
	conn->cx.css_shift = mroce_mtu_shift(READ_ONCE(mdev->active_mtu));
	conn->cx.max_ack_delay = READ_ONCE(mroce_ack_coalesce_us);
	conn->cx.rx_slots = READ_ONCE(mroce_rx_msg_slots);
	conn->cx.hints = READ_ONCE(mroce_hint);
	conn->cx.cack = READ_ONCE(mroce_ack_carry);
	conn->rx.carry_for = MROCE_NO_CARRY;
	conn->rx.hinted_at = jiffies;
	hrtimer_init(&conn->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	conn->timer.function = mroce_conn_timer;
	xa_init(&conn->rx.trackers);
	mroce_conn_tx_init(conn);
	mroce_steer_init(conn);
	INIT_LIST_HEAD(&conn->streams.wait);
	INIT_LIST_HEAD(&conn->streams.slot_waiters);
	INIT_LIST_HEAD(&conn->tx.retxq);
	INIT_LIST_HEAD(&conn->streams.list);
	INIT_LIST_HEAD(&conn->streams.sr_pending);
	mroce_conn_init_life(conn);
	conn->life.hs_sport = mroce_pick_sport(conn, NULL);
	do {
		get_random_bytes(&conn->local_token, sizeof(conn->local_token));
	} while (!conn->local_token);

	/* Random CIDs, never 0 or ~0, unique on the device (spec 6.1.2). */
	do {
		cid = get_random_u32();
		if (!cid || cid == U32_MAX)
			continue;
		err = xa_insert(&mdev->conn_xa, cid, conn, GFP_ATOMIC);
	} while (err == -EBUSY || !cid || cid == U32_MAX);
	if (err) {
		kvfree(conn);
		return NULL;
	}
	conn->local_cid = cid;
	/* Oldest first: attach picks the oldest connection to a peer. */
	list_add_tail_rcu(&conn->list, &mdev->conns);
	list_add_tail(&conn->addr_entry, mroce_addr_bucket(mdev, local, peer));
	mroce_count(mdev, CONN_ACTIVE);
	return conn;
}

/* Is conn between these local and peer addresses? */
static bool mroce_conn_addrs_are(const struct mroce_conn *conn,
				 const union ib_gid *local,
				 const union ib_gid *peer)
{
	return !memcmp(&conn->peer, peer, sizeof(*peer)) &&
	       !memcmp(&conn->local, local, sizeof(*local));
}

/*
 * The connection of mdev to peer from local, or NULL: the oldest
 * confirmed one, else the newest half-open one, which carries nothing
 * until it is confirmed (spec 6.4).  The newest: a CONNECT sent in the
 * peer's name must have come after the peer's own to be taken.  Never
 * one under a restart check (6.7.2): a new stream is more likely for the
 * peer's new incarnation, and would fail with the old one; with none
 * left, the stream makes a connection of its own.  conns_lock held.
 */
static struct mroce_conn *mroce_conn_find(struct mroce_dev *mdev,
					  const union ib_gid *local,
					  const union ib_gid *peer)
{
	struct mroce_conn *conn, *unconfirmed = NULL;

	lockdep_assert_held(&mdev->conns_lock);

	list_for_each_entry(conn, mroce_addr_bucket(mdev, local, peer),
			    addr_entry) {
		if (conn->state > MROCE_CONN_ESTABLISHED ||
		    READ_ONCE(conn->life.restart_until) ||
		    !mroce_conn_addrs_are(conn, local, peer))
			continue;
		if (!conn->life.half_open)
			return conn;
		unconfirmed = conn;
	}
	return unconfirmed;
}

/*
 * Attach an RC QP (now in RTR) to the connection to its peer, creating and
 * starting one if there is none, and set up its stream (spec 6.5.2).
 */
int mroce_conn_attach(struct mroce_qp *qp)
{
	struct mroce_dev *mdev = to_mdev(qp->ibqp.device);
	struct mroce_stream *st = &qp->stream;
	struct mroce_conn *conn;
	struct sk_buff_head q;
	bool created = false;

	if (st->conn)
		return 0;
	__skb_queue_head_init(&q);
	spin_lock_bh(&mdev->conns_lock);
	conn = mroce_conn_find(mdev, &qp->av.sgid, &qp->av.dgid);
	if (!conn) {
		conn = mroce_conn_new(mdev, &qp->av.sgid, &qp->av.dgid);
		created = true;
	}
	if (!conn) {
		spin_unlock_bh(&mdev->conns_lock);
		return -ENOMEM;
	}
	mroce_conn_lock(conn);
	if (created) {
		conn->initiator = true;
		conn->state = MROCE_CONN_CONNECTING;
		mroce_build_connect(conn, MROCE_T_CONNECT, &q);
		mroce_conn_hs_retry_at(conn);
	} else if (conn->life.half_open && !conn->life.confirm_next) {
		/*
		 * Our stream waits for the peer to confirm the connection
		 * with our token (spec 6.4): ask it at once, as the
		 * initiator does (MRC-CONN-013), and again until it does.
		 */
		mroce_conn_confirm_probe(conn, ktime_get(), &q);
	}
	conn->streams.count++;
	conn->life.idle_at = 0;
	mroce_count(mdev, STREAMS_ACTIVE);
	st->close_sent = false;
	st->peer_closed = false;
	st->gone_at = 0;
	st->fatal_code = 0;
	st->nak_at = 0;
	WRITE_ONCE(st->conn, conn);
	INIT_LIST_HEAD(&st->wait_entry);
	INIT_LIST_HEAD(&st->sr_entry);
	list_add_tail(&st->conn_entry, &conn->streams.list);
	st->sync_at = 0;
	st->sync_backoff = 0;
	mroce_rc_stream_reset(qp);
	mroce_conn_tx_commit(conn, &q);
	/* Sent unlocked: a RESET may fail and tombstone conn meanwhile. */
	refcount_inc(&conn->ref);
	mroce_conn_unlock(conn);
	spin_unlock_bh(&mdev->conns_lock);
	mroce_conn_xmit(conn);
	mroce_conn_put(conn);
	return 0;
}

/*
 * The QP is destroyed or moves to RESET (reason 1 or 2): detach its stream,
 * with a STREAM_CLOSE unless one went for its failure (MRC-CONN-036).
 * Nothing of the transport refers to the QP afterwards.
 */
void mroce_conn_detach(struct mroce_qp *qp, u8 reason)
{
	struct mroce_stream *st = &qp->stream;
	struct mroce_conn *conn;
	struct sk_buff_head q;

	conn = mroce_stream_conn_get(qp);
	if (!conn) {
		st->peer_closed = false;
		return;
	}
	__skb_queue_head_init(&q);
	mroce_conn_lock_bh(conn);
	if (st->conn == conn) {
		if (!st->close_sent)
			mroce_stream_close(conn, qp, reason, &q);
		mroce_stream_unlink(conn, qp);
	}
	mroce_conn_tx_commit(conn, &q);
	mroce_conn_unlock_bh(conn);
	mroce_conn_xmit(conn);
	mroce_conn_put(conn);
	st->peer_closed = false;
}

/* The CX field rules of spec 5.7. */
static bool mroce_cx_ok(const struct mroce_cx *cx)
{
	u32 slots = ntohl(cx->rx_msg_slots);

	return (cx->vmin_vmax >> 4) <= MROCE_VERSION &&
	       (cx->vmin_vmax & 0xf) >= MROCE_VERSION &&
	       (cx->maxsh_rsvd >> 4) <= 4 && cx->seg_win_shift >= 6 &&
	       cx->seg_win_shift <= 16 && cx->token && slots >= 64 &&
	       slots <= 1048576;
}

/* Check a CX and take the peer's identity from it (spec 6.3). */
static int mroce_conn_take_cx(struct mroce_conn *conn, struct sk_buff *skb)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_cx *cx = (const struct mroce_cx *)(bth + 1);
	u8 maxsh = cx->maxsh_rsvd >> 4;
	/* Max Rx Paths 0 means 256 (spec 5.5.12); we use at most 64. */
	u32 max_paths = cx->max_rx_paths ?: 256;

	if (!mroce_cx_ok(cx))
		return -EINVAL;
	if (conn->tx.npaths && max_paths < conn->tx.npaths)
		return -EINVAL;		/* paths cannot be taken back */
	conn->peer_cid = ntohl(bth->scid);
	conn->peer_token = be64_to_cpu(cx->token);
	conn->peer_epoch = be64_to_cpu(cx->epoch);
	conn->peer_guid = cx->guid;
	conn->cx.peer_atomic = !!(cx->caps & htons(MROCE_CAP_ATOMIC));
	/* Carried ACKs both ways, or not at all (8.6). */
	conn->cx.peer_cack = conn->cx.cack &&
			     (cx->caps & htons(MROCE_CAP_CACK));
	if (!conn->tx.npaths)
		conn->cx.css_shift = min(conn->cx.css_shift, maxsh);
	conn->cx.peer_max_paths = min_t(u32, max_paths, MROCE_MAX_PATHS);
	/* Above 1000 us is out of the tunable's range: a peer's mistake. */
	conn->cx.peer_max_ack_delay = min_t(u16, ntohs(cx->max_ack_delay),
					    1000);
	conn->cx.peer_slots = ntohl(cx->rx_msg_slots);	/* 64.. checked */
	conn->cx.peer_seg_win_shift = cx->seg_win_shift;	/* 6..16 */
	conn->cx.npeer_addrs = min_t(u8, cx->num_addrs, MROCE_MAX_PLANES);
	memcpy(conn->cx.peer_addrs, cx + 1, 16 * conn->cx.npeer_addrs);
	if (conn->tx.npaths)
		return 0;
	return mroce_paths_create(conn);
}

static bool mroce_cx_len_ok(const struct mroce_bth *bth)
{
	const struct mroce_cx *cx = (const struct mroce_cx *)(bth + 1);

	if (bth->hdr_len * 4 < sizeof(*bth) + sizeof(*cx))
		return false;
	return cx->num_addrs >= 1 && cx->num_addrs <= 8 && !bth->payload_len &&
	       bth->hdr_len * 4 == sizeof(*bth) + sizeof(*cx) + 16 * cx->num_addrs;
}

/*
 * Is conn a connection to another incarnation of the peer at address peer
 * with GUID guid than the one of epoch (MRC-CONN-044)?  conns_lock held.
 */
static bool mroce_conn_other_epoch(const struct mroce_conn *conn,
				   const union ib_gid *peer, __be64 guid,
				   u64 epoch)
{
	int k;

	lockdep_assert_held(&conn->mdev->conns_lock);

	if (!conn->peer_epoch || conn->peer_guid != guid ||
	    conn->peer_epoch == epoch)
		return false;
	if (!memcmp(&conn->peer, peer, sizeof(*peer)))
		return true;
	for (k = 0; k < conn->cx.npeer_addrs; k++)
		if (!memcmp(&conn->cx.peer_addrs[k], peer, sizeof(*peer)))
			return true;
	return false;
}

/*
 * A CONNECT_ACK or RESET that proved our token, from the peer at address
 * peer with GUID guid, carries epoch: every connection to that peer with
 * another recorded epoch is of a previous incarnation of the peer and
 * fails (C15, MRC-CONN-044).  conns_lock held.
 */
static void mroce_conns_peer_epoch(struct mroce_dev *mdev,
				   const union ib_gid *peer, __be64 guid,
				   u64 epoch)
{
	struct mroce_conn *conn;

	lockdep_assert_held(&mdev->conns_lock);

	list_for_each_entry(conn, &mdev->conns, list) {
		if (!mroce_conn_other_epoch(conn, peer, guid, epoch))
			continue;
		mroce_conn_lock(conn);
		if (conn->state != MROCE_CONN_TOMBSTONE) {
			mroce_count(mdev, CONN_PEER_RESTART);
			mroce_conn_fail(conn);
		}
		mroce_conn_unlock(conn);
	}
}

/*
 * A CONNECT says the peer at address peer with GUID guid now has epoch.
 * Anybody can send one, so it proves nothing: each live connection to
 * another incarnation of that peer is checked with PROBEs instead, and
 * fails only if they go unanswered (MRC-CONN-044, spec 16.3).  True if
 * there is such a connection: the CONNECT waits for the outcome (its
 * initiator resends it).  conns_lock held.
 */
static bool mroce_conns_restart_check(struct mroce_dev *mdev,
				      const union ib_gid *peer, __be64 guid,
				      u64 epoch)
{
	struct mroce_conn *conn;
	bool found = false;

	lockdep_assert_held(&mdev->conns_lock);

	list_for_each_entry(conn, &mdev->conns, list) {
		if (!mroce_conn_other_epoch(conn, peer, guid, epoch))
			continue;
		mroce_conn_lock(conn);
		if (conn->state != MROCE_CONN_TOMBSTONE) {
			found = true;
			if (!conn->life.restart_until) {
				mroce_count(mdev, CONN_RESTART_CHECKS);
				mroce_conn_restart_check(conn);
			}
		}
		mroce_conn_unlock(conn);
	}
	return found;
}

/*
 * The connection a CONNECT from peer with SCID scid belongs to (spec
 * 6.3.2, 6.3.6): the one with that SCID; else a handshake of ours to the
 * same address (simultaneous open); else none, and the CONNECT opens a new
 * connection.  Sets *full when the peer already has its share of
 * connections.  conns_lock held.
 */
static struct mroce_conn *mroce_connect_match(struct mroce_dev *mdev,
					      const union ib_gid *local,
					      const union ib_gid *peer,
					      const struct mroce_bth *bth,
					      bool *full)
{
	const struct mroce_cx *cx = (const struct mroce_cx *)(bth + 1);
	struct mroce_conn *conn, *same_addr = NULL;
	u32 n = 0;

	lockdep_assert_held(&mdev->conns_lock);

	list_for_each_entry(conn, mroce_addr_bucket(mdev, local, peer),
			    addr_entry) {
		if (conn->state == MROCE_CONN_TOMBSTONE ||
		    !mroce_conn_addrs_are(conn, local, peer))
			continue;
		n++;
		if (conn->state != MROCE_CONN_CONNECTING &&
		    conn->peer_cid == ntohl(bth->scid) &&
		    conn->peer_epoch == be64_to_cpu(cx->epoch))
			return conn;
		if (!same_addr && conn->state == MROCE_CONN_CONNECTING)
			same_addr = conn;
	}
	*full = n >= READ_ONCE(mroce_max_conns_per_peer);
	return same_addr;
}

/*
 * Free the oldest half-open connection that a CONNECT made, with no local
 * stream waiting on it: of the peer address peer, or of any when peer is
 * NULL.  A CONNECT in an address's name costs nothing to send and its
 * connection carries no data, so such connections must not hold the slots
 * of max_half_open and max_conns_per_peer against the real owner of the
 * address, whose connection is half-open for one round trip only (spec
 * 16.3.1, 16.4).  True if one went.  conns_lock held.
 */
static bool mroce_connect_evict(struct mroce_dev *mdev,
				const union ib_gid *local,
				const union ib_gid *peer)
{
	struct mroce_conn *conn, *old;
	int tries;
	bool gone;

	lockdep_assert_held(&mdev->conns_lock);

	/*
	 * The scan reads without each connection's lock: a stream may attach
	 * to the one it picked before we lock it.  Then look again (a few
	 * times, not for ever: streams attach faster than we scan only when
	 * there is nothing to evict).
	 */
	for (tries = 0; tries < 4; tries++) {
		old = NULL;
		list_for_each_entry(conn, &mdev->conns, list) {
			if (!READ_ONCE(conn->life.half_open) ||
			    READ_ONCE(conn->streams.count) ||
			    READ_ONCE(conn->state) == MROCE_CONN_TOMBSTONE ||
			    (peer && !mroce_conn_addrs_are(conn, local, peer)))
				continue;
			if (!old || ktime_before(conn->life.half_open_until,
						 old->life.half_open_until))
				old = conn;
		}
		if (!old)
			return false;
		mroce_conn_lock(old);
		gone = old->life.half_open && !old->streams.count &&
		       old->state != MROCE_CONN_TOMBSTONE;
		if (gone) {
			mroce_count(mdev, CONN_HALF_OPEN_EVICTED);
			mroce_conn_tombstone(old);
		}
		mroce_conn_unlock(old);
		if (gone)
			return true;
	}
	return false;
}

/*
 * May a CONNECT from peer make a new connection (spec 16.4)?  0 if so;
 * -EBUSY past conn_rate_limit accepted CONNECTs this second (drop it
 * silently); -ENOSPC at max_conns_per_peer (full), max_half_open or
 * max_conns (RESET RESOURCE).  At a limit the oldest half-open connection
 * goes instead, if there is one, and only for a CONNECT whose CX is valid
 * (evict) and within the rate: one that will make its connection.
 * conns_lock held.
 */
static int mroce_connect_admit(struct mroce_dev *mdev,
			       const union ib_gid *local,
			       const union ib_gid *peer, bool full, bool evict)
{
	lockdep_assert_held(&mdev->conns_lock);

	if (mroce_rate_full(&mdev->connect_rl, READ_ONCE(mroce_conn_rate_limit)))
		return -EBUSY;
	if (full && !(evict && mroce_connect_evict(mdev, local, peer)))
		return -ENOSPC;
	if (mroce_counter_sum(mdev, MROCE_CNT_CONN_HALF_OPEN) >=
	    READ_ONCE(mroce_max_half_open) &&
	    !(evict && mroce_connect_evict(mdev, NULL, NULL)))
		return -ENOSPC;
	if (mroce_counter_sum(mdev, MROCE_CNT_CONN_ACTIVE) >=
	    READ_ONCE(mroce_max_conns) &&
	    !(evict && mroce_connect_evict(mdev, NULL, NULL)))
		return -ENOSPC;
	mdev->connect_rl.n++;
	return 0;
}

/* The prehs_conns bucket of a connection to peer whose CID there is cid. */
static u32 mroce_prehs_key(const union ib_gid *peer, u32 cid)
{
	return jhash(peer, sizeof(*peer), cid);
}

/* A CONNECT from peer (spec 6.3.2, 6.3.6, 6.7.2). */
static void mroce_rx_connect(struct mroce_dev *mdev, struct sk_buff *skb,
			     const union ib_gid *local,
			     const union ib_gid *peer)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_cx *cx = (const struct mroce_cx *)(bth + 1);
	struct mroce_conn *conn;
	struct sk_buff_head q;
	bool full = false;
	int err = 0;

	if (!mroce_cx_len_ok(bth) || bth->dcid || !bth->scid) {
		mroce_count(mdev, DROP_BAD_HEADER);
		return;
	}
	__skb_queue_head_init(&q);
	spin_lock_bh(&mdev->conns_lock);
	/* A new epoch of a known peer: it may have restarted (6.7.2). */
	if (mroce_cx_ok(cx) &&
	    mroce_conns_restart_check(mdev, peer, cx->guid,
				      be64_to_cpu(cx->epoch))) {
		spin_unlock_bh(&mdev->conns_lock);
		mroce_count(mdev, DROP_UNCONFIRMED);
		return;
	}
	conn = mroce_connect_match(mdev, local, peer, bth, &full);
	if (!conn) {
		err = mroce_connect_admit(mdev, local, peer, full,
					  mroce_cx_ok(cx));
		if (!err) {
			conn = mroce_conn_new(mdev, local, peer);
			if (!conn)
				err = -ENOSPC;
		}
	}
	if (!conn) {
		spin_unlock_bh(&mdev->conns_lock);
		if (err == -EBUSY) {
			mroce_count(mdev, DROP_RATE_LIMITED);
			return;
		}
		mroce_count(mdev, CONN_REJECTED);	/* C3 */
		mroce_reset_stateless(mdev, skb, local, peer,
				      MROCE_RST_RESOURCE,
				      READ_ONCE(mroce_half_open_timeout_ms));
		return;
	}
	mroce_conn_lock(conn);
	if (conn->state != MROCE_CONN_CONNECTING) {
		/*
		 * A resent CONNECT: answer it again, create nothing (C9); at
		 * most once per rto_initial_us, so that CONNECTs sent in the
		 * peer's name are not reflected at it (spec 16.4).
		 */
		ktime_t now = ktime_get();

		if (!mroce_token_eq(conn->peer_token, cx->token)) {
			mroce_count(mdev, DROP_BAD_TOKEN);
		} else if (conn->life.cack_at &&
			   ktime_us_delta(now, conn->life.cack_at) <
			   READ_ONCE(mroce_rto_initial_us)) {
			mroce_count(mdev, DROP_RATE_LIMITED);
		} else {
			conn->life.cack_at = now;
			mroce_build_connect(conn, MROCE_T_CONNECT_ACK, &q);
		}
	} else if (!mroce_conn_take_cx(conn, skb)) {
		/* New (C2), or simultaneous open (C5). */
		mroce_count(mdev, CONN_ESTABLISHED);
		if (!conn->initiator) {
			mroce_conn_half_open_start(conn);
			/* Found by its pre-handshake form (MRC-CONN-021). */
			hash_add_rcu(mdev->prehs_conns, &conn->prehs_node,
				     mroce_prehs_key(peer, conn->peer_cid));
		}
		conn->state = MROCE_CONN_ESTABLISHED;
		conn->life.hs_at = 0;
		mroce_rxpaths_free(conn);
		mroce_build_connect(conn, MROCE_T_CONNECT_ACK, &q);
		mroce_rc_kick_waiters(conn, &q);
		mroce_conn_idle_check(conn);
	} else {
		/* An invalid CX: RESET PROTOCOL (spec 5.7). */
		mroce_count(mdev, DROP_BAD_HEADER);
		if (!conn->initiator)
			mroce_conn_tombstone(conn);	/* made for it */
		mroce_reset_stateless(mdev, skb, local, peer,
				      MROCE_RST_PROTOCOL, 0);
	}
	if (!skb_queue_empty(&q))
		mroce_reply_to(skb_peek(&q), skb);
	mroce_conn_tx_commit(conn, &q);
	refcount_inc(&conn->ref);	/* sent unlocked */
	mroce_conn_unlock(conn);
	spin_unlock_bh(&mdev->conns_lock);
	mroce_conn_xmit(conn);
	mroce_conn_put(conn);
}

/*
 * A CONNECT_ACK for our CONNECT (spec 6.3.1).  Returns the peer's epoch
 * when it completes the handshake, for the caller to fail the peer's
 * connections of other epochs once conn->lock is released (MRC-CONN-044);
 * else 0.
 */
static u64 mroce_rx_connect_ack(struct mroce_conn *conn, struct sk_buff *skb,
				struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;

	lockdep_assert_held(&conn->lock);

	if (!mroce_cx_len_ok(bth)) {
		mroce_count(conn->mdev, DROP_BAD_HEADER);
		return 0;
	}
	if (conn->state != MROCE_CONN_CONNECTING) {
		if (conn->peer_cid != ntohl(bth->scid) ||
		    conn->peer_epoch != be64_to_cpu(((const struct mroce_cx *)
						     (bth + 1))->epoch))
			mroce_count(conn->mdev, DROP_BAD_HEADER);
		return 0;
	}
	if (mroce_conn_take_cx(conn, skb)) {
		mroce_count(conn->mdev, DROP_BAD_HEADER);
		return 0;
	}
	conn->state = MROCE_CONN_ESTABLISHED;
	conn->life.hs_at = 0;
	mroce_rxpaths_free(conn);
	mroce_count(conn->mdev, CONN_ESTABLISHED);
	mroce_path_confirm(conn, q);
	mroce_rc_kick_waiters(conn, q);
	mroce_conn_idle_check(conn);
	return conn->peer_epoch;
}

/* The RC QP a stream packet of conn is for, referenced, or NULL. */
static struct mroce_qp *mroce_stream_qp(struct mroce_conn *conn,
					const struct mroce_sx *sx)
{
	u32 dqpn = ntohl(sx->segsh_dqpn) & MROCE_QPN_MASK;
	u32 sqpn = ntohl(sx->sqpn) & MROCE_QPN_MASK;
	struct mroce_qp *qp;

	qp = mroce_qp_get(conn->mdev, dqpn);
	if (!qp)
		return NULL;
	if (qp->ibqp.qp_type != IB_QPT_RC || qp->stream.conn != conn ||
	    qp->attr.dest_qp_num != sqpn) {
		mroce_qp_put(qp);
		return NULL;
	}
	return qp;
}

/*
 * Is qpn an RC QP that exists but is not in RTR yet (RESET or INIT)?  Its
 * stream cannot attach: NAK NOT_READY (MRC-CONN-033).
 */
static bool mroce_qp_not_ready(struct mroce_dev *mdev, u32 qpn)
{
	struct mroce_qp *qp = mroce_qp_get(mdev, qpn);
	bool not_ready;

	if (!qp)
		return false;
	not_ready = qp->ibqp.qp_type == IB_QPT_RC &&
		    READ_ONCE(qp->state) < IB_QPS_RTR;
	mroce_qp_put(qp);
	return not_ready;
}

/* The stream header rules of spec 5.5.1 and 5.7, before any state changes. */
static bool mroce_seq_hdr_ok(struct mroce_conn *conn,
			     const struct mroce_bth *bth)
{
	const struct mroce_sx *sx = (const struct mroce_sx *)(bth + 1);
	u32 plen = ntohs(bth->payload_len), off = ntohl(sx->offset);
	u32 len = ntohl(sx->msg_len);
	u8 shift = ntohl(sx->segsh_dqpn) >> 28;
	bool last = ntohs(bth->flags) & MROCE_F_LAST;
	u32 seg = 256U << shift, hdr = sizeof(*bth) + mroce_ext_len(bth->type);

	/* A carried AKX follows the type's extensions (8.6). */
	if (ntohs(bth->flags) & MROCE_F_AKX)
		hdr += sizeof(struct mroce_akx);
	if (bth->hdr_len * 4 != hdr ||
	    shift > conn->cx.css_shift || len > 0x80000000U)
		return false;
	switch (bth->type) {
	case MROCE_T_READ_REQ:
		return !plen && !off && last;
	case MROCE_T_ATOMIC_CS:
	case MROCE_T_ATOMIC_FA:
	case MROCE_T_ATOMIC_RESP:
		return !plen && !off && last && len == 8;
	case MROCE_T_STREAM_CLOSE:
		return mroce_stream_close_hdr_ok(bth);
	default:
		break;
	}
	/* Segments of SEND*, WRITE*, READ_RESP. */
	if (off & (seg - 1) || plen > seg || (u64)off + plen > len)
		return false;
	if (last != (off + plen == len))
		return false;
	return last || plen == seg;
}

/*
 * A path took an acknowledgment and may carry more: resend what waits for
 * a path, then let the streams waiting for room go.  conn->lock held.
 */
static void mroce_conn_tx_room(struct mroce_conn *conn, struct sk_buff_head *q)
{
	mroce_retx_flush(conn, q);
	mroce_rc_kick_waiters(conn, q);
}

/*
 * The AKX a sequenced packet carries (8.6): processed as an ACK for our
 * path Acked Path ID, without Stream Records or Rate Hint.  False if it is
 * malformed: the whole packet is dropped.
 */
static bool mroce_rx_carried_akx(struct mroce_conn *conn,
				 const struct sk_buff *skb,
				 struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_akx *akx = (const void *)(skb->data + sizeof(*bth) +
						     mroce_ext_len(bth->type));

	if (!conn->cx.cack || akx->num_sr || akx->reserved ||
	    akx->acked_path_id >= conn->tx.npaths)
		return false;
	mroce_count(conn->mdev, ACKS_CARRIED_RCVD);
	if (mroce_loss_process_akx(conn, conn->tx.paths[akx->acked_path_id],
				   akx, NULL, q))
		mroce_conn_tx_room(conn, q);
	return true;
}

/* A sequenced packet of an established connection (spec 7.3, 10, 11). */
static void mroce_rx_sequenced(struct mroce_conn *conn, struct sk_buff *skb,
			       struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_sx *sx = (const struct mroce_sx *)(bth + 1);
	struct mroce_qp *qp = NULL;
	bool taken;
	int class;

	lockdep_assert_held(&conn->lock);

	conn->rx.carried = false;
	if (!mroce_seq_hdr_ok(conn, bth) ||
	    (ntohs(bth->flags) & MROCE_F_AKX &&
	     !mroce_rx_carried_akx(conn, skb, q))) {
		mroce_count(conn->mdev, DROP_BAD_HEADER);
		return;
	}
	class = mroce_rxpath_accept(conn, skb);
	if (class < 0)
		return;		/* out of window: dropped and counted */
	if (class == 0) {
		/* Already processed: acknowledge again, do nothing else. */
		mroce_rxpath_commit(conn, skb, class);
		mroce_cc_rx_count(conn, skb);
		mroce_send_ack(conn, skb, NULL, q);
		return;
	}
	qp = mroce_stream_qp(conn, sx);
	if (bth->type == MROCE_T_STREAM_CLOSE) {
		/*
		 * Not attached, or for an earlier incarnation: acknowledged,
		 * else ignored (MRC-CONN-038, MRC-CONN-057).
		 */
		if (qp)
			mroce_rx_stream_close(conn, qp, skb);
		mroce_rxpath_commit(conn, skb, class);
		mroce_cc_rx_count(conn, skb);
		mroce_send_ack(conn, skb, NULL, q);
		if (qp)
			mroce_qp_put(qp);
		return;
	}
	if (!qp) {
		mroce_count(conn->mdev, DROP_NO_STREAM);
		if (mroce_qp_not_ready(conn->mdev,
				       ntohl(sx->segsh_dqpn) & MROCE_QPN_MASK))
			mroce_send_nak(conn, skb, MROCE_NAK_NOT_READY, 0,
				       READ_ONCE(mroce_not_ready_wait_us), q);
		else if (mroce_stomb_nak_ok(conn,
					    ntohl(sx->segsh_dqpn) &
					    MROCE_QPN_MASK,
					    ntohl(sx->sqpn) & MROCE_QPN_MASK))
			mroce_send_nak(conn, skb, MROCE_NAK_STREAM_CLOSED, 0, 0,
				       q);
	} else if (mroce_ptype_is(bth->type, MROCE_PT_REPLY)) {
		/*
		 * Requests the response lets go (max_rd_atomic, a fence)
		 * leave now, and the first may carry its ACK (MRC-ACK-022).
		 */
		conn->rx.carry_for = bth->path_id;
		taken = mroce_rc_rx_response(conn, qp, skb);
		if (taken && conn->cx.peer_cack)
			mroce_rc_kick_waiters(conn, q);
		conn->rx.carry_for = MROCE_NO_CARRY;
		if (!taken) {
			mroce_qp_put(qp);
			return;
		}
	} else {
		/* The first packet its processing sends may carry its ACK. */
		conn->rx.carry_for = bth->path_id;
		taken = mroce_rc_rx_request(conn, qp, skb, q);
		conn->rx.carry_for = MROCE_NO_CARRY;
		if (!taken) {
			/* Refused (no tracker, segment window): 7.3.2 */
			mroce_qp_put(qp);
			return;
		}
	}
	mroce_rxpath_commit(conn, skb, class);
	mroce_cc_rx_count(conn, skb);
	mroce_count(conn->mdev, RX_DATA_PACKETS);
	mroce_ack_committed(conn, skb, qp, q);
	if (qp)
		mroce_qp_put(qp);
}

/* The plane whose address of conn is local; 0 if none is. */
static u8 mroce_conn_plane_of(struct mroce_conn *conn,
			      const union ib_gid *local)
{
	int i;

	for (i = 1; i < MROCE_MAX_PLANES; i++)
		if ((conn->cx.planes_paired & BIT(i)) &&
		    !memcmp(&conn->cx.laddr[i], local, sizeof(*local)))
			return i;
	return 0;
}

/*
 * The connection of a packet in the pre-handshake form (DCID 0, spec
 * 6.3.3), other than a CONNECT or RESET: one we created from a CONNECT
 * from the packet's source address with its SCID, whose initiator's token
 * it carries (MRC-CONN-021).  Rechecked under conn->lock.  RCU held.
 */
static struct mroce_conn *mroce_prehandshake_conn(struct mroce_dev *mdev,
						  const struct mroce_bth *bth,
						  const union ib_gid *peer)
{
	struct mroce_conn *conn;

	if (bth->type == MROCE_T_RESET)
		return NULL;
	hash_for_each_possible_rcu(mdev->prehs_conns, conn, prehs_node,
				   mroce_prehs_key(peer, ntohl(bth->scid)))
		if (READ_ONCE(conn->state) != MROCE_CONN_TOMBSTONE &&
		    READ_ONCE(conn->peer_cid) == ntohl(bth->scid) &&
		    mroce_token_eq(READ_ONCE(conn->peer_token), bth->token) &&
		    !memcmp(&conn->peer, peer, sizeof(*peer)))
			return conn;
	return NULL;
}

/* The packet's destination (ours) and source (the peer's) as GIDs. */
static void mroce_rx_addrs(const struct sk_buff *skb, union ib_gid *local,
			   union ib_gid *peer)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)local->raw);
		ipv6_addr_set_v4mapped(ip_hdr(skb)->saddr,
				       (struct in6_addr *)peer->raw);
	} else {
		memcpy(local->raw, &ipv6_hdr(skb)->daddr, 16);
		memcpy(peer->raw, &ipv6_hdr(skb)->saddr, 16);
	}
}

/*
 * What is handled without a connection: a CONNECT, and anything asking for
 * authentication, which this device does not have.  True if skb was one.
 */
static bool mroce_rx_connless(struct mroce_dev *mdev, struct sk_buff *skb,
			      const union ib_gid *local,
			      const union ib_gid *peer)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;

	if (bth->type == MROCE_T_CONNECT && mroce_cx_len_ok(bth) &&
	    (((const struct mroce_cx *)(bth + 1))->caps &
	     htons(MROCE_CAP_AUTH))) {
		/*
		 * Authentication offered, and this device has no
		 * authentication mode: RESET AUTH (MRC-CONN-027).
		 */
		mroce_count(mdev, DROP_AUTH);
		mroce_reset_stateless(mdev, skb, local, peer, MROCE_RST_AUTH,
				      0);
		return true;
	}
	if (ntohs(bth->flags) & MROCE_F_MAC) {
		mroce_count(mdev, DROP_AUTH);	/* no authentication mode */
		return true;
	}
	if (bth->type == MROCE_T_CONNECT) {
		mroce_count(mdev, RX_PACKETS);
		mroce_rx_connect(mdev, skb, local, peer);
		return true;
	}
	return false;
}

/*
 * May skb act on conn?  It must carry the connection's token and, once
 * established, the peer's CID; an unconfirmed connection is confirmed only
 * by our token, never by the pre-handshake form.  conn->lock held.
 */
static bool mroce_conn_rx_ok(struct mroce_conn *conn,
			     const struct sk_buff *skb, struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	/* The pre-handshake form carries the initiator's own token. */
	u64 token = bth->dcid ? conn->local_token : conn->peer_token;

	lockdep_assert_held(&conn->lock);

	/* A CONNECT_ACK's SCID is checked as the handshake's (MRC-CONN-014). */
	if (!mroce_token_eq(token, bth->token) ||
	    (conn->state != MROCE_CONN_CONNECTING &&
	     bth->type != MROCE_T_CONNECT_ACK &&
	     ntohl(bth->scid) != conn->peer_cid)) {
		mroce_count(conn->mdev, DROP_BAD_TOKEN);
		return false;
	}
	if (conn->life.half_open) {
		/*
		 * The pre-handshake form carries the initiator's token, which
		 * anybody who sent the CONNECT in its name chose: it proves
		 * nothing, and an unconfirmed connection takes nothing of it.
		 * Only our token, which went to the CONNECT's source address
		 * alone, confirms the connection (spec 6.4, 16.3).
		 */
		if (!bth->dcid) {
			mroce_count(conn->mdev, DROP_UNCONFIRMED);
			return false;
		}
		mroce_conn_half_open_end(conn);
		mroce_rc_kick_waiters(conn, q);	/* our streams go */
	}
	return true;
}

/* An ACK for one of our paths (spec 8.4), with Stream Records. */
static void mroce_rx_ack(struct mroce_conn *conn, struct sk_buff *skb,
			 struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_akx *akx = (const struct mroce_akx *)(bth + 1);
	const struct mroce_sr *sr = (const struct mroce_sr *)(akx + 1);
	u32 i;

	lockdep_assert_held(&conn->lock);

	/* The fixed part is there before num_sr is read. */
	if (bth->hdr_len * 4 < sizeof(*bth) + sizeof(*akx) ||
	    akx->num_sr > 58 || bth->payload_len ||
	    bth->hdr_len * 4 != sizeof(*bth) + sizeof(*akx) + 16 * akx->num_sr ||
	    bth->path_id >= conn->tx.npaths) {
		mroce_count(conn->mdev, DROP_BAD_HEADER);
		return;
	}
	mroce_count(conn->mdev, ACKS_RCVD);
	mroce_cc_take_hint(conn, ntohs(akx->rate_hint), ntohl(bth->psn));
	if (!mroce_loss_process_akx(conn, conn->tx.paths[bth->path_id], akx,
				    NULL, q))
		return;
	for (i = 0; i < akx->num_sr; i++)
		mroce_rc_rx_sr(conn, &sr[i]);
	mroce_conn_tx_room(conn, q);
}

/*
 * Hand an accepted packet to the role that handles its type.  Returns the
 * peer's epoch if a CONNECT_ACK established the connection, else 0.
 * conn->lock held.
 */
static u64 mroce_conn_rx_dispatch(struct mroce_conn *conn,
				  struct sk_buff *skb, struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	struct mroce_dev *mdev = conn->mdev;

	lockdep_assert_held(&conn->lock);

	if (bth->type == MROCE_T_CONNECT_ACK)
		return mroce_rx_connect_ack(conn, skb, q);
	if (conn->state == MROCE_CONN_CONNECTING) {
		mroce_count(mdev, DROP_NO_CONN);
	} else if (bth->type == MROCE_T_CONN_CLOSE) {
		mroce_rx_conn_close(conn, skb, q);
	} else if (mroce_is_sequenced(bth->type)) {
		mroce_rx_sequenced(conn, skb, q);
	} else if (bth->type == MROCE_T_ACK) {
		mroce_rx_ack(conn, skb, q);
	} else if (bth->type == MROCE_T_SYNC) {
		mroce_rx_sync(conn, skb, q);
	} else if (bth->type == MROCE_T_PROBE) {
		mroce_rx_probe(conn, skb, q);
	} else if (bth->type == MROCE_T_PROBE_REPLY) {
		if (mroce_path_rx_probe_reply(conn, skb, q))
			mroce_conn_tx_room(conn, q);
	} else if (bth->type == MROCE_T_NAK) {
		if (bth->hdr_len * 4 == sizeof(*bth) + sizeof(struct mroce_nkx))
			mroce_rc_rx_nak(conn, (void *)(bth + 1));
		else
			mroce_count(mdev, DROP_BAD_HEADER);
		mroce_rc_kick_waiters(conn, q);
	} else {
		mroce_count(mdev, DROP_BAD_HEADER);
	}
	return 0;
}

/*
 * One packet of conn's, within a hold of conn->lock that may take several
 * (mroce_conn_rcv_pkts()).  Returns the peer's epoch if a CONNECT_ACK
 * established the connection or a RESET ended it, else 0.
 */
static u64 mroce_conn_rcv_one(struct mroce_conn *conn, struct sk_buff *skb,
			      struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	struct mroce_dev *mdev = conn->mdev;
	union ib_gid local, peer;
	bool unconfirmed;
	u64 epoch;

	lockdep_assert_held(&conn->lock);

	if (conn->state == MROCE_CONN_TOMBSTONE) {
		mroce_count(mdev, DROP_NO_CONN);	/* silently (C17) */
		return 0;
	}
	if (bth->type == MROCE_T_RESET) {
		/* Its token may be the one a spoofed CONNECT chose. */
		unconfirmed = conn->life.half_open;
		epoch = mroce_rx_reset(conn, skb, q);
		return unconfirmed ? 0 : epoch;
	}
	if (!mroce_conn_rx_ok(conn, skb, q))
		return 0;
	/* The peer of this incarnation answers: no restart (6.7.2). */
	conn->life.restart_until = 0;
	conn->life.restart_next = 0;
	mroce_count(mdev, RX_PACKETS);
	mroce_count_add(mdev, RX_BYTES, skb->len + MROCE_CRC_LEN);
	mroce_rx_addrs(skb, &local, &peer);
	mroce_cb(skb)->plane = mroce_conn_plane_of(conn, &local);
	return mroce_conn_rx_dispatch(conn, skb, q);
}

/* Packets of one connection taken under one hold of its lock, at most. */
#define MROCE_RX_HOLD_PKTS	64

/*
 * Take pkts, packets of conn that passed the checks of spec 4.7, in order:
 * up to MROCE_RX_HOLD_PKTS under one hold of conn->lock, with one clock
 * reading, one timer evaluation and one send of what they produced per
 * hold.  A packet from a restarted peer ends its hold: the peer's
 * connections of other epochs fail before the next (6.7.2).  Consumes
 * the packets.  Bottom halves off or on, under RCU or with a reference of
 * conn.
 */
void mroce_conn_rcv_pkts(struct mroce_conn *conn, struct sk_buff_head *pkts)
{
	struct mroce_dev *mdev = conn->mdev;
	struct sk_buff_head q, done;
	union ib_gid local, peer;
	struct sk_buff *skb;
	__be64 guid = 0;
	u64 epoch;
	u32 n;

	__skb_queue_head_init(&done);
	while (!skb_queue_empty(pkts)) {
		__skb_queue_head_init(&q);
		epoch = 0;
		n = 0;
		mroce_conn_lock_bh(conn);
		while (!epoch && n++ < MROCE_RX_HOLD_PKTS &&
		       (skb = __skb_dequeue(pkts))) {
			epoch = mroce_conn_rcv_one(conn, skb, &q);
			if (epoch) {
				mroce_rx_addrs(skb, &local, &peer);
				guid = conn->peer_guid;
			}
			__skb_queue_tail(&done, skb);
		}
		mroce_conn_arm_timer(conn);
		mroce_conn_tx_commit(conn, &q);
		mroce_conn_unlock_bh(conn);
		mroce_conn_xmit(conn);
		__skb_queue_purge_reason(&done, SKB_CONSUMED);
		/* The peer restarted: its connections of other epochs fail. */
		if (epoch) {
			spin_lock_bh(&mdev->conns_lock);
			mroce_conns_peer_epoch(mdev, &peer, guid, epoch);
			spin_unlock_bh(&mdev->conns_lock);
		}
	}
}

/*
 * A packet for the connection layer: demultiplex by DCID, or by source
 * address and SCID for the pre-handshake form, and check the token (spec
 * 6.3.5), on the connection's home CPU (rxsteer.c), then dispatch.
 * Softirq; the framing was checked.  Consumes skb.
 */
void mroce_conn_rcv(struct mroce_dev *mdev, struct sk_buff *skb)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	union ib_gid local, peer;
	struct sk_buff_head pkts;
	struct mroce_conn *conn;

	mroce_rx_addrs(skb, &local, &peer);
	if (mroce_rx_connless(mdev, skb, &local, &peer))
		goto out;

	rcu_read_lock();
	conn = bth->dcid ? xa_load(&mdev->conn_xa, ntohl(bth->dcid)) :
	       mroce_prehandshake_conn(mdev, bth, &peer);
	if (!conn) {
		rcu_read_unlock();
		mroce_count(mdev, DROP_NO_CONN);
		/*
		 * No connection, no tombstone (spec 6.3.5): a stateless
		 * RESET; for the pre-handshake form, CONNECT_REQUIRED.
		 */
		mroce_reset_stateless(mdev, skb, &local, &peer, bth->dcid ?
				      MROCE_RST_NO_CONNECTION :
				      MROCE_RST_CONNECT_REQUIRED, 0);
		goto out;
	}
	if (!mroce_steer(conn, skb)) {
		__skb_queue_head_init(&pkts);
		__skb_queue_tail(&pkts, skb);
		mroce_conn_rcv_pkts(conn, &pkts);
	}
	rcu_read_unlock();	/* conn may be freed after a grace period */
	return;
out:
	consume_skb(skb);
}

/* What a plane event does to one established connection. */
struct mroce_plane_ev {
	int plane;
	bool up;
	bool removed;
	bool added;
};

/*
 * May conn use plane now?  Up, and its MTU never fell below what the
 * connection segment size needs (MRC-ENC-024).  Any context.
 */
bool mroce_conn_plane_usable(struct mroce_conn *conn, int plane)
{
	return !(conn->cx.planes_small & BIT(plane)) &&
	       mroce_plane_up(conn->mdev, plane);
}

/*
 * Does plane's MTU still take conn's segments?  Once it did not, the
 * plane stays unused by conn for good (MRC-ENC-024).  RCU or RTNL held.
 */
static bool mroce_conn_plane_fits(struct mroce_conn *conn, int plane)
{
	struct net_device *ndev = mroce_plane_dev(conn->mdev, plane);

	if (ndev && READ_ONCE(ndev->mtu) <
	    (256U << conn->cx.css_shift) + MROCE_MAX_HDR_OVERHEAD)
		conn->cx.planes_small |= BIT(plane);
	return !(conn->cx.planes_small & BIT(plane));
}

static void mroce_conn_plane_ev(struct mroce_conn *conn,
				const struct mroce_plane_ev *ev,
				struct sk_buff_head *q)
{
	lockdep_assert_held(&conn->lock);

	if (ev->added) {
		mroce_conn_pair_planes(conn);
		if (conn->cx.planes_paired & BIT(ev->plane) &&
		    mroce_conn_plane_fits(conn, ev->plane))
			mroce_paths_add_plane(conn, ev->plane, true, q);
	} else if (ev->up && !ev->removed &&
		   mroce_conn_plane_fits(conn, ev->plane)) {
		mroce_conn_plane_up(conn, ev->plane, q);
	} else {
		mroce_paths_plane_down(conn, ev->plane, ev->removed, q);
	}
	mroce_retx_flush(conn, q);
	mroce_rc_kick_waiters(conn, q);
	mroce_conn_arm_timer(conn);
}

/* Apply a plane event to every established connection of mdev.  RTNL. */
static void mroce_conns_plane(struct mroce_dev *mdev,
			      const struct mroce_plane_ev *ev)
{
	struct mroce_conn *conn;
	struct sk_buff_head q;

	rcu_read_lock();
	list_for_each_entry_rcu(conn, &mdev->conns, list) {
		__skb_queue_head_init(&q);
		mroce_conn_lock_bh(conn);
		if (conn->state == MROCE_CONN_ESTABLISHED ||
		    conn->state == MROCE_CONN_CLOSING)
			mroce_conn_plane_ev(conn, ev, &q);
		mroce_conn_tx_commit(conn, &q);
		mroce_conn_unlock_bh(conn);
		mroce_conn_xmit(conn);
	}
	rcu_read_unlock();
}

/*
 * A plane changed state (spec 7.9): its paths fail at once when it goes
 * down or is removed, and are probed at once when it comes back.
 */
void mroce_conns_plane_event(struct mroce_dev *mdev, int plane, bool up,
			     bool removed)
{
	struct mroce_plane_ev ev = { .plane = plane, .up = up,
				     .removed = removed };

	mroce_conns_plane(mdev, &ev);
}

/* A plane was added: established connections put paths on it (P2). */
void mroce_conns_plane_added(struct mroce_dev *mdev, int plane)
{
	struct mroce_plane_ev ev = { .plane = plane, .added = true };

	mroce_conns_plane(mdev, &ev);
}
