// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sending a connection's transmit queue: in PSN order, from one context at
 * a time, and from one CPU at a time while a software netdev may still
 * hold packets on the CPU that sent last.
 */
#include <linux/netdevice.h>

#include "conn.h"
#include "conn_tx.h"
#include "mroce.h"
#include "net.h"
#include "pkt.h"
#include "rxpath.h"

/*
 * Hand the packets built under conn->lock to the connection's transmit
 * queue.  Called with conn->lock held, so packets enter the queue in PSN
 * order whichever context built them.
 */
void mroce_conn_tx_commit(struct mroce_conn *conn, struct sk_buff_head *q)
{
	lockdep_assert_held(&conn->lock);

	if (conn->rx.carrying)
		mroce_ack_fill_carried(conn, q);
	spin_lock(&conn->tx.q.lock);
	skb_queue_splice_tail_init(q, &conn->tx.q);
	spin_unlock(&conn->tx.q.lock);
}

#define MROCE_TX_BUDGET		64	/* packets between reschedules */

/*
 * Software netdevs (veth, loopback) queue a sent packet to the sending
 * CPU's backlog, and each CPU works through its own backlog: packets sent
 * from another CPU overtake those still waiting in the backlog of the CPU
 * that sent last, and the peer sees its paths reorder (spec 9.2.1 takes a
 * gap for a loss).  So a connection moves its sending to another CPU only
 * once that backlog went past the last packet it sent there, the rule RFS
 * uses to move a flow (get_rps_cpu()).  Without RPS accounting any CPU
 * may send.
 */
static bool mroce_conn_tx_cpu_ok(const struct mroce_conn *conn, int cpu)
{
#ifdef CONFIG_RPS
	int last = READ_ONCE(conn->tx.cpu);

	if (last < 0 || last == cpu || !cpu_online(last))
		return true;
	return (int)(READ_ONCE(per_cpu(softnet_data, last).input_queue_head) -
		     READ_ONCE(conn->tx.qtail)) >= 0;
#else
	return true;
#endif
}

/* Remember where the last packet went (bottom halves off). */
static void mroce_conn_tx_mark(struct mroce_conn *conn, int cpu)
{
#ifdef CONFIG_RPS
	WRITE_ONCE(conn->tx.qtail,
		   READ_ONCE(this_cpu_ptr(&softnet_data)->input_queue_tail));
	WRITE_ONCE(conn->tx.cpu, cpu);
#endif
}

/*
 * The packets of one budget, gathered into runs for mroce_xmit_batch():
 * one open run per path (plane and entropy), its packets of one length
 * and one traffic class (data or control, spec 4.2.1).  A packet of the
 * path that cannot join sends the run first, so each path's packets
 * leave in the order they were queued; the paths' runs interleave as the
 * paths' packets may anyway.  A shorter packet does not join: a batch
 * whose packets are too long for a smaller route MTU loses no packet
 * that would have gone alone.
 */
#define MROCE_TX_RUNS		8

struct mroce_tx_run {
	struct sk_buff_head q;
	__be16 sport;
	u8 plane;
	bool data;		/* sequenced packets or datagrams: dscp */
	u32 len;		/* of each packet, trailer not included */
};

struct mroce_tx_runs {
	struct mroce_tx_run run[MROCE_TX_RUNS];
	u32 n;
};

static void mroce_tx_run_send(struct mroce_conn *conn, struct mroce_tx_run *r)
{
	u8 p = r->plane;

	mroce_xmit_batch(conn->mdev, &r->q,
			 p ? &conn->cx.laddr[p] : &conn->local,
			 p ? &conn->cx.raddr[p] : &conn->peer, r->sport);
}

static void mroce_tx_runs_send(struct mroce_conn *conn,
			       struct mroce_tx_runs *runs)
{
	u32 i;

	for (i = 0; i < runs->n; i++)
		mroce_tx_run_send(conn, &runs->run[i]);
	runs->n = 0;
}

/*
 * Add skb to its path's run of at most max packets, sending what cannot
 * wait for more; with max 1, send it at once.
 */
static void mroce_tx_add(struct mroce_conn *conn, struct mroce_tx_runs *runs,
			 struct sk_buff *skb, u32 max)
{
	bool data = mroce_is_data_class(((struct mroce_bth *)skb->data)->type);
	__be16 sport = mroce_cb(skb)->sport ?: conn->life.hs_sport;
	u8 p = mroce_cb(skb)->plane;
	struct mroce_tx_run *r;
	u32 i;

	if (p >= MROCE_MAX_PLANES ||
	    !(READ_ONCE(conn->cx.planes_paired) & BIT(p)))
		p = 0;
	if (max == 1) {
		mroce_xmit(conn->mdev, skb,
			   p ? &conn->cx.laddr[p] : &conn->local,
			   p ? &conn->cx.raddr[p] : &conn->peer, sport);
		return;
	}
	for (i = 0; i < runs->n; i++)
		if (runs->run[i].sport == sport && runs->run[i].plane == p)
			break;
	r = &runs->run[i];
	if (i < runs->n && !skb_queue_empty(&r->q)) {
		if (skb->len == r->len && data == r->data &&
		    skb_queue_len(&r->q) < max &&
		    (skb_queue_len(&r->q) + 1) * (r->len + MROCE_CRC_LEN) <=
		    MROCE_GSO_MAX_BYTES) {
			__skb_queue_tail(&r->q, skb);
			if (skb_queue_len(&r->q) == max)
				mroce_tx_run_send(conn, r);
			return;
		}
		mroce_tx_run_send(conn, r);
	} else if (i == MROCE_TX_RUNS) {
		mroce_tx_runs_send(conn, runs);
		r = &runs->run[0];
		runs->n = 1;
	} else if (i == runs->n) {
		runs->n++;
	}
	r->sport = sport;
	r->plane = p;
	r->data = data;
	__skb_queue_tail(&r->q, skb);
	r->len = skb->len;
}

/*
 * Send the transmit queue, in order, from one context at a time: a context
 * that finds another sending leaves its packets to it.  Without conn->lock.
 * Sending can feed the queue (over a veth, the peer's answers are
 * processed in the same context), so only the connection's own work item
 * sends without bound, rescheduling every MROCE_TX_BUDGET packets; any
 * other context (softirq, a QP's send worker, a verb) sends a budget and
 * hands the rest to that work item on the same CPU.  A QP's worker must
 * not stay behind a connection that keeps sending: destroying the QP
 * waits for it.  A context on a CPU that may not send yet (see
 * mroce_conn_tx_cpu_ok()) hands the queue to the work item on the CPU
 * that sent last.
 * Bottom halves stay off for each budget: otherwise, outside softirq,
 * every transmit's own local_bh_enable() runs the backlog for the one
 * packet it just queued, and the receiver handles (and acknowledges)
 * packet by packet instead of in NAPI batches, at half the throughput.
 * Within a budget the packets go in runs per path (mroce_tx_add()); each
 * pass reads tx_batch_pkts once and sends its runs before it ends, so a
 * change of the tunable never finds packets waiting in a run.
 */
static void __mroce_conn_xmit(struct mroce_conn *conn, bool tx_work)
{
	struct mroce_tx_runs runs;
	struct sk_buff *skb;
	u32 sent = 0, i, max;
	int cpu;

	for (i = 0; i < MROCE_TX_RUNS; i++)
		__skb_queue_head_init(&runs.run[i].q);
	runs.n = 0;
	do {
		if (test_and_set_bit_lock(0, &conn->tx.busy))
			return;
		local_bh_disable();
		cpu = smp_processor_id();
		if (!mroce_conn_tx_cpu_ok(conn, cpu)) {
			clear_bit_unlock(0, &conn->tx.busy);
			queue_work_on(READ_ONCE(conn->tx.cpu), mroce_tx_wq,
				      &conn->tx.work);
			local_bh_enable();
			return;
		}
		max = mroce_tx_batch_max();
		while ((skb = skb_dequeue(&conn->tx.q))) {
			if (++sent % MROCE_TX_BUDGET == 0) {
				mroce_tx_runs_send(conn, &runs);
				mroce_conn_tx_mark(conn, cpu);
				if (tx_work) {
					local_bh_enable();
					cond_resched();
					local_bh_disable();
					cpu = smp_processor_id();
				} else {
					skb_queue_head(&conn->tx.q, skb);
					clear_bit_unlock(0, &conn->tx.busy);
					queue_work_on(cpu, mroce_tx_wq,
						      &conn->tx.work);
					local_bh_enable();
					return;
				}
			}
			mroce_tx_add(conn, &runs, skb, max);
		}
		mroce_tx_runs_send(conn, &runs);
		if (sent)
			mroce_conn_tx_mark(conn, cpu);
		clear_bit_unlock(0, &conn->tx.busy);
		local_bh_enable();
		smp_mb__after_atomic();	/* see packets queued meanwhile */
	} while (!skb_queue_empty_lockless(&conn->tx.q));
}

void mroce_conn_xmit(struct mroce_conn *conn)
{
	__mroce_conn_xmit(conn, false);
}

static void mroce_conn_tx_work(struct work_struct *work)
{
	__mroce_conn_xmit(container_of(work, struct mroce_conn, tx.work),
			  true);
}

void mroce_conn_tx_init(struct mroce_conn *conn)
{
	skb_queue_head_init(&conn->tx.q);
	INIT_WORK(&conn->tx.work, mroce_conn_tx_work);
	conn->tx.cpu = -1;
}
