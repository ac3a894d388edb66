/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Receive steering (rxsteer.c): a connection takes its packets on one CPU,
 * its home.
 */
#ifndef MROCE_RXSTEER_H
#define MROCE_RXSTEER_H

#include <linux/skbuff.h>
#include <linux/workqueue.h>

struct mroce_conn;

/*
 * A connection's packets on their way to its home CPU.  q.lock guards q
 * and taking; cpu is set once, when the connection is created.
 */
struct mroce_conn_steer {
	struct sk_buff_head q;		/* arrived elsewhere, in order */
	struct work_struct work;	/* takes q on cpu (bottom half) */
	unsigned long until;		/* jiffies: busy, steer before */
	bool taking;			/* a run took packets it has not done */
	int cpu;			/* the home CPU; -1: none */
};

extern struct workqueue_struct *mroce_rx_wq;

void mroce_steer_init(struct mroce_conn *conn);
bool mroce_steer(struct mroce_conn *conn, struct sk_buff *skb);
void mroce_steer_purge(struct mroce_conn *conn);

#endif
