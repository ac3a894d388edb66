// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RESET (spec 6.7): the stateless RESET that answers a packet naming no
 * connection, under the device's rate limits, and the validation and
 * effect of a RESET received on a connection.
 */
#include <linux/jiffies.h>

#include "conn.h"
#include "lifecycle.h"
#include "net.h"
#include "pkt.h"
#include "reset.h"
#include "tunables.h"
#include "verbs.h"

#define MROCE_RSX_LEN	(sizeof(struct mroce_bth) + sizeof(struct mroce_rsx))

/*
 * May a RESET go to (peer, dcid) now?  At most reset_rate_limit per second
 * per device, and one per second per (peer address, DCID) among the
 * recently answered ones (MRC-CONN-049).
 */
static bool mroce_reset_allowed(struct mroce_dev *mdev,
				const union ib_gid *peer, u32 dcid)
{
	struct mroce_reset_rl *rl = &mdev->reset_rl;
	unsigned long now = jiffies;
	bool ok = false;
	int i, slot = -1;

	spin_lock_bh(&rl->lock);
	for (i = 0; i < MROCE_RESET_RECENT; i++) {
		if (rl->recent[i].dcid == dcid &&
		    !memcmp(&rl->recent[i].peer, peer, sizeof(*peer))) {
			slot = i;
			break;
		}
	}
	if (slot >= 0 && time_before(now, rl->recent[slot].at + HZ))
		goto out;
	if (mroce_rate_full(&rl->win, READ_ONCE(mroce_reset_rate_limit)))
		goto out;
	rl->win.n++;
	if (slot < 0) {
		slot = rl->next;
		rl->next = (rl->next + 1) % MROCE_RESET_RECENT;
	}
	rl->recent[slot].peer = *peer;
	rl->recent[slot].dcid = dcid;
	rl->recent[slot].at = now;
	ok = true;
out:
	spin_unlock_bh(&rl->lock);
	if (!ok)
		mroce_count(mdev, DROP_RATE_LIMITED);
	return ok;
}

/*
 * Answer packet in, which names no connection of mdev, with a stateless
 * RESET (MRC-CONN-045): DCID its SCID, SCID 0, Token its Token (for a
 * CONNECT, whose Token is 0, its CX's: the initiator's own token), sent
 * back to where it came from.  Retry After retry_ms for RESOURCE.  Never
 * to a RESET or a packet with SCID 0 (MRC-CONN-048); datagrams never come
 * here.  A CONNECT comes here with its CX length checked.
 */
void mroce_reset_stateless(struct mroce_dev *mdev, struct sk_buff *in,
			   const union ib_gid *local,
			   const union ib_gid *peer, u8 reason, u16 retry_ms)
{
	const struct mroce_bth *ib = (const struct mroce_bth *)in->data;
	struct mroce_bth *bth;
	struct mroce_rsx *rsx;
	struct sk_buff *skb;

	if (ib->type == MROCE_T_RESET || ib->type == MROCE_T_DATAGRAM ||
	    !ib->scid)
		return;
	if (!mroce_reset_allowed(mdev, peer, ntohl(ib->scid)))
		return;
	skb = mroce_alloc_skb(MROCE_RSX_LEN, GFP_ATOMIC);
	if (!skb)
		return;
	bth = skb_put_zero(skb, MROCE_RSX_LEN);
	bth->ver_rsvd = MROCE_VERSION << 4;
	bth->type = MROCE_T_RESET;
	bth->hdr_len = MROCE_RSX_LEN / 4;
	bth->dcid = ib->scid;
	bth->token = ib->token;
	if (ib->type == MROCE_T_CONNECT)
		bth->token = ((const struct mroce_cx *)(ib + 1))->token;
	rsx = (struct mroce_rsx *)(bth + 1);
	rsx->reason = reason;
	rsx->retry_after = htons(retry_ms);
	rsx->vmin_vmax = MROCE_VERSION << 4 | MROCE_VERSION;
	rsx->epoch = cpu_to_be64(mdev->epoch);
	if (!mroce_xmit(mdev, skb, local, peer, udp_hdr(in)->source))
		mroce_count(mdev, RESETS_SENT);
}

/*
 * May a RESET make the handshake resend its CONNECT now?  At most once per
 * rto_initial_us (C8), so that a peer cannot make us flood it.
 */
static bool mroce_reset_reconnect_ok(struct mroce_conn *conn)
{
	ktime_t now = ktime_get();

	if (conn->state != MROCE_CONN_CONNECTING ||
	    (conn->life.cr_at && ktime_us_delta(now, conn->life.cr_at) <
			    READ_ONCE(mroce_rto_initial_us)))
		return false;
	conn->life.cr_at = now;
	return true;
}

/*
 * A RESET on conn (spec 6.7.3, 6.7.4).  Valid only with the token we
 * gave the peer or the one we put in our packets (MRC-CONN-047), and an
 * SCID of 0 (stateless) or the peer's CID.  A valid one with another
 * epoch than the peer's recorded one says the peer restarted: conn fails
 * (C15) and the function returns that epoch, for the caller to fail the
 * peer's other old connections once conn->lock is released
 * (MRC-CONN-044); else it returns 0.  conn->lock held.
 */
u64 mroce_rx_reset(struct mroce_conn *conn, struct sk_buff *skb,
		   struct sk_buff_head *q)
{
	const struct mroce_bth *bth = (const struct mroce_bth *)skb->data;
	const struct mroce_rsx *rsx = (const struct mroce_rsx *)(bth + 1);
	struct mroce_dev *mdev = conn->mdev;
	u32 scid = ntohl(bth->scid);
	u64 epoch;

	lockdep_assert_held(&conn->lock);

	if (bth->hdr_len * 4 != MROCE_RSX_LEN || bth->payload_len ||
	    !rsx->reason || rsx->reason > MROCE_RST_PEER_RESTART) {
		mroce_count(mdev, DROP_BAD_HEADER);
		return 0;
	}
	if ((!mroce_token_eq(conn->local_token, bth->token) &&
	     (!conn->peer_token ||
	      !mroce_token_eq(conn->peer_token, bth->token))) ||
	    (scid && (conn->state == MROCE_CONN_CONNECTING ||
		      scid != conn->peer_cid))) {
		mroce_count(mdev, DROP_BAD_TOKEN);
		return 0;
	}
	mroce_count(mdev, RESETS_RCVD);
	epoch = be64_to_cpu(rsx->epoch);
	if (conn->peer_epoch && epoch && epoch != conn->peer_epoch) {
		mroce_count(mdev, CONN_PEER_RESTART);
		mroce_conn_fail(conn);		/* C15, whatever the reason */
		return epoch;
	}

	switch (rsx->reason) {
	case MROCE_RST_CONNECT_REQUIRED:
		/*
		 * Resend at once, outside the handshake timer's schedule: it
		 * neither consumes one of connect_retries nor moves the
		 * timer, so a peer that keeps answering so cannot fail the
		 * handshake early (MRC-CONN-022).
		 */
		if (mroce_reset_reconnect_ok(conn))
			mroce_conn_resend_connect(conn, q);
		return 0;
	case MROCE_RST_RESOURCE:
		/* The timer resends after Retry After, counting the try. */
		if (mroce_reset_reconnect_ok(conn)) {
			conn->life.hs_at =
				ktime_add_ms(ktime_get(),
					     ntohs(rsx->retry_after));
			mroce_conn_arm_timer(conn);
		}
		return 0;
	case MROCE_RST_VERSION:
		pr_info_ratelimited("metaroce: %s: peer %pI6c supports versions %u to %u only\n",
				    dev_name(&mdev->ibdev.dev), conn->peer.raw,
				    rsx->vmin_vmax >> 4, rsx->vmin_vmax & 0xf);
		fallthrough;
	default:
		mroce_conn_fail(conn);		/* C15 */
	}
	return 0;
}
