// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The life of a connection after its handshake (spec 6.2, 6.5.5, 6.6,
 * 6.7.4, 6.8): failure, which fails every stream; the TOMBSTONE state,
 * which keeps the CID reserved for tombstone_ms and then frees the
 * connection; idle reclaim and the dead-connection timer.
 *
 * References: mdev->conns holds one until the tombstone expires; a QP's
 * stream only points at its connection while attached, and users outside
 * conn->lock take a temporary reference (mroce_stream_conn_get).  The
 * last put frees the connection after an RCU grace period, in process
 * context, so receivers that found it by CID under RCU are done with it.
 */
#include <linux/slab.h>

#include "close.h"
#include "conn.h"
#include "lifecycle.h"
#include "net.h"
#include "path.h"
#include "rc_req.h"
#include "rc_resp.h"
#include "rxpath.h"
#include "stream.h"
#include "sync.h"
#include "tunables.h"
#include "verbs.h"

/* The connection qp's stream is attached to, referenced, or NULL. */
struct mroce_conn *mroce_stream_conn_get(struct mroce_qp *qp)
{
	struct mroce_conn *conn;

	rcu_read_lock();
	conn = READ_ONCE(qp->stream.conn);
	if (conn && !refcount_inc_not_zero(&conn->ref))
		conn = NULL;
	rcu_read_unlock();
	return conn;
}

/* Free conn, unlisted and unreferenced.  Process context. */
void mroce_conn_free(struct mroce_conn *conn)
{
	struct mroce_dev *mdev = conn->mdev;
	unsigned long idx;
	void *t;

	hrtimer_cancel(&conn->timer);
	cancel_work_sync(&conn->tx.work);
	skb_queue_purge(&conn->tx.q);
	mroce_steer_purge(conn);
	mroce_retx_drop_qp(conn, NULL);
	mroce_paths_free(conn);
	mroce_rxpaths_free(conn);
	xa_for_each(&conn->rx.trackers, idx, t)
		kfree(t);
	xa_destroy(&conn->rx.trackers);
	kfree(conn->rx.spare_tracker);
	kvfree(conn);
	if (atomic_dec_and_test(&mdev->conns_freeing))
		wake_up_var(&mdev->conns_freeing);
}

static void mroce_conn_free_work(struct work_struct *work)
{
	mroce_conn_free(container_of(to_rcu_work(work), struct mroce_conn,
				     free_rwork));
}

void mroce_conn_put(struct mroce_conn *conn)
{
	if (refcount_dec_and_test(&conn->ref))
		queue_rcu_work(mroce_wq, &conn->free_rwork);
}

/*
 * Take conn off the device; true if this call did.  Drops no reference;
 * counts the connection in conns_freeing until it is freed.
 */
static bool mroce_conn_unlist(struct mroce_conn *conn)
{
	struct mroce_dev *mdev = conn->mdev;
	bool done = false;

	spin_lock_bh(&mdev->conns_lock);
	if (!conn->unlisted) {
		list_del_rcu(&conn->list);
		list_del(&conn->addr_entry);
		if (!hlist_unhashed(&conn->prehs_node))
			hash_del_rcu(&conn->prehs_node);
		xa_erase(&mdev->conn_xa, conn->local_cid);
		conn->unlisted = true;
		atomic_inc(&mdev->conns_freeing);
		done = true;
	}
	spin_unlock_bh(&mdev->conns_lock);
	return done;
}

/* The tombstone expired (C16): release the CID and the list's reference. */
static void mroce_conn_reap(struct work_struct *work)
{
	struct mroce_conn *conn = container_of(work, struct mroce_conn,
					       reap_work);

	if (mroce_conn_unlist(conn))
		mroce_conn_put(conn);
}

/*
 * Device removal: every QP is gone, and no receive or lookup can reach the
 * device's connections any more (the device left the device list an RCU
 * grace period ago).  Stop every connection's timers and work, free them,
 * and wait for the frees already queued; a device without connections
 * does not wait at all.
 */
void mroce_conns_destroy(struct mroce_dev *mdev)
{
	struct mroce_conn *conn;

	for (;;) {
		spin_lock_bh(&mdev->conns_lock);
		conn = list_first_entry_or_null(&mdev->conns,
						struct mroce_conn, list);
		spin_unlock_bh(&mdev->conns_lock);
		if (!conn)
			break;
		hrtimer_cancel(&conn->timer);
		cancel_work_sync(&conn->reap_work);
		if (conn->state != MROCE_CONN_TOMBSTONE)
			this_cpu_dec(mdev->stats->c[MROCE_CNT_CONN_ACTIVE]);
		mroce_conn_half_open_end(conn);
		/* Unreferenced otherwise: free now, not after a grace period. */
		if (mroce_conn_unlist(conn) && refcount_dec_and_test(&conn->ref))
			mroce_conn_free(conn);
	}
	wait_var_event(&mdev->conns_freeing,
		       !atomic_read(&mdev->conns_freeing));
}

void mroce_conn_init_life(struct mroce_conn *conn)
{
	INIT_RCU_WORK(&conn->free_rwork, mroce_conn_free_work);
	INIT_WORK(&conn->reap_work, mroce_conn_reap);
}

/* Remember a detached stream for tombstone_ms (MRC-CONN-039). */
static void mroce_stomb_add(struct mroce_conn *conn, u32 lqpn, u32 pqpn)
{
	struct mroce_stomb *s = &conn->life.stombs[conn->life.stomb_next];

	conn->life.stomb_next = (conn->life.stomb_next + 1) % MROCE_STOMBS;
	s->lqpn = lqpn;
	s->pqpn = pqpn;
	s->until = ktime_add_ms(ktime_get(), READ_ONCE(mroce_tombstone_ms));
	s->nak_at = 0;
}

/*
 * May a NAK STREAM_CLOSED answer a packet of stream (lqpn, pqpn) that
 * cannot be attached?  A stream tombstone allows one per rto_min_us;
 * any other such stream is answered (MRC-CONN-033).  conn->lock held.
 */
bool mroce_stomb_nak_ok(struct mroce_conn *conn, u32 lqpn, u32 pqpn)
{
	ktime_t now = ktime_get();
	struct mroce_stomb *s;
	int i;

	lockdep_assert_held(&conn->lock);

	for (i = 0; i < MROCE_STOMBS; i++) {
		s = &conn->life.stombs[i];
		if (s->lqpn != lqpn || s->pqpn != pqpn ||
		    ktime_after(now, s->until))
			continue;
		if (s->nak_at && ktime_us_delta(now, s->nak_at) <
				 READ_ONCE(mroce_rto_min_us))
			return false;
		s->nak_at = now;
		return true;
	}
	return true;
}

/*
 * A responder's connection made by a CONNECT is half-open until a valid
 * packet addressed by DCID, with our token, arrives on it; it is freed,
 * silently, after half_open_timeout_ms without one (MRC-CONN-028).
 * conn->lock held.
 */
void mroce_conn_half_open_start(struct mroce_conn *conn)
{
	u32 ms = READ_ONCE(mroce_half_open_timeout_ms);

	lockdep_assert_held(&conn->lock);

	conn->life.half_open = true;
	conn->life.half_open_until = ktime_add_ms(ktime_get(), ms);
	mroce_count(conn->mdev, CONN_HALF_OPEN);
	mroce_conn_arm_timer(conn);
}

void mroce_conn_half_open_end(struct mroce_conn *conn)
{
	if (!conn->life.half_open)
		return;
	conn->life.half_open = false;
	conn->life.confirm_next = 0;
	this_cpu_dec(conn->mdev->stats->c[MROCE_CNT_CONN_HALF_OPEN]);
}

/*
 * A half-open connection that a local stream waits on: PROBE the peer,
 * whose answer carries our token and confirms it (spec 6.4), four times
 * per half_open_timeout_ms until it does, so that one lost PROBE or reply
 * does not fail the stream.  conn->lock held.
 */
void mroce_conn_confirm_probe(struct mroce_conn *conn, ktime_t now,
			      struct sk_buff_head *q)
{
	u32 ms = READ_ONCE(mroce_half_open_timeout_ms);

	lockdep_assert_held(&conn->lock);

	mroce_path_confirm(conn, q);
	conn->life.confirm_next = ktime_add_ms(now, max(ms / 4, 1U));
	mroce_conn_arm_timer(conn);
}

/*
 * A CONNECT claims that the peer of conn restarted (spec 6.7.2): PROBE
 * conn, from the timer, up to three times; it fails unless a packet with
 * our token arrives first (MRC-CONN-044).  conn->lock held.
 */
void mroce_conn_restart_check(struct mroce_conn *conn)
{
	ktime_t now = ktime_get();

	lockdep_assert_held(&conn->lock);

	conn->life.restart_next = now;
	conn->life.restart_until = ktime_add_us(now,
						READ_ONCE(mroce_rto_max_us));
	conn->life.restart_probes = 0;
	mroce_conn_arm_timer(conn);
}

/*
 * Timer work of a restart check: the next PROBE, each answer awaited for
 * a probe timeout but at least a third of rto_max_us; after the third,
 * the verdict.  True if conn failed.  conn->lock held.
 */
static bool mroce_conn_restart_tick(struct mroce_conn *conn, ktime_t now,
				    struct sk_buff_head *q)
{
	u32 us;

	lockdep_assert_held(&conn->lock);

	if (conn->life.restart_next &&
	    !ktime_after(conn->life.restart_next, now)) {
		us = max(mroce_path_check_alive(conn, q),
			 READ_ONCE(mroce_rto_max_us) / 3);
		conn->life.restart_until = ktime_add_us(now, us);
		conn->life.restart_next = ++conn->life.restart_probes < 3 ?
				     conn->life.restart_until : 0;
	}
	if (conn->life.restart_next || !conn->life.restart_until ||
	    ktime_after(conn->life.restart_until, now))
		return false;
	conn->life.restart_until = 0;
	mroce_count(conn->mdev, CONN_PEER_RESTART);
	mroce_conn_fail(conn);		/* C15 */
	return true;
}

/* Start the idle clock if the last stream went.  conn->lock held. */
void mroce_conn_idle_check(struct mroce_conn *conn)
{
	lockdep_assert_held(&conn->lock);

	if (conn->streams.count || conn->state != MROCE_CONN_ESTABLISHED) {
		conn->life.idle_at = 0;
		return;
	}
	if (!conn->life.idle_at)
		conn->life.idle_at = ktime_add_ms(ktime_get(), 1000ULL *
					     READ_ONCE(mroce_conn_idle_timeout_s));
	mroce_conn_arm_timer(conn);
}

/*
 * Take qp's stream off conn: nothing of the transport refers to it
 * afterwards.  conn->lock held.
 */
void mroce_stream_unlink(struct mroce_conn *conn, struct mroce_qp *qp)
{
	struct mroce_stream *st = &qp->stream;

	lockdep_assert_held(&conn->lock);

	conn->tx.msgs_out -= mroce_msgs_out(st);
	list_del_init(&st->wait_entry);
	mroce_sr_forget(conn, st);
	list_del(&st->conn_entry);
	mroce_path_drop_qp(conn, qp);
	mroce_trackers_drop_qp(conn, qp->ibqp.qp_num);
	conn->streams.count--;
	this_cpu_dec(conn->mdev->stats->c[MROCE_CNT_STREAMS_ACTIVE]);
	mroce_stomb_add(conn, qp->ibqp.qp_num, qp->attr.dest_qp_num);
	WRITE_ONCE(st->conn, NULL);
	mroce_conn_idle_check(conn);
}

/* TOMBSTONE (C7, C11, C13, C15): only the CID is left.  conn->lock held. */
void mroce_conn_tombstone(struct mroce_conn *conn)
{
	lockdep_assert_held(&conn->lock);

	if (conn->state == MROCE_CONN_TOMBSTONE)
		return;
	conn->state = MROCE_CONN_TOMBSTONE;
	conn->life.hs_at = 0;
	conn->life.idle_at = 0;
	conn->life.close_at = 0;
	conn->wake_at = 0;
	conn->life.tomb_at = ktime_add_ms(ktime_get(),
					  READ_ONCE(mroce_tombstone_ms));
	mroce_retx_drop_qp(conn, NULL);
	mroce_conn_half_open_end(conn);
	this_cpu_dec(conn->mdev->stats->c[MROCE_CNT_CONN_ACTIVE]);
	mroce_conn_arm_timer(conn);
}

/*
 * The connection fails (C7, C15): every attached stream is detached, and
 * its QP completes its oldest request with IB_WC_RETRY_EXC_ERR and moves
 * to ERROR (MRC-CONN-050).  conn->lock held.
 */
void mroce_conn_fail(struct mroce_conn *conn)
{
	struct mroce_stream *st, *tmp;
	struct mroce_qp *qp;

	lockdep_assert_held(&conn->lock);

	if (conn->state == MROCE_CONN_TOMBSTONE)
		return;
	mroce_count(conn->mdev, CONN_FAILED);
	list_for_each_entry_safe(st, tmp, &conn->streams.list, conn_entry) {
		qp = container_of(st, struct mroce_qp, stream);
		mroce_rc_fail_all(conn, qp);
		mroce_qp_to_error_event(qp, IB_EVENT_QP_FATAL);
		if (qp->ibqp.srq)
			mroce_srq_flush_bound(conn, qp);
		st->close_sent = true;	/* the peer's stream is gone too */
		st->peer_closed = true;
		mroce_stream_unlink(conn, qp);
	}
	mroce_conn_tombstone(conn);
}

/* The earliest deadline of the connection's life.  conn->lock held. */
ktime_t mroce_conn_life_next(struct mroce_conn *conn)
{
	ktime_t next = KTIME_MAX;
	u32 dead = READ_ONCE(mroce_conn_dead_timeout_s);

	lockdep_assert_held(&conn->lock);

	if (conn->life.idle_at)
		next = conn->life.idle_at;
	if (conn->life.half_open &&
	    ktime_before(conn->life.half_open_until, next))
		next = conn->life.half_open_until;
	if (conn->life.half_open && conn->life.confirm_next &&
	    ktime_before(conn->life.confirm_next, next))
		next = conn->life.confirm_next;
	if (conn->life.restart_next &&
	    ktime_before(conn->life.restart_next, next))
		next = conn->life.restart_next;
	else if (conn->life.restart_until &&
		 ktime_before(conn->life.restart_until, next))
		next = conn->life.restart_until;
	if (conn->life.close_at && ktime_before(conn->life.close_at, next))
		next = conn->life.close_at;
	if (dead && conn->life.inactive_at) {
		ktime_t d = ktime_add_ms(conn->life.inactive_at,
					 1000ULL * dead);

		if (ktime_before(d, next))
			next = d;
	}
	return next;
}

/* The largest RTO of the paths: the CONN_CLOSE resend interval (6.6). */
static u32 mroce_conn_max_rto_us(struct mroce_conn *conn)
{
	u32 rto = READ_ONCE(mroce_rto_initial_us);
	int i;

	for (i = 0; i < conn->tx.npaths; i++)
		rto = max(rto, conn->tx.paths[i]->rto_us);
	return min(rto, READ_ONCE(mroce_rto_max_us));
}

static bool mroce_conn_any_active(struct mroce_conn *conn)
{
	int i;

	for (i = 0; i < conn->tx.npaths; i++)
		if (conn->tx.paths[i]->state == MROCE_PATH_ACTIVE)
			return true;
	return false;
}

/*
 * Timer work of the connection's life: idle reclaim (C10, C11), the
 * dead-connection timer (MRC-CONN-051).  conn->lock held.
 */
void mroce_conn_life_tick(struct mroce_conn *conn, ktime_t now,
			  struct sk_buff_head *q)
{
	u32 dead = READ_ONCE(mroce_conn_dead_timeout_s);

	lockdep_assert_held(&conn->lock);

	if (conn->life.half_open &&
	    !ktime_after(conn->life.half_open_until, now)) {
		/*
		 * Never confirmed: freed, nothing sent (6.4).  Our own QPs
		 * that wait for it do not confirm it: theirs is the fate of
		 * a handshake that failed (C7).
		 */
		mroce_count(conn->mdev, CONN_HALF_OPEN_EXPIRED);
		if (conn->streams.count)
			mroce_conn_fail(conn);
		else
			mroce_conn_tombstone(conn);
		return;
	}
	if (conn->life.half_open && conn->life.confirm_next &&
	    !ktime_after(conn->life.confirm_next, now))
		mroce_conn_confirm_probe(conn, now, q);
	if ((conn->life.restart_next || conn->life.restart_until) &&
	    mroce_conn_restart_tick(conn, now, q))
		return;
	if (conn->state == MROCE_CONN_ESTABLISHED) {
		/*
		 * A path that is not ACTIVE has probe timers, so the timer
		 * runs while none is: the clock starts when that is seen.
		 */
		if (mroce_conn_any_active(conn) || !conn->streams.count) {
			conn->life.inactive_at = 0;
		} else if (!conn->life.inactive_at) {
			conn->life.inactive_at = now;
		} else if (dead &&
			   ktime_after(now, ktime_add_ms(conn->life.inactive_at,
							 1000ULL * dead))) {
			mroce_conn_fail(conn);
			return;
		}
		if (conn->life.idle_at &&
		    !ktime_after(conn->life.idle_at, now)) {
			conn->life.idle_at = 0;
			if (conn->streams.count)
				return;
			conn->state = MROCE_CONN_CLOSING;
			conn->life.close_tries = 0;
			conn->life.close_at = now;
		}
	}
	if (conn->state != MROCE_CONN_CLOSING || !conn->life.close_at ||
	    ktime_after(conn->life.close_at, now))
		return;
	if (conn->life.close_tries >= MROCE_CONN_CLOSE_TRIES) {
		/* No answer after 3 attempts (C11). */
		mroce_count(conn->mdev, CONN_CLOSED);
		mroce_conn_tombstone(conn);
		return;
	}
	conn->life.close_tries++;
	mroce_conn_close_send(conn, MROCE_CC_REQUEST, q);
	conn->life.close_at = ktime_add_us(now, mroce_conn_max_rto_us(conn));
}
