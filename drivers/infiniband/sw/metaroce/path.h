/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * path.c: sender paths: states, probes, the choice of path, resends (spec
 * 7, 12).
 */
#ifndef MROCE_PATH_H
#define MROCE_PATH_H

#include "transport.h"

int mroce_paths_create(struct mroce_conn *conn);
void mroce_path_confirm(struct mroce_conn *conn, struct sk_buff_head *q);
u32 mroce_path_check_alive(struct mroce_conn *conn, struct sk_buff_head *q);
void mroce_paths_free(struct mroce_conn *conn);
bool mroce_path_has_room(struct mroce_conn *conn);
void mroce_path_send(struct mroce_conn *conn, const struct mroce_txrec *rec,
		     struct sk_buff_head *q);
void mroce_path_timeout(struct mroce_conn *conn, ktime_t now,
			struct sk_buff_head *q);
ktime_t mroce_path_next_event(struct mroce_conn *conn);
void mroce_path_drop_qp(struct mroce_conn *conn, struct mroce_qp *qp);
void mroce_path_rx_probe_reply(struct mroce_conn *conn, struct sk_buff *skb,
			       struct sk_buff_head *q);
void mroce_paths_plane_down(struct mroce_conn *conn, int plane, bool removed,
			    struct sk_buff_head *q);
void mroce_paths_plane_up(struct mroce_conn *conn, int plane,
			  struct sk_buff_head *q);
int mroce_paths_add_plane(struct mroce_conn *conn, int plane, bool probing,
			  struct sk_buff_head *q);
__be16 mroce_pick_sport(const struct mroce_conn *conn,
			const struct mroce_path *path);
u32 mroce_mpb(const struct mroce_conn *conn);
u32 mroce_charge(const struct mroce_conn *conn, const struct mroce_txrec *rec);
void mroce_path_resend(struct mroce_conn *conn, const struct mroce_txrec *rec,
		       u8 tries, u8 from, struct sk_buff_head *q);
void mroce_retx_flush(struct mroce_conn *conn, struct sk_buff_head *q);
void mroce_retx_drop_qp(struct mroce_conn *conn, struct mroce_qp *qp);

#endif /* MROCE_PATH_H */
