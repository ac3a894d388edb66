/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * txwin.c: the records of a path's packets in flight (spec 7.3), kept in
 * page-sized chunks that exist only while the path is in use: a chunk is
 * allocated when the path's next PSN first falls in it, and every chunk is
 * freed once the path has had nothing in flight for win_idle_ms.  An idle
 * connection thus holds no window memory.  Under conn->lock.
 */
#ifndef MROCE_TXWIN_H
#define MROCE_TXWIN_H

#include <linux/ktime.h>

struct mroce_conn;
struct mroce_inflight;
struct mroce_path;

struct mroce_inflight *mroce_slot(struct mroce_path *path, u32 psn);
struct mroce_inflight *mroce_live_slot(struct mroce_path *path, u32 psn);
bool mroce_txwin_ready(struct mroce_conn *conn, struct mroce_path *path);
ktime_t mroce_txwin_trim_at(const struct mroce_path *path);
void mroce_txwin_trim(struct mroce_conn *conn, struct mroce_path *path,
		      ktime_t now);
void mroce_txwin_free(struct mroce_conn *conn, struct mroce_path *path);

#endif /* MROCE_TXWIN_H */
