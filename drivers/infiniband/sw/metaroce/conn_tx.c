// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sending a connection's transmit queue: in PSN order, from one context at
 * a time, and from one CPU at a time while a software netdev may still
 * hold packets on the CPU that sent last.
 */
#include <linux/netdevice.h>

#include "mroce.h"
#include "net.h"
#include "transport.h"

/*
 * Hand the packets built under conn->lock to the connection's transmit
 * queue.  Called with conn->lock held, so packets enter the queue in PSN
 * order whichever context built them.
 */
void mroce_conn_tx_commit(struct mroce_conn *conn, struct sk_buff_head *q)
{
	spin_lock(&conn->txq.lock);
	skb_queue_splice_tail_init(q, &conn->txq);
	spin_unlock(&conn->txq.lock);
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
	int last = READ_ONCE(conn->tx_cpu);

	if (last < 0 || last == cpu || !cpu_online(last))
		return true;
	return (int)(READ_ONCE(per_cpu(softnet_data, last).input_queue_head) -
		     READ_ONCE(conn->tx_qtail)) >= 0;
#else
	return true;
#endif
}

/* Remember where the last packet went (bottom halves off). */
static void mroce_conn_tx_mark(struct mroce_conn *conn, int cpu)
{
#ifdef CONFIG_RPS
	WRITE_ONCE(conn->tx_qtail,
		   READ_ONCE(this_cpu_ptr(&softnet_data)->input_queue_tail));
	WRITE_ONCE(conn->tx_cpu, cpu);
#endif
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
 */
static void __mroce_conn_xmit(struct mroce_conn *conn, bool tx_work)
{
	struct sk_buff *skb;
	u32 sent = 0;
	__be16 sport;
	int cpu;
	u8 p;

	do {
		if (test_and_set_bit_lock(0, &conn->tx_busy))
			return;
		local_bh_disable();
		cpu = smp_processor_id();
		if (!mroce_conn_tx_cpu_ok(conn, cpu)) {
			clear_bit_unlock(0, &conn->tx_busy);
			queue_work_on(READ_ONCE(conn->tx_cpu), mroce_tx_wq,
				      &conn->tx_work);
			local_bh_enable();
			return;
		}
		while ((skb = skb_dequeue(&conn->txq))) {
			if (++sent % MROCE_TX_BUDGET == 0) {
				mroce_conn_tx_mark(conn, cpu);
				if (tx_work) {
					local_bh_enable();
					cond_resched();
					local_bh_disable();
					cpu = smp_processor_id();
				} else {
					skb_queue_head(&conn->txq, skb);
					clear_bit_unlock(0, &conn->tx_busy);
					queue_work_on(cpu, mroce_tx_wq,
						      &conn->tx_work);
					local_bh_enable();
					return;
				}
			}
			sport = mroce_cb(skb)->sport ?: conn->hs_sport;
			p = mroce_cb(skb)->plane;
			if (p >= MROCE_MAX_PLANES ||
			    !(READ_ONCE(conn->planes_paired) & BIT(p)))
				p = 0;
			mroce_xmit(conn->mdev, skb, p ? &conn->laddr[p] :
				   &conn->local, p ? &conn->raddr[p] :
				   &conn->peer, sport);
		}
		if (sent)
			mroce_conn_tx_mark(conn, cpu);
		clear_bit_unlock(0, &conn->tx_busy);
		local_bh_enable();
		smp_mb__after_atomic();	/* see packets queued meanwhile */
	} while (!skb_queue_empty_lockless(&conn->txq));
}

void mroce_conn_xmit(struct mroce_conn *conn)
{
	__mroce_conn_xmit(conn, false);
}

static void mroce_conn_tx_work(struct work_struct *work)
{
	__mroce_conn_xmit(container_of(work, struct mroce_conn, tx_work),
			  true);
}

void mroce_conn_tx_init(struct mroce_conn *conn)
{
	skb_queue_head_init(&conn->txq);
	INIT_WORK(&conn->tx_work, mroce_conn_tx_work);
	conn->tx_cpu = -1;
}
