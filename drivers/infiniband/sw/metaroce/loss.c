// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sequenced packets on a path and their acknowledgment (spec 8.4, 9):
 * building and recording each transmission, cumulative + 256-bit SACK
 * processing, RTT samples, and loss detection by the threshold rule and
 * the reorder timer.  Content declared lost is resent under a new PSN,
 * preferably on another path; the PLW tells the receiver to stop waiting
 * for the old one.
 */
#include "cc.h"
#include "conn.h"
#include "loss.h"
#include "net.h"
#include "path.h"
#include "pkt.h"
#include "rc_req.h"
#include "rdctx.h"
#include "rxpath.h"
#include "segwin.h"
#include "stream.h"
#include "sync.h"
#include "trace.h"
#include "txwin.h"
#include "tunables.h"
#include "verbs.h"

/* Build the sequenced packet of rec with PSN psn on path. */
static struct sk_buff *mroce_build_seq(struct mroce_conn *conn,
				       struct mroce_path *path,
				       const struct mroce_txrec *rec, u32 psn,
				       u16 extra_flags)
{
	u32 ext_len = mroce_ext_len(rec->type);
	struct mroce_bth *bth;
	struct mroce_sx *sx;
	struct sk_buff *skb;
	void *ext;
	u8 carry;
	int err;

	carry = mroce_ack_carry_pick(conn, path,
				     sizeof(*bth) + ext_len + rec->plen,
				     256U << rec->segshift,
				     rec->flags | extra_flags);
	if (carry != MROCE_NO_CARRY) {
		/* The AKX, after the type's extensions, is filled at commit. */
		ext_len += sizeof(struct mroce_akx);
		extra_flags |= MROCE_F_AKX;
	}
	skb = mroce_conn_alloc_pkt(conn, rec->type, ext_len, rec->plen);
	if (!skb) {
		mroce_ack_carry_undo(conn, carry);
		return ERR_PTR(-ENOMEM);
	}
	if (carry != MROCE_NO_CARRY) {
		mroce_cb(skb)->carry = true;
		mroce_cb(skb)->carry_id = carry;
		conn->rx.carrying++;
	}
	bth = (struct mroce_bth *)skb->data;
	bth->flags = htons(rec->flags | extra_flags);
	bth->path_id = path->id;
	bth->psn = htonl(psn);
	bth->plw = htonl(path->plw);
	sx = (struct mroce_sx *)(bth + 1);
	sx->segsh_dqpn = htonl((u32)rec->segshift << 28 | rec->dqpn);
	sx->sqpn = htonl(rec->qp ? rec->qp->ibqp.qp_num : rec->sqpn);
	sx->ssn = htonl(rec->ssn);
	sx->msn = htonl(rec->msn);
	sx->msg_len = htonl(rec->msg_len);
	sx->offset = htonl(rec->offset);
	ext = sx + 1;

	switch (rec->type) {
	case MROCE_T_WRITE:
	case MROCE_T_WRITE_IMM:
	case MROCE_T_READ_REQ: {
		struct mroce_rx *rx = ext;

		rx->va = cpu_to_be64(rec->va);
		rx->rkey = htonl(rec->rkey);
		if (rec->type == MROCE_T_WRITE_IMM)
			*(__be32 *)(rx + 1) = rec->imm;
		break;
	}
	case MROCE_T_SEND_IMM:
		*(__be32 *)ext = rec->imm;
		break;
	case MROCE_T_SEND_INV:
		*(__be32 *)ext = htonl(rec->inv_rkey);
		break;
	case MROCE_T_ATOMIC_CS:
	case MROCE_T_ATOMIC_FA: {
		struct mroce_atx *atx = ext;

		atx->va = cpu_to_be64(rec->va);
		atx->swap_add = cpu_to_be64(rec->swap_add);
		atx->compare = cpu_to_be64(rec->compare);
		atx->rkey = htonl(rec->rkey);
		break;
	}
	case MROCE_T_ATOMIC_RESP:
		*(__be64 *)ext = cpu_to_be64(rec->swap_add);
		break;
	case MROCE_T_STREAM_CLOSE: {
		struct mroce_scx *scx = ext;

		*(__be32 *)scx = htonl(rec->rkey);
		scx->failed_ssn = htonl(rec->inv_rkey);
		break;
	}
	default:
		break;
	}
	err = rec->plen ?
	      mroce_rc_build_payload(conn, rec, skb->data + bth->hdr_len * 4) :
	      0;
	if (err) {
		mroce_ack_carry_undo(conn, carry);
		kfree_skb(skb);
		return ERR_PTR(err);
	}
	mroce_cb(skb)->sport = path->sport;
	mroce_cb(skb)->plane = path->plane;
	return skb;
}

/* Send rec on path under its next PSN, and record the transmission. */
void mroce_path_emit(struct mroce_conn *conn, struct mroce_path *path,
		     const struct mroce_txrec *rec, u8 tries, u16 flags,
		     struct sk_buff_head *q)
{
	u32 psn = path->next_psn;
	/* mroce_pick() made sure of the record (mroce_txwin_ready()). */
	struct mroce_inflight *f = mroce_slot(path, psn);
	struct sk_buff *skb;

	lockdep_assert_held(&conn->lock);

	if (WARN_ON_ONCE(!f))
		return;	/* the stream's retry timer recovers the content */
	path->next_psn++;
	if (conn->cc.backlog)
		flags |= MROCE_F_BKLG;
	f->rec = *rec;
	if (rec->qp)
		mroce_qp_hold(rec->qp);
	f->psn = psn;
	f->live = true;
	f->resent = false;
	f->tries = tries;
	f->sent = mroce_conn_now_fresh(conn);
	f->charge = mroce_charge(conn, rec);
	path->live++;
	path->bif += f->charge;
	path->rto_from = f->sent;
	/*
	 * A small window that can take no further full packet: ask for an
	 * ACK now rather than let ACK coalescing hold it (spec 7.8).
	 */
	if (path->live <= 2 * READ_ONCE(mroce_ack_coalesce_pkts) &&
	    path->bif + mroce_mpb(conn) > path->cwnd)
		flags |= MROCE_F_AR;
	skb = mroce_build_seq(conn, path, rec, psn, flags);
	if (!IS_ERR(skb)) {
		if (mroce_cb(skb)->carry) {
			/* The carried AKX is on the wire too (12.2.1). */
			f->charge += sizeof(struct mroce_akx);
			path->bif += sizeof(struct mroce_akx);
		}
		__skb_queue_tail(q, skb);
		mroce_count(conn->mdev, TX_DATA_PACKETS);
	} else if (PTR_ERR(skb) != -ENOMEM) {
		/*
		 * The source is gone: the WQE was completed or flushed, or a
		 * READ's source region was invalidated.  Sending it again
		 * could only fail again: the content is abandoned, and the
		 * PLW tells the receiver not to wait for the PSN (7.3.1).
		 */
		mroce_count(conn->mdev, TX_ABANDONED);
		if (rec->qp && rec->type == MROCE_T_READ_RESP)
			mroce_rdctx_delivered(&rec->qp->stream, rec->ssn);
		mroce_resolve(path, f);
		mroce_advance_plw(path);
	}
	/* Out of memory: loss recovery sends it again later. */
}

/* The content of f is acknowledged, declared lost or abandoned. */
void mroce_resolve(struct mroce_path *path, struct mroce_inflight *f)
{
	f->live = false;
	path->live--;
	path->bif -= f->charge;
	if (f->rec.qp)
		mroce_qp_put(f->rec.qp);
}

void mroce_advance_plw(struct mroce_path *path)
{
	while (path->plw != path->next_psn &&
	       !mroce_live_slot(path, path->plw))
		path->plw++;
}

/*
 * Declare f lost (spec 9.2): resolve it and resend its content, unless it
 * was delivered meanwhile.  Giving up is the stream's retry timer's call
 * (spec 9.5.2), not the path's: a path can lose content many times while
 * another path still works.
 */
void mroce_declare_lost(struct mroce_conn *conn, struct mroce_path *path,
			struct mroce_inflight *f, struct sk_buff_head *q)
{
	struct mroce_txrec rec = f->rec;
	struct mroce_qp *qp = rec.qp;
	u8 tries = f->tries;

	lockdep_assert_held(&conn->lock);

	path->lost_pkts++;
	path->win_lost++;
	if (qp)
		mroce_qp_hold(qp);
	mroce_resolve(path, f);
	if (mroce_rc_still_needed(conn, &rec)) {
		f->resent = true;
		mroce_path_resend(conn, &rec, min_t(u32, tries + 1, U8_MAX),
				  path->id, q);
	}
	trace_mroce_lost(conn, path, f->psn, tries, f->resent);
	if (qp)
		mroce_qp_put(qp);
}

/* Every unresolved packet of path is lost (RTO, path failure: 9.2.4-5). */
void mroce_declare_all_lost(struct mroce_conn *conn, struct mroce_path *path,
			    struct sk_buff_head *q)
{
	struct mroce_inflight *f;
	u32 psn;

	lockdep_assert_held(&conn->lock);

	for (psn = path->plw; psn != path->next_psn; psn++) {
		f = mroce_live_slot(path, psn);
		if (f)
			mroce_declare_lost(conn, path, f, q);
	}
	path->reo_at = 0;
	mroce_advance_plw(path);
}

/*
 * RTO = SRTT + max(1 us, 4 RTTVAR) + the peer's Max ACK Delay, within the
 * bounds (MRC-PATH-019).
 */
static void mroce_rto_update(const struct mroce_conn *conn,
			     struct mroce_path *path)
{
	path->rto_us = clamp(path->srtt_us + max(1U, 4 * path->rttvar_us) +
			     conn->cx.peer_max_ack_delay,
			     READ_ONCE(mroce_rto_min_us),
			     READ_ONCE(mroce_rto_max_us));
}

void mroce_rtt_sample(const struct mroce_conn *conn, struct mroce_path *path,
		      u32 r)
{
	u32 err;

	if (!path->srtt_us) {
		path->srtt_us = max(r, 1U);
		path->rttvar_us = r / 2;
	} else {
		err = abs((s32)(path->srtt_us - r));
		path->rttvar_us = (3 * path->rttvar_us + err) / 4;
		path->srtt_us = max((7 * path->srtt_us + r) / 8, 1U);
	}
	if (!path->min_rtt_us || path->min_rtt_old || r < path->min_rtt_us)
		path->min_rtt_us = r;
	path->min_rtt_old = false;
	mroce_rto_update(conn, path);
}

/*
 * Packets in flight below the highest acknowledged PSN: the holes of the
 * path's SACK window (metaroce show).
 */
u32 mroce_sack_holes(struct mroce_path *path)
{
	u32 psn, n = 0;

	for (psn = path->plw; psn != path->next_psn &&
	     mroce_seq_diff(psn, path->high_acked) < 0; psn++)
		if (mroce_live_slot(path, psn))
			n++;
	return n;
}

/*
 * reo_wnd = max(srtt / 4, reo_wnd_min_us) (MRC-LOSS-003), times the
 * path's multiplier while it reorders (MRC-LOSS-021).
 */
u32 mroce_reo_wnd(const struct mroce_path *path)
{
	return max(path->srtt_us / 4, READ_ONCE(mroce_reo_wnd_min_us)) *
	       max_t(u32, path->reo_mult, 1);
}

/*
 * Has path proved, within reo_persist_ms, that it reorders (MRC-LOSS-021)?
 * Then only the reorder timer declares its losses.  Past that time the
 * path is trusted again, with the multiplier back at 1.
 */
static bool mroce_path_reorders(struct mroce_path *path, ktime_t now)
{
	if (!path->reo_seen)
		return false;
	if (ktime_ms_delta(now, path->reo_seen) < READ_ONCE(mroce_reo_persist_ms))
		return true;
	path->reo_seen = 0;
	path->reo_mult = 1;
	return false;
}

/* Evidence that path reorders: a REORDERED ACK or a spurious resend. */
static void mroce_path_saw_reorder(struct mroce_path *path, ktime_t now,
				   bool spurious)
{
	if (!READ_ONCE(mroce_reo_persist_ms))
		return;
	if (spurious && mroce_path_reorders(path, now))
		path->reo_mult = min_t(u8, path->reo_mult + 1, 4);
	path->reo_seen = now ?: 1;
}

/* Is PSN psn reported received by an AKX with cumulative PSN cum? */
static bool mroce_akx_has(const struct mroce_akx *akx, u32 cum, u32 psn)
{
	u32 i = psn - cum - 1;

	if (mroce_seq_diff(psn, cum) <= 0)
		return true;
	return i < MROCE_SACK_BITS && (akx->sack[i / 8] & (0x80 >> (i % 8)));
}

/* The highest PSN an AKX reports, or -1 if a bit names a PSN not sent. */
static s64 mroce_akx_highest(const struct mroce_path *path,
			     const struct mroce_akx *akx, u32 cum)
{
	u32 i, high = cum, avail = path->next_psn - cum - 1;

	for (i = 0; i < MROCE_SACK_BITS; i++) {
		if (!(akx->sack[i / 8] & (0x80 >> (i % 8))))
			continue;
		if (i >= avail)
			return -1;
		high = cum + 1 + i;
	}
	return high;
}

/*
 * A packet declared lost whose SACK bit is set arrived after all: the path
 * reorders (MRC-LOSS-021).  Only SACK bits tell: the receiver's Cumulative
 * PSN also moves past PSNs the PLW gave up on.  This sees only the late
 * arrivals that beat the PLW; mroce_count_spurious() counts them all.
 */
static void mroce_sack_late(struct mroce_path *path,
			    const struct mroce_akx *akx, u32 cum, ktime_t now)
{
	struct mroce_inflight *f;
	u32 i;

	for (i = 0; i < MROCE_SACK_BITS; i++) {
		if (!akx->sack[i / 8]) {
			i += 7;
			continue;
		}
		if (!(akx->sack[i / 8] & (0x80 >> (i % 8))))
			continue;
		f = mroce_slot(path, cum + 1 + i);
		if (f && !f->live && f->resent && f->psn == cum + 1 + i) {
			f->resent = false;
			/* Not a loss: it must not move the path (7.7). */
			if (path->win_lost)
				path->win_lost--;
			mroce_path_saw_reorder(path, now, true);
		}
	}
}

/*
 * Resends that were spurious (MRC-ACK-015): Rx Count includes every
 * sequenced arrival, and once an ACK is applied each of them is either a
 * PSN found acknowledged while live or one declared lost before it
 * arrived (or a network duplicate).  The difference is counted as it grows.
 */
static void mroce_count_spurious(struct mroce_conn *conn,
				 struct mroce_path *path, u32 drx, u32 nacked)
{
	s32 late;

	path->rx_late += drx - nacked;
	late = path->rx_late;
	if (late > (s32)path->spurious) {
		mroce_count_add(conn->mdev, SPURIOUS_RETRANSMITS,
				late - path->spurious);
		path->spurious = late;
	}
}

/*
 * An AKX with NO_STATE: the receiver has no state for the path.  From a
 * PROBE_REPLY (probe_psn set), what was sent before the probe is lost.
 */
static void mroce_akx_no_state(struct mroce_conn *conn,
			       struct mroce_path *path, const u32 *probe_psn,
			       struct sk_buff_head *q)
{
	struct mroce_inflight *f;
	u32 psn;

	if (probe_psn)	/* nothing sent before it arrived */
		for (psn = path->plw; mroce_seq_diff(*probe_psn, psn) > 0;
		     psn++) {
			f = mroce_live_slot(path, psn);
			if (f)
				mroce_declare_lost(conn, path, f, q);
		}
	mroce_advance_plw(path);
}

/*
 * Resolve what the AKX acknowledges, up to PSN high, and take one RTT
 * sample from the highest PSN it reports, less the time the receiver held
 * the ACK unless that goes below min_rtt (7.4).  Returns the bytes newly
 * acknowledged, and their packets in *nacked.
 */
static u32 mroce_akx_ack(struct mroce_conn *conn, struct mroce_path *path,
			 const struct mroce_akx *akx, u32 cum, s64 high,
			 ktime_t now, u32 *nacked)
{
	struct mroce_inflight *f, *newest = NULL;
	u32 acked = 0, psn, r, delay;

	for (psn = path->plw; mroce_seq_diff(psn, high) <= 0; psn++) {
		f = mroce_live_slot(path, psn);
		if (!f || !mroce_akx_has(akx, cum, psn))
			continue;
		acked += f->charge;
		(*nacked)++;
		newest = f;
		if (f->rec.qp && f->rec.type != MROCE_T_READ_RESP &&
		    f->rec.type != MROCE_T_ATOMIC_RESP)
			mroce_sync_arm(conn, f->rec.qp, true);
		mroce_rc_delivered(&f->rec);
		mroce_resolve(path, f);
	}
	if (newest && newest->psn == (u32)high && newest->tries == 1) {
		r = ktime_us_delta(now, newest->sent);
		delay = min_t(u32, ntohs(akx->ack_delay),
			      conn->cx.peer_max_ack_delay);
		if (r > delay && r - delay >= path->min_rtt_us)
			r -= delay;
		mroce_rtt_sample(conn, path, r);
	}
	return acked;
}

/*
 * Threshold rule (9.2.1), PROBE_REPLY rule (9.2.3), reorder timer: nothing
 * at or above the highest acknowledged PSN (or the probe's PSN) is
 * concerned.  Returns true if a packet was declared lost.
 */
static bool mroce_akx_detect_loss(struct mroce_conn *conn,
				  struct mroce_path *path,
				  const u32 *probe_psn, ktime_t now,
				  bool timer_only, struct sk_buff_head *q)
{
	u32 thresh = READ_ONCE(mroce_reorder_thresh), end, psn;
	bool early = false, lost = false;
	struct mroce_inflight *f;

	end = path->high_acked + 1;
	if (probe_psn && mroce_seq_diff(*probe_psn, end) > 0)
		end = *probe_psn;
	for (psn = path->plw; mroce_seq_diff(end, psn) > 0; psn++) {
		f = mroce_live_slot(path, psn);
		if (!f)
			continue;
		if (probe_psn && mroce_seq_diff(*probe_psn, psn) > 0) {
			mroce_declare_lost(conn, path, f, q);
			lost = true;
		} else if (!timer_only &&
			   mroce_seq_diff(path->high_acked, psn) > (s32)thresh) {
			mroce_count(conn->mdev, FAST_RETRANSMITS);
			mroce_declare_lost(conn, path, f, q);
			lost = true;
		} else if (mroce_seq_diff(path->high_acked, psn) > 0) {
			early = true;
		}
	}
	if (!early)
		path->reo_at = 0;
	else if (!path->reo_at)
		path->reo_at = ktime_add_us(now, mroce_reo_wnd(path));
	return lost;
}

/*
 * The growth of the AKX's CE and Rx Counts, which are cumulative:
 * decreases are ignored (8.4).
 */
static void mroce_akx_counts(struct mroce_path *path,
			     const struct mroce_akx *akx, u32 *dce, u32 *drx)
{
	u32 ce = ntohl(akx->ce_count), rx = ntohl(akx->rx_count);

	if (!path->ack_seen || mroce_seq_diff(ce, path->ack_ce) > 0) {
		*dce = path->ack_seen ? ce - path->ack_ce : ce;
		path->ack_ce = ce;
	}
	if (!path->ack_seen || mroce_seq_diff(rx, path->ack_rx) > 0) {
		*drx = path->ack_seen ? rx - path->ack_rx : rx;
		path->ack_rx = rx;
	}
	path->ack_seen = true;
}

/*
 * Apply an AKX to path (spec 8.4 steps 1 to 7).  A PROBE_REPLY (probe_psn:
 * the path's next PSN when its probe left) also proves lost whatever was
 * sent before its probe and is not acknowledged (9.2.3).  Returns false
 * if the AKX was dropped as out of window.
 */
bool mroce_loss_process_akx(struct mroce_conn *conn, struct mroce_path *path,
			    const struct mroce_akx *akx, const u32 *probe_psn,
			    struct sk_buff_head *q)
{
	u32 cum = ntohl(akx->cum_psn), dce = 0, drx = 0, acked, nacked = 0;
	ktime_t now = mroce_conn_now(conn);
	bool lost, timer_only;
	s64 high;

	lockdep_assert_held(&conn->lock);

	if (akx->ack_flags & MROCE_ACKF_NO_STATE) {
		mroce_akx_no_state(conn, path, probe_psn, q);
		return true;
	}
	/* Nothing at or beyond next_psn can be acknowledged (5.7). */
	if (mroce_seq_diff(path->next_psn, cum) <= 0 ||
	    mroce_seq_diff(path->next_psn, cum) > 65536) {
		mroce_count(conn->mdev, DROP_OUT_OF_WINDOW);
		return false;
	}
	high = mroce_akx_highest(path, akx, cum);
	if (high < 0) {
		mroce_count(conn->mdev, DROP_OUT_OF_WINDOW);
		return false;
	}
	if (mroce_seq_diff(high, path->high_acked) > 0 ||
	    mroce_seq_diff(path->plw, path->high_acked) > 0)
		path->high_acked = high;

	mroce_sack_late(path, akx, cum, now);
	if (akx->ack_flags & MROCE_ACKF_REORDERED)
		mroce_path_saw_reorder(path, now, false);
	timer_only = mroce_path_reorders(path, now);	/* MRC-LOSS-021 */
	acked = mroce_akx_ack(conn, path, akx, cum, high, now, &nacked);
	lost = mroce_akx_detect_loss(conn, path, probe_psn, now, timer_only, q);
	mroce_advance_plw(path);

	mroce_akx_counts(path, akx, &dce, &drx);
	mroce_count_spurious(conn, path, drx, nacked);
	if (dce) {
		path->ce_marks += dce;
		mroce_count_add(conn->mdev, ECN_CE_REPORTED, dce);
	}
	if (acked) {
		conn->life.progress_at = now;
		path->backoff = 0;
		path->rto_from = now;
		path->tlp_at = 0;
	}
	mroce_cc_on_ack(conn, path, acked, dce, drx);
	if (lost)
		mroce_cc_on_loss(conn, path);
	trace_mroce_ack(conn, path, cum, acked, dce);
	return true;
}
