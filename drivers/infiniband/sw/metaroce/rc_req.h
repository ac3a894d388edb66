/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rc_req.c: the RC requester: sending work requests, responses, completions
 * (spec 10, 11).
 */
#ifndef MROCE_RC_REQ_H
#define MROCE_RC_REQ_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "wire.h"

struct mroce_conn;
struct mroce_qp;
struct mroce_stream;
struct mroce_txrec;

void mroce_rc_send(struct mroce_qp *qp);
bool mroce_rc_doorbell(struct mroce_qp *qp);
void mroce_rc_kick_waiters(struct mroce_conn *conn, struct sk_buff_head *q);
void mroce_rc_rx_sr(struct mroce_conn *conn, const struct mroce_sr *sr);
void mroce_rc_rx_nak(struct mroce_conn *conn, const struct mroce_nkx *nkx);
bool mroce_rc_rx_response(struct mroce_conn *conn, struct mroce_qp *qp,
			  struct sk_buff *skb);
int mroce_rc_build_payload(struct mroce_conn *conn,
			   const struct mroce_txrec *rec, void *buf);
void mroce_rc_stream_reset(struct mroce_qp *qp);
void mroce_rc_requester_start(struct mroce_qp *qp);
bool mroce_rc_still_needed(struct mroce_conn *conn,
			   const struct mroce_txrec *rec);
u32 mroce_msgs_out(const struct mroce_stream *st);
void mroce_rc_fail_all(struct mroce_conn *conn, struct mroce_qp *qp);
void mroce_rc_fail(struct mroce_conn *conn, struct mroce_qp *qp, u32 ssn,
		   enum ib_wc_status status);
void mroce_rc_peer_completed(struct mroce_conn *conn, struct mroce_qp *qp,
			     u32 completed);
void mroce_rc_fatal_nak(struct mroce_conn *conn, struct mroce_qp *qp, u8 code,
			u32 ssn);
bool mroce_rc_incomplete(struct mroce_qp *qp);
u32 mroce_rc_oldest_ssn(struct mroce_qp *qp);
bool mroce_rc_rnr_resend(struct mroce_conn *conn, struct mroce_qp *qp);
u64 mroce_rc_retry_budget_us(const struct mroce_qp *qp);

#endif /* MROCE_RC_REQ_H */
