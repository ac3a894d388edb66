/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rc_resp.c: the RC responder: placing requests (a tracker per message in
 * placement, conn->rx.trackers), NAKs, credits (spec 10, 13).  Under
 * conn->lock.
 */
#ifndef MROCE_RC_RESP_H
#define MROCE_RC_RESP_H

#include <linux/skbuff.h>

#include "segwin.h"
#include "wire.h"

struct mroce_conn;
struct mroce_qp;

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

void mroce_rc_fill_sr(struct mroce_qp *qp, struct mroce_sr *sr);
void mroce_rc_resp_resume(struct mroce_conn *conn, struct mroce_qp *qp,
			  struct sk_buff_head *q);
void mroce_rc_credit(struct mroce_qp *qp);
bool mroce_rc_rx_request(struct mroce_conn *conn, struct mroce_qp *qp,
			 struct sk_buff *skb, struct sk_buff_head *q);
/* The fields of a NAK (spec 5.5.9). */
struct mroce_nak_info {
	u8 code;
	u8 detail;
	u32 req;
	u32 resp;
	u32 ssn;
	u32 msn;
	u32 param;
	u32 completed;
};

void mroce_nak_send(struct mroce_conn *conn, const struct sk_buff *in,
		    const struct mroce_nak_info *n, struct sk_buff_head *q);
void mroce_send_nak(struct mroce_conn *conn, const struct sk_buff *in,
		    u8 code, u8 detail, u32 param, struct sk_buff_head *q);
void mroce_trackers_drop_qp(struct mroce_conn *conn, u32 qpn);
void mroce_srq_flush_bound(struct mroce_conn *conn, struct mroce_qp *qp);

#endif /* MROCE_RC_RESP_H */
