/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * loss.c: acknowledgements at the sender, loss detection, RTT (spec 8, 9).
 */
#ifndef MROCE_LOSS_H
#define MROCE_LOSS_H

#include <linux/skbuff.h>

#include "wire.h"

struct mroce_conn;
struct mroce_inflight;
struct mroce_path;
struct mroce_txrec;

bool mroce_loss_process_akx(struct mroce_conn *conn, struct mroce_path *path,
			    const struct mroce_akx *akx, const u32 *probe_psn,
			    struct sk_buff_head *q);
void mroce_declare_lost(struct mroce_conn *conn, struct mroce_path *path,
			struct mroce_inflight *f, struct sk_buff_head *q);
void mroce_declare_all_lost(struct mroce_conn *conn, struct mroce_path *path,
			    struct sk_buff_head *q);
void mroce_resolve(struct mroce_path *path, struct mroce_inflight *f);
void mroce_advance_plw(struct mroce_path *path);
u32 mroce_reo_wnd(const struct mroce_path *path);
u32 mroce_sack_holes(struct mroce_path *path);
void mroce_rtt_sample(const struct mroce_conn *conn, struct mroce_path *path,
		      u32 r);
void mroce_path_emit(struct mroce_conn *conn, struct mroce_path *path,
		     const struct mroce_txrec *rec, u8 tries, u16 flags,
		     struct sk_buff_head *q);

#endif /* MROCE_LOSS_H */
