// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Posting work requests and polling completions (IB_POLL_DIRECT CQs, polled
 * with ib_poll_cq() and a wall-time limit: TCG is slow).
 */
#include <linux/delay.h>
#include <linux/jiffies.h>

#include "kverbs.h"

int kv_post_send(struct kv_test *t, struct kv_ep *ep,
		 const struct ib_send_wr *wr, const char *what)
{
	const struct ib_send_wr *bad = NULL;
	int err;

	err = ib_post_send(ep->qp, wr, &bad);
	if (err)
		return kv_fail(t, "%s: ib_post_send on %s: %pe", what,
			       ep->dev->name, ERR_PTR(err));
	return 0;
}

int kv_post_recv(struct kv_test *t, struct kv_ep *ep,
		 const struct ib_recv_wr *wr, const char *what)
{
	const struct ib_recv_wr *bad = NULL;
	int err;

	err = ib_post_recv(ep->qp, wr, &bad);
	if (err)
		return kv_fail(t, "%s: ib_post_recv on %s: %pe", what,
			       ep->dev->name, ERR_PTR(err));
	return 0;
}

/* One receive of len bytes at off in b; b NULL: no scatter entry at all. */
int kv_post_recv_buf(struct kv_test *t, struct kv_ep *ep, u64 wr_id,
		     const struct kv_buf *b, size_t off, u32 len)
{
	struct ib_recv_wr wr = { .wr_id = wr_id };
	struct ib_sge sge;

	if (b) {
		sge = kv_sge(ep, b, off, len);
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	return kv_post_recv(t, ep, &wr, "receive");
}

int kv_poll(struct kv_test *t, struct ib_cq *cq, struct ib_wc *wc,
	    const char *what)
{
	unsigned long end = jiffies + msecs_to_jiffies(kv_wc_timeout_ms);
	int n;

	for (;;) {
		n = ib_poll_cq(cq, 1, wc);
		if (n == 1)
			return 0;
		if (n < 0)
			return kv_fail(t, "%s: ib_poll_cq: %pe", what,
				       ERR_PTR(n));
		if (time_after_eq(jiffies, end))
			return kv_fail(t, "%s: no completion within %u ms",
				       what, kv_wc_timeout_ms);
		usleep_range(200, 1000);
	}
}

/*
 * Poll one completion and check its wr_id and status, and its opcode
 * (unless opcode < 0) when it succeeded: the opcode of an error completion
 * is undefined.
 */
int kv_expect(struct kv_test *t, struct ib_cq *cq, struct ib_wc *wc,
	      u64 wr_id, enum ib_wc_status status, int opcode,
	      const char *what)
{
	int err = kv_poll(t, cq, wc, what);

	if (err)
		return err;
	if (wc->status != status)
		return kv_fail(t, "%s: status %s (vendor_err %u, wr_id 0x%llx), expected %s",
			       what, ib_wc_status_msg(wc->status),
			       wc->vendor_err, wc->wr_id,
			       ib_wc_status_msg(status));
	if (wc->wr_id != wr_id)
		return kv_fail(t, "%s: wr_id 0x%llx, expected 0x%llx", what,
			       wc->wr_id, wr_id);
	if (status == IB_WC_SUCCESS && opcode >= 0 && wc->opcode != opcode)
		return kv_fail(t, "%s: opcode %d, expected %d", what,
			       wc->opcode, opcode);
	return 0;
}

/* Nothing may complete on cq within ms. */
int kv_expect_none(struct kv_test *t, struct ib_cq *cq, unsigned int ms,
		   const char *what)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	struct ib_wc wc;
	int n;

	for (;;) {
		n = ib_poll_cq(cq, 1, &wc);
		if (n == 1)
			return kv_fail(t,
				       "%s: unexpected completion wr_id 0x%llx status %s opcode %d",
				       what, wc.wr_id,
				       ib_wc_status_msg(wc.status), wc.opcode);
		if (n < 0)
			return kv_fail(t, "%s: ib_poll_cq: %pe", what,
				       ERR_PTR(n));
		if (time_after_eq(jiffies, end))
			return 0;
		usleep_range(200, 1000);
	}
}

/* Post one signaled send WR and wait for its successful completion. */
int kv_send_wait(struct kv_test *t, struct kv_ep *ep, struct ib_send_wr *wr,
		 int opcode, const char *what)
{
	struct ib_wc wc;
	int err;

	wr->send_flags |= IB_SEND_SIGNALED;
	err = kv_post_send(t, ep, wr, what);
	if (err)
		return err;
	return kv_expect(t, ep->scq, &wc, wr->wr_id, IB_WC_SUCCESS, opcode,
			 what);
}

const char *kv_state_name(enum ib_qp_state state)
{
	static const char * const names[] = {
		[IB_QPS_RESET] = "RESET",
		[IB_QPS_INIT] = "INIT",
		[IB_QPS_RTR] = "RTR",
		[IB_QPS_RTS] = "RTS",
		[IB_QPS_SQD] = "SQD",
		[IB_QPS_SQE] = "SQE",
		[IB_QPS_ERR] = "ERR",
	};

	if ((unsigned int)state < ARRAY_SIZE(names) && names[state])
		return names[state];
	return "?";
}
