// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The records of a path's packets in flight, allocated while the path is
 * in use and freed when it idles (txwin.h).
 */
#include <linux/slab.h>

#include "conn.h"
#include "counters.h"
#include "mroce.h"
#include "path.h"
#include "tunables.h"
#include "txwin.h"

/*
 * The record of psn, or NULL if its chunk is not allocated: then nothing
 * sent under that PSN is in flight, and what it was is forgotten.
 */
struct mroce_inflight *mroce_slot(struct mroce_path *path, u32 psn)
{
	u32 i = psn % MROCE_TX_WINDOW;
	struct mroce_inflight *chunk = path->win[i / MROCE_WIN_CHUNK];

	return chunk ? &chunk[i % MROCE_WIN_CHUNK] : NULL;
}

/* The record of psn if that PSN is in flight (live), else NULL. */
struct mroce_inflight *mroce_live_slot(struct mroce_path *path, u32 psn)
{
	struct mroce_inflight *f = mroce_slot(path, psn);

	return f && f->live ? f : NULL;
}

/*
 * Is there a record for the path's next PSN?  Allocates its chunk if
 * need be.  Without memory the path has no room (the caller arranges a
 * retry: nothing else may be in flight to wake the sender).
 */
bool mroce_txwin_ready(struct mroce_conn *conn, struct mroce_path *path)
{
	u32 c = (path->next_psn % MROCE_TX_WINDOW) / MROCE_WIN_CHUNK;

	BUILD_BUG_ON(MROCE_WIN_CHUNK * sizeof(struct mroce_inflight) >
		     PAGE_SIZE);
	lockdep_assert_held(&conn->lock);

	if (likely(path->win[c]))
		return true;
	path->win[c] = kcalloc(MROCE_WIN_CHUNK, sizeof(struct mroce_inflight),
			       GFP_ATOMIC | __GFP_NOWARN);
	if (!path->win[c]) {
		mroce_count(conn->mdev, DROP_NO_RESOURCE);
		return false;
	}
	path->win_chunks++;
	/* Not freed within win_idle_ms of this, used or not (a room check). */
	path->win_at = mroce_conn_now(conn);
	mroce_count(conn->mdev, TX_WINDOW_CHUNKS);
	return true;
}

/*
 * When the path's chunks are freed if it stays idle: win_idle_ms after its
 * last transmission, acknowledgment, chunk allocation or timer run that
 * left nothing in flight (win_at), and never sooner than rto_max_us after
 * that: a record declared lost says, for that long, whether its late
 * arrival was a reordering (mroce_sack_late()).  KTIME_MAX: never (nothing
 * to free, or packets in flight).  A trim that is due always frees: the
 * timer never finds one it declines (timer_overdue).
 */
ktime_t mroce_txwin_trim_at(const struct mroce_path *path)
{
	u64 idle_us = max_t(u64, 1000ULL * READ_ONCE(mroce_win_idle_ms),
			    READ_ONCE(mroce_rto_max_us));
	ktime_t last;

	if (path->live || !path->win_chunks)
		return KTIME_MAX;
	last = ktime_after(path->win_at, path->rto_from) ? path->win_at :
	       path->rto_from;
	return ktime_add_us(last, idle_us);
}

/* Free the chunks of a path idle for win_idle_ms (its timer ran). */
void mroce_txwin_trim(struct mroce_conn *conn, struct mroce_path *path,
		      ktime_t now)
{
	lockdep_assert_held(&conn->lock);

	if (ktime_before(now, mroce_txwin_trim_at(path)))
		return;
	mroce_txwin_free(conn, path);
}

/*
 * Free every chunk: the path is idle, or going away with its connection
 * (then records still live hold no QP: see mroce_path_drop_qp()).
 */
void mroce_txwin_free(struct mroce_conn *conn, struct mroce_path *path)
{
	int c;

	for (c = 0; c < MROCE_WIN_CHUNKS; c++) {
		if (!path->win[c])
			continue;
		kfree(path->win[c]);
		path->win[c] = NULL;
		this_cpu_dec(conn->mdev->stats->c[MROCE_CNT_TX_WINDOW_CHUNKS]);
	}
	path->win_chunks = 0;
}
