// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The transport's tunables (spec 17) as module parameters, writable at run
 * time through /sys/module/metaroce/parameters/ and the metaroce tool.  A
 * write outside the spec's range fails with -EINVAL and changes nothing.
 */
#include <linux/kernel.h>
#include <linux/moduleparam.h>

#include "transport.h"

struct mroce_range {
	unsigned int *val;
	unsigned int lo;
	unsigned int hi;
};

static int mroce_range_set(const char *buf, const struct kernel_param *kp)
{
	const struct mroce_range *r = kp->arg;
	unsigned int v;
	int err;

	err = kstrtouint(buf, 0, &v);
	if (err)
		return err;
	if (v < r->lo || v > r->hi)
		return -EINVAL;
	WRITE_ONCE(*r->val, v);
	return 0;
}

static int mroce_range_get(char *buf, const struct kernel_param *kp)
{
	const struct mroce_range *r = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(*r->val));
}

static const struct kernel_param_ops mroce_range_ops = {
	.set = mroce_range_set,
	.get = mroce_range_get,
};

#define MROCE_TUNABLE(name, def, lo, hi, desc)				\
	unsigned int mroce_##name = def;				\
	static struct mroce_range mroce_range_##name = {		\
		&mroce_##name, lo, hi };				\
	module_param_cb(name, &mroce_range_ops, &mroce_range_##name, 0644); \
	MODULE_PARM_DESC(name, desc " (default " #def ", " #lo " to " #hi ")")

/* Paths (spec 7) */
MROCE_TUNABLE(paths_per_plane, 4, 1, 64, "Paths per plane of a new connection");
MROCE_TUNABLE(min_active_paths, 2, 1, 256, "Probe failed paths at once below this many active");
MROCE_TUNABLE(suspect_probes, 3, 1, 16, "Unanswered probes before a suspect path moves");
MROCE_TUNABLE(probe_max_attempts, 8, 1, 64, "Entropies tried before a path fails");
MROCE_TUNABLE(failed_probe_interval_ms, 100, 10, 60000, "Probe interval of a failed path, ms");
MROCE_TUNABLE(loss_window_pkts, 256, 64, 4096, "Packets over which a path's loss rate is measured");
MROCE_TUNABLE(path_loss_thresh_pct, 5, 1, 100, "Loss rate that moves a path to new entropy, %");
MROCE_TUNABLE(sport_min, 49152, 1024, 65535, "Lowest UDP source port (entropy)");
MROCE_TUNABLE(sport_max, 65535, 1024, 65535, "Highest UDP source port (entropy)");

/* Loss recovery (spec 9) */
MROCE_TUNABLE(reorder_thresh, 1, 0, 3, "Later acknowledged packets that prove a loss");
MROCE_TUNABLE(rto_initial_us, 5000, 100, 10000000, "RTO before the first RTT sample, us");
MROCE_TUNABLE(rto_min_us, 1000, 10, 10000000, "Lower bound of the RTO, us");
MROCE_TUNABLE(rto_max_us, 200000, 1000, 60000000, "Upper bound of the RTO, us");

/* Congestion control (spec 12) */
MROCE_TUNABLE(ecn, 1, 0, 1, "React to ECN CE marks");
MROCE_TUNABLE(init_cwnd_pkts, 4, 1, 256, "Initial window of a path, packets");
MROCE_TUNABLE(cwnd_min_pkts, 1, 1, 16, "Minimum window of a path, packets");
MROCE_TUNABLE(max_cwnd_pkts, 256, 16, 256, "Maximum window of a path, packets");
MROCE_TUNABLE(ai_pkts, 1, 1, 16, "Additive increase per connection per RTT, packets");
MROCE_TUNABLE(dctcp_g_shift, 4, 1, 10, "DCTCP gain g = 2^-shift");
MROCE_TUNABLE(pace_burst_pkts, 4, 1, 64, "Pacing bucket depth, packets");
MROCE_TUNABLE(loss_is_congestion, 0, 0, 1, "Treat every loss as congestion");
MROCE_TUNABLE(rx_capacity_mbps, 0, 0, 100000000, "Inbound capacity for the rate hint, Mb/s (0: link speed)");
MROCE_TUNABLE(rx_target_util_pct, 95, 50, 100, "Share of the capacity handed out in hints, %");
MROCE_TUNABLE(hint_active_us, 200, 20, 100000, "Activity window of the rate hint, us");
MROCE_TUNABLE(hint_interval_us, 50, 10, 10000, "Recomputation period of the rate hint, us");
MROCE_TUNABLE(hint_ttl_ms, 10, 1, 10000, "Age after which a rate hint is ignored, ms");
