/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Counting events per one-second window: the rate limits of spec 16.4
 * (RESETs per device, CONNECTs per device, PROBE_REPLYs per connection).
 * The caller serializes access to a window.
 */
#ifndef MROCE_RATE_H
#define MROCE_RATE_H

#include <linux/jiffies.h>
#include <linux/types.h>

/* A count per one-second window, for the rate limits of spec 16.4. */
struct mroce_rate_window {
	unsigned long start;		/* jiffies: start of this second */
	u32 n;				/* events counted in it */
};

/*
 * Is window w full with limit events this second?  A new second starts
 * empty.  The caller counts an event it lets through with w->n++.
 */
static inline bool mroce_rate_full(struct mroce_rate_window *w, u32 limit)
{
	if (time_after_eq(jiffies, w->start + HZ)) {
		w->start = jiffies;
		w->n = 0;
	}
	return w->n >= limit;
}

#endif /* MROCE_RATE_H */
