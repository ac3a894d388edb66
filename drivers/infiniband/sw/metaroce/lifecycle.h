/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * lifecycle.c: connection life: references, failure, tombstones, half-open,
 * restart checks (spec 6.2, 6.4, 6.7, 6.8).
 */
#ifndef MROCE_LIFECYCLE_H
#define MROCE_LIFECYCLE_H

#include <linux/ktime.h>
#include <linux/skbuff.h>

struct mroce_conn;
struct mroce_dev;
struct mroce_qp;

struct mroce_conn *mroce_stream_conn_get(struct mroce_qp *qp);
void mroce_conn_put(struct mroce_conn *conn);
void mroce_conn_free(struct mroce_conn *conn);
void mroce_conns_destroy(struct mroce_dev *mdev);
void mroce_conn_init_life(struct mroce_conn *conn);
void mroce_conn_fail(struct mroce_conn *conn);
void mroce_conn_tombstone(struct mroce_conn *conn);
void mroce_conn_life_tick(struct mroce_conn *conn, ktime_t now,
			  struct sk_buff_head *q);
ktime_t mroce_conn_life_next(struct mroce_conn *conn);
void mroce_conn_idle_check(struct mroce_conn *conn);
void mroce_stream_unlink(struct mroce_conn *conn, struct mroce_qp *qp);
bool mroce_stomb_nak_ok(struct mroce_conn *conn, u32 lqpn, u32 pqpn);
void mroce_conn_half_open_start(struct mroce_conn *conn);
void mroce_conn_half_open_end(struct mroce_conn *conn);
void mroce_conn_confirm_probe(struct mroce_conn *conn, ktime_t now,
			      struct sk_buff_head *q);
void mroce_conn_restart_check(struct mroce_conn *conn);

#endif /* MROCE_LIFECYCLE_H */
