// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_many: iters WRs a->b cycling SEND, RDMA_WRITE, SEND_WITH_IMM,
 * RDMA_WRITE_WITH_IMM and RDMA_READ, of varying lengths, up to 32 in
 * flight, only every 4th (and the last) signaled.  Send completions must
 * come for exactly the signaled WRs, in order; receive completions in
 * order, for exactly the SENDs and WRITE_WITH_IMMs.  Every byte is checked:
 * received and written data at its completion, READ data once a later
 * completion shows the READ done.
 */
#include <linux/delay.h>
#include <linux/jiffies.h>

#include "kverbs.h"

#define KV_M_DEPTH		32	/* WRs in flight */
#define KV_M_SLOTS		64	/* buffer slots per WR, > KV_M_DEPTH */
#define KV_M_RECVS		64	/* receives kept posted on b */
#define KV_M_SIGNAL		4	/* every 4th WR is signaled */
#define KV_M_OPS		5
#define KV_M_POLL		16
#define KV_M_READ_SEED		600

enum kv_m_op {
	KV_M_SEND,
	KV_M_WRITE,
	KV_M_SEND_IMM,
	KV_M_WRITE_IMM,
	KV_M_READ,
};

/* The ops of a cycle that consume a receive, in order. */
static const u32 kv_m_consumer[] = { KV_M_SEND, KV_M_SEND_IMM, KV_M_WRITE_IMM };

struct kv_many {
	struct kv_test *t;
	struct kv_ep a, b;
	struct kv_buf src;		/* a: data of SENDs and WRITEs */
	struct kv_buf dst;		/* a: READ results */
	struct kv_buf wtgt;		/* b: WRITE target */
	struct kv_buf rsrc;		/* b: READ source */
	struct kv_buf rbuf;		/* b: receive buffers */
	struct kv_rmr wmr, rmr;
	u32 msg;			/* largest message */
	u32 iters;
	u32 posted;			/* WRs posted */
	u32 done;			/* WRs below this one are complete */
	u32 consumers;			/* receive-consuming WRs posted */
	u32 nconsumers;			/* ... in all */
	u32 recv_posted;
	u32 recv_done;
};

static enum kv_m_op kv_m_op(u32 i)
{
	return i % KV_M_OPS;
}

static bool kv_m_consumes(enum kv_m_op op)
{
	return op == KV_M_SEND || op == KV_M_SEND_IMM || op == KV_M_WRITE_IMM;
}

/* The WR that consumes receive k. */
static u32 kv_m_owner(u32 k)
{
	return k / ARRAY_SIZE(kv_m_consumer) * KV_M_OPS +
	       kv_m_consumer[k % ARRAY_SIZE(kv_m_consumer)];
}

static u32 kv_m_len(const struct kv_many *m, u32 i)
{
	return 1 + (u32)(((u64)i * 997) % m->msg);
}

static bool kv_m_signaled(const struct kv_many *m, u32 i)
{
	return i % KV_M_SIGNAL == KV_M_SIGNAL - 1 || i == m->iters - 1;
}

static size_t kv_m_off(const struct kv_many *m, u32 i)
{
	return (size_t)(i % KV_M_SLOTS) * m->msg;
}

static int kv_m_post(struct kv_many *m)
{
	u32 i = m->posted, len = kv_m_len(m, i);
	size_t off = kv_m_off(m, i);
	enum kv_m_op op = kv_m_op(i);
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;
	char what[40];

	if (op == KV_M_READ) {
		kv_canary(m->dst.va + off, len);
		kv_buf_for_dev(&m->dst);
		sge = kv_sge(&m->a, &m->dst, off, len);
		wr.wr.opcode = IB_WR_RDMA_READ;
		wr.remote_addr = m->rmr.addr + off;
		wr.rkey = m->rmr.rkey;
	} else {
		kv_fill(m->src.va + off, len, 1000 + i, 0);
		kv_buf_for_dev(&m->src);
		sge = kv_sge(&m->a, &m->src, off, len);
		wr.wr.opcode = op == KV_M_SEND ? IB_WR_SEND :
			       op == KV_M_SEND_IMM ? IB_WR_SEND_WITH_IMM :
			       op == KV_M_WRITE ? IB_WR_RDMA_WRITE :
			       IB_WR_RDMA_WRITE_WITH_IMM;
		wr.wr.ex.imm_data = cpu_to_be32(i);
		wr.remote_addr = m->wmr.addr + off;
		wr.rkey = m->wmr.rkey;
	}
	wr.wr.wr_id = i;
	wr.wr.send_flags = kv_m_signaled(m, i) ? IB_SEND_SIGNALED : 0;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	snprintf(what, sizeof(what), "WR %u", i);
	m->posted++;
	if (kv_m_consumes(op))
		m->consumers++;
	return kv_post_send(m->t, &m->a, &wr.wr, what);
}

static int kv_m_post_recv(struct kv_many *m)
{
	u32 k = m->recv_posted++;

	return kv_post_recv_buf(m->t, &m->b, k, &m->rbuf,
				(size_t)(k % KV_M_RECVS) * m->msg, m->msg);
}

/* WR j is complete: check what it wrote. */
static int kv_m_verify(struct kv_many *m, u32 j)
{
	size_t off = kv_m_off(m, j);
	u32 len = kv_m_len(m, j);
	char what[48];

	switch (kv_m_op(j)) {
	case KV_M_READ:
		snprintf(what, sizeof(what), "RDMA_READ WR %u", j);
		kv_buf_for_cpu(&m->dst);
		return kv_check_pattern(m->t, m->dst.va + off, len,
					KV_M_READ_SEED, off, what);
	case KV_M_WRITE:
	case KV_M_WRITE_IMM:
		snprintf(what, sizeof(what), "RDMA_WRITE WR %u", j);
		kv_buf_for_cpu(&m->wtgt);
		return kv_check_pattern(m->t, m->wtgt.va + off, len, 1000 + j,
					0, what);
	default:
		return 0;
	}
}

static int kv_m_send_wc(struct kv_many *m, const struct ib_wc *wc)
{
	static const int opcodes[KV_M_OPS] = {
		IB_WC_SEND, IB_WC_RDMA_WRITE, IB_WC_SEND, IB_WC_RDMA_WRITE,
		IB_WC_RDMA_READ,
	};
	struct kv_test *t = m->t;
	u32 s = m->done, j;
	int err;

	while (s < m->posted && !kv_m_signaled(m, s))
		s++;
	if (wc->status != IB_WC_SUCCESS)
		return kv_fail(t, "WR %llu: status %s (vendor_err %u)",
			       wc->wr_id, ib_wc_status_msg(wc->status),
			       wc->vendor_err);
	if (s >= m->posted || wc->wr_id != s)
		return kv_fail(t,
			       "send completion for WR %llu, expected WR %u (out of order, or an unsignaled WR completed)",
			       wc->wr_id, s);
	if (wc->opcode != opcodes[kv_m_op(s)])
		return kv_fail(t, "WR %u: opcode %d, expected %d", s,
			       wc->opcode, opcodes[kv_m_op(s)]);
	if (kv_m_op(s) == KV_M_READ && wc->byte_len != kv_m_len(m, s))
		return kv_fail(t, "RDMA_READ WR %u: byte_len %u, expected %u",
			       s, wc->byte_len, kv_m_len(m, s));
	for (j = m->done; j <= s; j++) {
		err = kv_m_verify(m, j);
		if (err)
			return err;
	}
	m->done = s + 1;
	return 0;
}

static int kv_m_recv_wc(struct kv_many *m, const struct ib_wc *wc)
{
	u32 k = m->recv_done, i = kv_m_owner(k), len = kv_m_len(m, i);
	enum kv_m_op op = kv_m_op(i);
	bool imm = op != KV_M_SEND;
	struct kv_test *t = m->t;
	char what[48];
	int err;

	if (wc->status != IB_WC_SUCCESS)
		return kv_fail(t, "receive %llu: status %s", wc->wr_id,
			       ib_wc_status_msg(wc->status));
	if (wc->wr_id != k)
		return kv_fail(t, "receive completion %llu, expected %u (out of order)",
			       wc->wr_id, k);
	if (wc->opcode != (op == KV_M_WRITE_IMM ? IB_WC_RECV_RDMA_WITH_IMM :
						   IB_WC_RECV) ||
	    wc->byte_len != len)
		return kv_fail(t, "receive %u (WR %u): opcode %d byte_len %u, expected %d %u",
			       k, i, wc->opcode, wc->byte_len,
			       op == KV_M_WRITE_IMM ? IB_WC_RECV_RDMA_WITH_IMM :
						      IB_WC_RECV, len);
	if (!!(wc->wc_flags & IB_WC_WITH_IMM) != imm ||
	    (imm && be32_to_cpu(wc->ex.imm_data) != i))
		return kv_fail(t, "receive %u (WR %u): wc_flags 0x%x imm 0x%x",
			       k, i, wc->wc_flags,
			       be32_to_cpu(wc->ex.imm_data));
	snprintf(what, sizeof(what), "receive %u (WR %u)", k, i);
	if (op == KV_M_WRITE_IMM) {
		err = kv_m_verify(m, i);
	} else {
		kv_buf_for_cpu(&m->rbuf);
		err = kv_check_pattern(t, m->rbuf.va +
				       (size_t)(k % KV_M_RECVS) * m->msg, len,
				       1000 + i, 0, what);
	}
	if (err)
		return err;
	m->recv_done++;
	if (m->recv_posted < m->nconsumers)
		err = kv_m_post_recv(m);
	return err;
}

/* Post what the window allows, reap both CQs; *progress if anything. */
static int kv_m_step(struct kv_many *m, bool *progress)
{
	struct ib_wc wc[KV_M_POLL];
	int n, i, err;

	while (m->posted < m->iters && m->posted - m->done < KV_M_DEPTH) {
		if (kv_m_consumes(kv_m_op(m->posted)) &&
		    m->consumers >= m->recv_posted)
			break;
		err = kv_m_post(m);
		if (err)
			return err;
		*progress = true;
	}
	n = ib_poll_cq(m->a.scq, KV_M_POLL, wc);
	for (i = 0; i < n; i++) {
		err = kv_m_send_wc(m, &wc[i]);
		if (err)
			return err;
		*progress = true;
	}
	n = ib_poll_cq(m->b.rcq, KV_M_POLL, wc);
	for (i = 0; i < n; i++) {
		err = kv_m_recv_wc(m, &wc[i]);
		if (err)
			return err;
		*progress = true;
	}
	return 0;
}

static int kv_m_run(struct kv_many *m)
{
	unsigned long last = jiffies;
	bool progress;
	u32 i;
	int err = 0;

	for (i = 0; i < m->iters; i++)
		m->nconsumers += kv_m_consumes(kv_m_op(i));
	while (!err && m->recv_posted < min_t(u32, KV_M_RECVS, m->nconsumers))
		err = kv_m_post_recv(m);

	while (!err && (m->done < m->iters || m->recv_done < m->nconsumers)) {
		progress = false;
		err = kv_m_step(m, &progress);
		if (err)
			break;
		if (progress) {
			last = jiffies;
		} else if (time_after(jiffies,
				      last + msecs_to_jiffies(kv_wc_timeout_ms))) {
			err = kv_fail(m->t,
				      "stalled for %u ms: %u of %u WRs complete, %u posted, %u of %u receives complete",
				      kv_wc_timeout_ms, m->done, m->iters,
				      m->posted, m->recv_done, m->nconsumers);
		} else {
			usleep_range(200, 1000);
		}
	}
	if (!err)
		err = kv_expect_none(m->t, m->a.scq, 50, "send CQ at the end");
	if (!err)
		err = kv_expect_none(m->t, m->b.rcq, 50, "recv CQ at the end");
	return err;
}

static int kv_m_setup(struct kv_many *m)
{
	struct kv_test *t = m->t;
	size_t bytes = (size_t)KV_M_SLOTS * m->msg;
	int err;

	err = kv_rc_pair_default(t, &m->a, &m->b);
	if (!err)
		err = kv_buf_alloc(t, &m->src, m->a.dev->ibdev, bytes);
	if (!err)
		err = kv_buf_alloc(t, &m->dst, m->a.dev->ibdev, bytes);
	if (!err)
		err = kv_buf_alloc(t, &m->wtgt, m->b.dev->ibdev, bytes);
	if (!err)
		err = kv_buf_alloc(t, &m->rsrc, m->b.dev->ibdev, bytes);
	if (!err)
		err = kv_buf_alloc(t, &m->rbuf, m->b.dev->ibdev,
				   (size_t)KV_M_RECVS * m->msg);
	if (err)
		return err;
	kv_fill(m->rsrc.va, bytes, KV_M_READ_SEED, 0);
	kv_buf_for_dev(&m->rsrc);
	err = kv_rmr_reg(t, &m->b, &m->wtgt, IB_ACCESS_REMOTE_WRITE, &m->wmr);
	if (!err)
		err = kv_rmr_reg(t, &m->b, &m->rsrc, IB_ACCESS_REMOTE_READ,
				 &m->rmr);
	return err;
}

int kv_test_rc_many(struct kv_test *t)
{
	struct kv_many *m;
	int err;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return kv_fail(t, "out of memory");
	m->t = t;
	m->iters = t->ctx->iters;
	m->msg = min_t(u32, t->ctx->size, KV_BIG / KV_M_SLOTS);
	if (m->msg < t->ctx->size)
		kv_diag(t, "messages limited to %u bytes", m->msg);
	err = kv_m_setup(m);
	if (!err)
		err = kv_m_run(m);
	kv_ep_destroy(&m->b);
	kv_ep_destroy(&m->a);
	kv_buf_free(&m->rbuf);
	kv_buf_free(&m->rsrc);
	kv_buf_free(&m->wtgt);
	kv_buf_free(&m->dst);
	kv_buf_free(&m->src);
	kfree(m);
	return err;
}
