// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Paths (spec 7 to 9): per-path sequence numbers, the path low watermark,
 * cumulative + 256-bit SACK acknowledgements, retransmission of exactly the
 * packets a SACK gap shows lost, and the retransmission timeout.
 *
 * A retransmission carries the old content under a new PSN; the old PSN is
 * resolved, and the PLW tells the receiver to stop waiting for it.
 */
#include <linux/moduleparam.h>

#include "net.h"
#include "transport.h"
#include "verbs.h"

unsigned int mroce_rto_initial_us = 5000;
module_param_named(rto_initial_us, mroce_rto_initial_us, uint, 0644);
MODULE_PARM_DESC(rto_initial_us, "RTO before the first RTT sample, us (default 5000)");

unsigned int mroce_rto_min_us = 1000;
module_param_named(rto_min_us, mroce_rto_min_us, uint, 0644);
MODULE_PARM_DESC(rto_min_us, "Lower bound of the RTO, us (default 1000)");

unsigned int mroce_rto_max_us = 200000;
module_param_named(rto_max_us, mroce_rto_max_us, uint, 0644);
MODULE_PARM_DESC(rto_max_us, "Upper bound of the RTO, us (default 200000)");

static struct mroce_inflight *mroce_slot(struct mroce_path *path, u32 psn)
{
	return &path->win[psn % MROCE_TX_WINDOW];
}

bool mroce_path_has_room(struct mroce_conn *conn)
{
	struct mroce_path *path = &conn->path;

	return path->live < path->cwnd &&
	       path->next_psn - path->plw < MROCE_TX_WINDOW;
}

u32 mroce_ext_len(u8 type)
{
	u32 sx = sizeof(struct mroce_sx);

	switch (type) {
	case MROCE_T_SEND:
	case MROCE_T_READ_RESP:
		return sx;
	case MROCE_T_SEND_IMM:
	case MROCE_T_SEND_INV:
		return sx + 4;
	case MROCE_T_WRITE:
	case MROCE_T_READ_REQ:
		return sx + sizeof(struct mroce_rx);
	case MROCE_T_WRITE_IMM:
		return sx + sizeof(struct mroce_rx) + 4;
	case MROCE_T_ATOMIC_CS:
	case MROCE_T_ATOMIC_FA:
		return sx + sizeof(struct mroce_atx);
	case MROCE_T_ATOMIC_RESP:
		return sx + 8;
	default:
		return sx + 8;		/* STREAM_CLOSE */
	}
}

/* Build the sequenced packet of rec with PSN psn. */
static struct sk_buff *mroce_build_seq(struct mroce_conn *conn,
				       const struct mroce_txrec *rec, u32 psn,
				       u16 extra_flags)
{
	struct mroce_bth *bth;
	struct mroce_sx *sx;
	struct sk_buff *skb;
	void *ext;

	skb = mroce_conn_alloc_pkt(conn, rec->type, mroce_ext_len(rec->type),
				   rec->plen);
	if (!skb)
		return NULL;
	bth = (struct mroce_bth *)skb->data;
	bth->flags = htons(rec->flags | extra_flags);
	bth->path_id = conn->path.id;
	bth->psn = htonl(psn);
	bth->plw = htonl(conn->path.plw);
	sx = (struct mroce_sx *)(bth + 1);
	sx->segsh_dqpn = htonl((u32)rec->segshift << 28 | rec->dqpn);
	sx->sqpn = htonl(rec->qp->ibqp.qp_num);
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
	default:
		break;
	}
	if (rec->plen &&
	    mroce_rc_build_payload(conn, rec, skb->data + bth->hdr_len * 4)) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

static void mroce_path_emit(struct mroce_conn *conn,
			    const struct mroce_txrec *rec, u8 tries,
			    struct sk_buff_head *q)
{
	struct mroce_path *path = &conn->path;
	u32 psn = path->next_psn++;
	struct mroce_inflight *f = mroce_slot(path, psn);
	struct sk_buff *skb;

	f->rec = *rec;
	refcount_inc(&rec->qp->ref);
	f->psn = psn;
	f->live = true;
	f->tries = tries;
	f->sent = ktime_get();
	path->live++;
	skb = mroce_build_seq(conn, rec, psn, tries > 1 ? MROCE_F_RETX : 0);
	if (skb) {
		__skb_queue_tail(q, skb);
		mroce_count(conn->mdev, TX_DATA_PACKETS);
		if (tries > 1)
			mroce_count(conn->mdev, RETRANSMITS);
	}
	if (!timer_pending(&conn->timer))
		mroce_conn_arm_timer(conn);
}

/* Send new content rec on the path.  The caller checked for room. */
void mroce_path_send(struct mroce_conn *conn, const struct mroce_txrec *rec,
		     struct sk_buff_head *q)
{
	mroce_path_emit(conn, rec, 1, q);
}

/* The content of f is acknowledged, resent or abandoned: resolve f. */
static void mroce_resolve(struct mroce_path *path, struct mroce_inflight *f)
{
	f->live = false;
	path->live--;
	mroce_qp_put(f->rec.qp);
}

static void mroce_advance_plw(struct mroce_path *path)
{
	while (path->plw != path->next_psn &&
	       !mroce_slot(path, path->plw)->live)
		path->plw++;
}

/*
 * Resend the content of f under a new PSN, or give up on its message when
 * it has been sent retry_cnt + 1 times already (spec 9.3, 9.4).
 */
static void mroce_retransmit(struct mroce_conn *conn, struct mroce_inflight *f,
			     struct sk_buff_head *q)
{
	struct mroce_txrec rec = f->rec;
	struct mroce_qp *qp = rec.qp;
	u8 tries = f->tries;

	refcount_inc(&qp->ref);
	mroce_resolve(&conn->path, f);
	if (tries > qp->attr.retry_cnt) {
		mroce_count(conn->mdev, RETRY_EXCEEDED);
		mroce_rc_fail(conn, qp, rec.ssn, IB_WC_RETRY_EXC_ERR);
	} else if (mroce_rc_still_needed(conn, &rec)) {
		mroce_path_emit(conn, &rec, tries + 1, q);
	}
	mroce_qp_put(qp);
}

/* RTO = SRTT + 4 RTTVAR within the configured bounds (RFC 6298). */
static void mroce_rto_update(struct mroce_path *path)
{
	path->rto_us = clamp(path->srtt_us + 4 * path->rttvar_us,
			     READ_ONCE(mroce_rto_min_us),
			     READ_ONCE(mroce_rto_max_us));
	path->backoff = 0;
}

static void mroce_rtt_sample(struct mroce_path *path, ktime_t sent)
{
	u32 r = ktime_us_delta(ktime_get(), sent);
	u32 err;

	if (!path->srtt_us) {
		path->srtt_us = r;
		path->rttvar_us = r / 2;
	} else {
		err = abs((s32)(path->srtt_us - r));
		path->rttvar_us = (3 * path->rttvar_us + err) / 4;
		path->srtt_us = (7 * path->srtt_us + r) / 8;
	}
	mroce_rto_update(path);
}

/* An ACK for one of our paths (spec 8, 9.2). */
void mroce_path_rx_ack(struct mroce_conn *conn, struct sk_buff *skb,
		       struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_akx *akx = (const struct mroce_akx *)(bth + 1);
	const struct mroce_sr *sr = (const struct mroce_sr *)(akx + 1);
	struct mroce_path *path = &conn->path;
	struct mroce_inflight *f;
	u32 cum, psn, highest, i;
	bool any = false;

	if (bth->hdr_len * 4 != sizeof(*bth) + sizeof(*akx) + 16 * akx->num_sr ||
	    bth->path_id != path->id || akx->num_sr > 58) {
		mroce_count(conn->mdev, DROP_BAD_HEADER);
		return;
	}
	mroce_count(conn->mdev, ACKS_RCVD);
	cum = ntohl(akx->cum_psn);
	if (!(akx->ack_flags & MROCE_ACKF_NO_STATE)) {
		/* Nothing at or beyond next_psn can be acknowledged. */
		if (mroce_seq_diff(path->next_psn, cum) <= 0 ||
		    mroce_seq_diff(path->next_psn, cum) > 65536) {
			mroce_count(conn->mdev, DROP_OUT_OF_WINDOW);
			return;
		}
		highest = cum;
		for (psn = path->plw; psn != path->next_psn; psn++) {
			f = mroce_slot(path, psn);
			i = psn - cum - 1;
			if (mroce_seq_diff(psn, cum) <= 0 ||
			    (i < MROCE_SACK_BITS &&
			     (akx->sack[i / 8] & (0x80 >> (i % 8))))) {
				if (mroce_seq_diff(psn, highest) > 0)
					highest = psn;
				if (f->live) {
					if (f->tries == 1)
						mroce_rtt_sample(path, f->sent);
					mroce_resolve(path, f);
					any = true;
				}
			}
		}
		/* A live packet below a SACKed one was lost: resend it now. */
		for (psn = path->plw; mroce_seq_diff(highest, psn) > 0; psn++) {
			f = mroce_slot(path, psn);
			if (f->live) {
				mroce_count(conn->mdev, FAST_RETRANSMITS);
				mroce_retransmit(conn, f, q);
			}
		}
		mroce_advance_plw(path);
		if (any && path->srtt_us)	/* progress undoes the backoff */
			mroce_rto_update(path);
		if (ntohs(bth->flags) & MROCE_F_ECE)
			mroce_count(conn->mdev, ECN_CE_REPORTED);
	}
	for (i = 0; i < akx->num_sr; i++)
		mroce_rc_rx_sr(conn, &sr[i]);
	if (any || akx->num_sr)
		mroce_rc_kick_waiters(conn, q);
	if (path->live)
		mroce_conn_arm_timer(conn);
}

/*
 * The retransmission timer fired (spec 9.4).  Resend only the oldest
 * overdue packet: its acknowledgment SACKs past whatever else was lost, and
 * those losses are then resent one by one; resending the whole window
 * would mostly repeat packets that are only late.
 */
void mroce_path_timeout(struct mroce_conn *conn, struct sk_buff_head *q)
{
	struct mroce_path *path = &conn->path;
	struct mroce_inflight *f;
	u32 psn;

	for (psn = path->plw; psn != path->next_psn; psn++) {
		f = mroce_slot(path, psn);
		if (!f->live)
			continue;
		if (ktime_us_delta(ktime_get(), f->sent) >= (s64)path->rto_us) {
			mroce_count(conn->mdev, RTO_TIMEOUTS);
			path->rto_us = min_t(u32, path->rto_us * 2,
					     READ_ONCE(mroce_rto_max_us));
			mroce_retransmit(conn, f, q);
		}
		break;
	}
	mroce_advance_plw(path);
	if (path->live)
		mroce_conn_arm_timer(conn);
}

/* Forget every packet of qp (it is being destroyed or reset). */
void mroce_path_drop_qp(struct mroce_conn *conn, struct mroce_qp *qp)
{
	struct mroce_path *path = &conn->path;
	struct mroce_inflight *f;
	u32 psn;

	for (psn = path->plw; psn != path->next_psn; psn++) {
		f = mroce_slot(path, psn);
		if (f->live && f->rec.qp == qp)
			mroce_resolve(path, f);
	}
	mroce_advance_plw(path);
}

static void mroce_rxpath_advance(struct mroce_rxpath *rx, u32 n)
{
	if (n >= MROCE_SACK_BITS)
		bitmap_zero(rx->sack, MROCE_SACK_BITS);
	else
		bitmap_shift_right(rx->sack, rx->sack, n, MROCE_SACK_BITS);
	rx->cum += n;
}

static void mroce_rxpath_settle(struct mroce_rxpath *rx)
{
	u32 n = find_first_zero_bit(rx->sack, MROCE_SACK_BITS);

	if (n)
		mroce_rxpath_advance(rx, n);
}

/*
 * Receiver side of a sequenced packet (spec 7.3.2): apply its PLW, then
 * classify its PSN.  Returns 1 for a new packet (now recorded), 0 for one
 * already received, -1 for one outside the window (dropped and counted).
 */
int mroce_rxpath_accept(struct mroce_conn *conn, const struct sk_buff *skb)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	struct mroce_rxpath *rx = &conn->rxpath;
	u32 psn = ntohl(bth->psn), plw = ntohl(bth->plw);
	s32 d;

	if (!rx->valid) {
		rx->valid = true;
		rx->cum = plw - 1;
		bitmap_zero(rx->sack, MROCE_SACK_BITS);
	}
	d = mroce_seq_diff(plw - 1, rx->cum);
	if (d > 65536 || mroce_seq_diff(psn, plw) < 0 ||
	    mroce_seq_diff(psn, plw) >= MROCE_TX_WINDOW) {
		mroce_count(conn->mdev, DROP_OUT_OF_WINDOW);
		return -1;
	}
	if (d > 0) {
		mroce_rxpath_advance(rx, d);
		mroce_rxpath_settle(rx);
	}
	d = mroce_seq_diff(psn, rx->cum);
	if (d > MROCE_SACK_BITS) {
		mroce_count(conn->mdev, DROP_OUT_OF_WINDOW);
		return -1;
	}
	rx->rx_count++;
	if (mroce_rx_ce(skb))
		rx->ce_count++;
	if (d <= 0 || test_bit(d - 1, rx->sack))
		return 0;
	if (d > 1)
		mroce_count(conn->mdev, PATH_REORDER);
	set_bit(d - 1, rx->sack);
	mroce_rxpath_settle(rx);
	return 1;
}

/* Acknowledge the peer's path, with qp's stream record if qp (spec 8). */
void mroce_send_ack(struct mroce_conn *conn, const struct sk_buff *in,
		    struct mroce_qp *qp, struct sk_buff_head *q)
{
	struct mroce_rxpath *rx = &conn->rxpath;
	struct mroce_bth *bth;
	struct mroce_akx *akx;
	struct sk_buff *skb;
	u32 i;

	skb = mroce_conn_alloc_pkt(conn, MROCE_T_ACK,
				   sizeof(*akx) + (qp ? sizeof(struct mroce_sr) : 0), 0);
	if (!skb)
		return;
	bth = (struct mroce_bth *)skb->data;
	bth->psn = htonl(conn->ack_seq++);
	bth->path_id = ((const struct mroce_bth *)in->data)->path_id;
	akx = (struct mroce_akx *)(bth + 1);
	akx->cum_psn = htonl(rx->cum);
	akx->ce_count = htonl(rx->ce_count);
	akx->rx_count = htonl(rx->rx_count);
	for_each_set_bit(i, rx->sack, MROCE_SACK_BITS)
		akx->sack[i / 8] |= 0x80 >> (i % 8);
	if (qp) {
		akx->num_sr = 1;
		mroce_rc_fill_sr(qp, (struct mroce_sr *)(akx + 1));
	}
	mroce_reply_to(skb, in);
	__skb_queue_tail(q, skb);
	mroce_count(conn->mdev, ACKS_SENT);
}
