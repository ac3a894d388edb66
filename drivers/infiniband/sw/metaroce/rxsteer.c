// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive steering: a connection takes its packets on one CPU, its home.
 *
 * One lock guards a connection, so its packets taken on several CPUs at
 * once would only wait for each other.  And a software netdev (veth,
 * loopback) receives every packet on the CPU that sent it: the two ends of
 * a connection between namespaces, the sender's ACK processing and new
 * data and the receiver's placement, would share the sending CPU while
 * the others stay idle.  So a packet that arrives on another CPU than its
 * connection's home, after the checks of spec 4.7, joins the home's queue
 * and is taken there by a bottom-half work item, in arrival order and up
 * to MROCE_RX_HOLD_PKTS under one hold of the connection lock
 * (mroce_conn_rcv_pkts()).  A packet that arrives at home while nothing
 * waits is taken at once, and so is a packet alone: steering starts only
 * where a CPU has a backlog of packets to work through.  A connection's
 * home is chosen round the online CPUs when it is created, which puts the
 * two ends of a connection on one host on CPUs of their own (spec 20.1).  The
 * rx_steer tunable turns steering off:
 * every packet is taken where it arrived, as the stack delivered it.
 */
#include <linux/cpumask.h>
#include <linux/netdevice.h>

#include "conn.h"
#include "counters.h"
#include "lifecycle.h"
#include "mroce.h"
#include "rxsteer.h"
#include "tunables.h"

/* Packets waiting for one connection's home CPU; more are dropped. */
#define MROCE_STEER_QLEN	2048
/* Packets waiting on a CPU that make a hop to the home worth it. */
#define MROCE_STEER_BACKLOG	8
/* Packets one run of the work item takes before it yields. */
#define MROCE_STEER_BUDGET	256

struct workqueue_struct *mroce_rx_wq;

/*
 * The work item: take what waits, up to a budget, on the home CPU.  Each
 * run holds one reference of the connection, taken by the call that
 * queued it; a run that leaves packets behind queues the next run and
 * hands its reference on.
 */
static void mroce_steer_work(struct work_struct *work)
{
	struct mroce_conn *conn = container_of(work, struct mroce_conn,
					       steer.work);
	struct mroce_conn_steer *st = &conn->steer;
	struct ib_device *ibdev = &conn->mdev->ibdev;
	struct sk_buff_head pkts;
	struct sk_buff *skb;
	bool more;

	__skb_queue_head_init(&pkts);
	spin_lock_bh(&st->q.lock);
	while (skb_queue_len(&pkts) < MROCE_STEER_BUDGET &&
	       (skb = __skb_dequeue(&st->q)))
		__skb_queue_tail(&pkts, skb);
	st->taking = true;
	spin_unlock_bh(&st->q.lock);

	/* An unregistered device takes no packet (as mroce_rx_device()). */
	if (ib_device_try_get(ibdev)) {
		rcu_read_lock();
		mroce_conn_rcv_pkts(conn, &pkts);
		rcu_read_unlock();
		ib_device_put(ibdev);
	} else {
		__skb_queue_purge_reason(&pkts, SKB_CONSUMED);
	}

	spin_lock_bh(&st->q.lock);
	st->taking = false;
	more = !skb_queue_empty(&st->q);
	spin_unlock_bh(&st->q.lock);
	if (more && queue_work(mroce_rx_wq, &st->work))
		return;
	mroce_conn_put(conn);
}

/*
 * Packets waiting in this CPU's backlog, where a software netdev queues
 * what it receives (0 without the RPS accounting that counts them).
 */
static unsigned int mroce_backlog_len(void)
{
#ifdef CONFIG_RPS
	const struct softnet_data *sd = this_cpu_ptr(&softnet_data);

	return READ_ONCE(sd->input_queue_tail) -
	       READ_ONCE(sd->input_queue_head);
#else
	return 0;
#endif
}

static atomic_t mroce_steer_next = ATOMIC_INIT(0);

/*
 * The home of a new connection: round the online CPUs, so that the two
 * ends of a connection on one host, created one after the other, get
 * CPUs of their own.  -1 if there is none.
 */
static int mroce_steer_home(void)
{
	unsigned int n = num_online_cpus(), cpu;

	if (!n)
		return -1;
	cpu = cpumask_nth((unsigned int)atomic_inc_return(&mroce_steer_next) %
			  n, cpu_online_mask);
	return cpu < nr_cpu_ids ? cpu : -1;
}

/*
 * Hand skb, a packet of conn's that passed the checks of spec 4.7, to
 * conn's home CPU.  False if it is to be taken here and now: nothing of
 * conn's waits or is being taken, and this is the home, or this CPU has
 * fewer than MROCE_STEER_BACKLOG packets to work through besides and had
 * no more since the last tick (a hop to another CPU costs a packet alone
 * more than it saves); or steering is off, the home went offline, or conn
 * is going away.  True if the packet was queued, or dropped (the queue is
 * full).  Softirq, under RCU (conn found without a reference).
 */
bool mroce_steer(struct mroce_conn *conn, struct sk_buff *skb)
{
	struct mroce_conn_steer *st = &conn->steer;
	int here = smp_processor_id(), cpu;
	bool kick;

	spin_lock(&st->q.lock);
	cpu = st->cpu;
	kick = skb_queue_empty(&st->q);
	if (kick && !st->taking) {
		/* Off: but what waits still goes first (MRC-PATH-039). */
		if (!READ_ONCE(mroce_rx_steer) || cpu < 0 || cpu == here ||
		    !cpu_online(cpu))
			goto here;
		/* Busy: steered since the last tick, or a backlog here. */
		if (mroce_backlog_len() >= MROCE_STEER_BACKLOG)
			st->until = jiffies + 1;
		else if (!time_before(jiffies, st->until))
			goto here;
	}
	if (kick) {
		/*
		 * No run is queued: this call queues one.  A run being done
		 * holds a reference, so only a connection nobody uses any
		 * more has none to take.
		 */
		if (!refcount_inc_not_zero(&conn->ref))
			goto here;
	} else if (skb_queue_len(&st->q) >= MROCE_STEER_QLEN) {
		spin_unlock(&st->q.lock);
		mroce_count(conn->mdev, DROP_NO_RESOURCE);
		kfree_skb(skb);
		return true;
	}
	__skb_queue_tail(&st->q, skb);
	spin_unlock(&st->q.lock);
	mroce_count(conn->mdev, RX_STEERED);
	if (kick && !queue_work_on(cpu, mroce_rx_wq, &st->work))
		mroce_conn_put(conn);
	return true;
here:
	spin_unlock(&st->q.lock);
	return false;
}

void mroce_steer_init(struct mroce_conn *conn)
{
	skb_queue_head_init(&conn->steer.q);
	INIT_WORK(&conn->steer.work, mroce_steer_work);
	conn->steer.cpu = mroce_steer_home();
	conn->steer.until = jiffies;
}

/* The connection is freed: no run is queued, nothing should wait. */
void mroce_steer_purge(struct mroce_conn *conn)
{
	skb_queue_purge(&conn->steer.q);
}
