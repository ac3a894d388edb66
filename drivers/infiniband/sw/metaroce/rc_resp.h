/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rc_resp.c: the RC responder: placing requests, NAKs, credits (spec 10,
 * 13).
 */
#ifndef MROCE_RC_RESP_H
#define MROCE_RC_RESP_H

#include "transport.h"

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
