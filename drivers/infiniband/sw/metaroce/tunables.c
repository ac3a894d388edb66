// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The transport's tunables (spec 17): one table, mroce_tunables[], that
 * both the module parameters (/sys/module/metaroce/parameters/) and the
 * metaroce tool (netlink.c) read and write, through one range check.  A
 * write outside a tunable's range fails with -EINVAL and changes nothing.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "tunables.h"

const struct mroce_tunable *mroce_tunable_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < mroce_num_tunables; i++)
		if (!strcmp(mroce_tunables[i]->name, name))
			return mroce_tunables[i];
	return NULL;
}

/* The one range check of a tunable's value. */
bool mroce_tunable_valid(const struct mroce_tunable *t, u32 v)
{
	return v >= t->lo && v <= t->hi;
}

u32 mroce_tunable_get(const struct mroce_tunable *t)
{
	return READ_ONCE(*t->val);
}

int mroce_tunable_set(const struct mroce_tunable *t, u32 v)
{
	if (!mroce_tunable_valid(t, v))
		return -EINVAL;
	WRITE_ONCE(*t->val, v);
	return 0;
}

static int mroce_param_set(const char *buf, const struct kernel_param *kp)
{
	unsigned int v;
	int err;

	err = kstrtouint(buf, 0, &v);
	if (err)
		return err;
	return mroce_tunable_set(kp->arg, v);
}

static int mroce_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", mroce_tunable_get(kp->arg));
}

static const struct kernel_param_ops mroce_param_ops = {
	.set = mroce_param_set,
	.get = mroce_param_get,
};

/*
 * A tunable: its variable, its entry (name, range) and its module
 * parameter (MODULE_PARM_DESC spelled out: name is used once).  Every
 * entry must also be listed in mroce_tunables[] below.
 */
#define MROCE_TUNABLE(name, def, lo, hi, desc)				\
	unsigned int mroce_##name = def;				\
	static const struct mroce_tunable mroce_tun_##name = {		\
		#name, &mroce_##name, lo, hi };				\
	module_param_cb(name, &mroce_param_ops,				\
			(void *)&mroce_tun_##name, 0644);		\
	__MODULE_INFO(parm, parm, #name ":" desc			\
		      " (default " #def ", " #lo " to " #hi ")")

/* Encapsulation (spec 4) */
MROCE_TUNABLE(dscp, 26, 0, 63, "DSCP of sequenced packets and datagrams");
MROCE_TUNABLE(ctrl_dscp, 26, 0, 63, "DSCP of control packets");
MROCE_TUNABLE(tx_batch_pkts, 1, 1, 64, "Packets of a path sent as one GSO skb (1: one by one)");
MROCE_TUNABLE(rx_steer, 1, 0, 1, "Take busy connections' packets on their home CPU (0: off)");

/* Paths (spec 7) */
MROCE_TUNABLE(paths_per_plane, 4, 1, 64, "Paths per plane of a new connection");
MROCE_TUNABLE(min_active_paths, 2, 1, 256, "Probe failed paths at once below this many active");
MROCE_TUNABLE(suspect_probes, 3, 1, 16, "Unanswered probes before a suspect path moves");
MROCE_TUNABLE(probe_max_attempts, 8, 1, 64, "Entropies tried before a path fails");
MROCE_TUNABLE(failed_probe_interval_ms, 100, 10, 60000, "Probe interval of a failed path, ms");
MROCE_TUNABLE(win_idle_ms, 1000, 1, 3600000, "Free the window of a path idle this long, ms");
MROCE_TUNABLE(loss_window_pkts, 256, 64, 4096, "Packets over which a path's loss rate is measured");
MROCE_TUNABLE(path_loss_thresh_pct, 5, 1, 100, "Loss rate that moves a path to new entropy, %");
MROCE_TUNABLE(sport_min, 49152, 1024, 65535, "Lowest UDP source port (entropy)");
MROCE_TUNABLE(sport_max, 65535, 1024, 65535, "Highest UDP source port (entropy)");

/* Loss recovery (spec 9) */
MROCE_TUNABLE(ack_coalesce_pkts, 8, 1, 64, "New packets a receiver may leave unacknowledged");
MROCE_TUNABLE(ack_coalesce_us, 10, 1, 1000, "Longest ACK delay (advertised Max ACK Delay), us");
MROCE_TUNABLE(ack_carry, 1, 0, 1, "Carry ACKs in sequenced packets (CACK capability)");
MROCE_TUNABLE(reorder_thresh, 1, 0, 3, "Later acknowledged packets that prove a loss");
MROCE_TUNABLE(reo_wnd_min_us, 5, 1, 1000, "Lower bound of the reorder window, us");
MROCE_TUNABLE(reo_persist_ms, 1000, 0, 60000, "Timer-only loss detection after reordering, ms");
MROCE_TUNABLE(pto_min_us, 20, 5, 100000, "Lower bound of the probe timeout, us");
MROCE_TUNABLE(rto_initial_us, 5000, 100, 1000000, "RTO before the first RTT sample, us");
MROCE_TUNABLE(rto_min_us, 1000, 100, 1000000, "Lower bound of the RTO, us");
MROCE_TUNABLE(rto_max_us, 200000, 1000, 10000000, "Upper bound of the RTO, us");

/* Congestion control (spec 12) */
MROCE_TUNABLE(ecn, 1, 0, 1, "Send ECT(0) and react to CE marks");
MROCE_TUNABLE(init_cwnd_pkts, 4, 1, 256, "Initial window of a path, packets");
MROCE_TUNABLE(cwnd_min_pkts, 1, 1, 16, "Minimum window of a path, packets");
MROCE_TUNABLE(max_cwnd_pkts, 256, 16, 256, "Maximum window of a path, packets");
MROCE_TUNABLE(ai_pkts, 1, 1, 16, "Additive increase per connection per RTT, packets");
MROCE_TUNABLE(dctcp_g_shift, 4, 1, 10, "DCTCP gain g = 2^-shift");
MROCE_TUNABLE(pace_burst_pkts, 4, 1, 64, "Pacing bucket depth, packets");
MROCE_TUNABLE(loss_is_congestion, 0, 0, 1, "Treat every loss as congestion");
MROCE_TUNABLE(rx_capacity_mbps, 0, 0, 100000000, "Rate hint capacity, Mb/s (0: link speed)");
MROCE_TUNABLE(rx_target_util_pct, 95, 50, 100, "Share of the capacity handed out in hints, %");
MROCE_TUNABLE(hint_active_us, 200, 20, 100000, "Activity window of the rate hint, us");
MROCE_TUNABLE(hint_interval_us, 50, 10, 10000, "Recomputation period of the rate hint, us");
MROCE_TUNABLE(hint, 1, 0, 1, "Compute rate hints and advertise HINT (new conns)");
MROCE_TUNABLE(hint_ttl_ms, 10, 1, 10000, "Age after which a rate hint is ignored, ms");

/* Connections (spec 6) */
MROCE_TUNABLE(conn_idle_timeout_s, 60, 1, 86400, "Close a connection idle this long, s");
MROCE_TUNABLE(rx_msg_slots, 4096, 64, 1048576, "Message trackers offered to a peer (new conns)");
MROCE_TUNABLE(conn_dead_timeout_s, 30, 0, 3600, "Fail a connection without active path, s");
MROCE_TUNABLE(tombstone_ms, 2000, 100, 60000, "A closed connection's CID stays reserved, ms");
MROCE_TUNABLE(reset_rate_limit, 100, 1, 100000, "RESETs sent per second per device");
MROCE_TUNABLE(connect_retries, 6, 1, 16, "CONNECT resends before a handshake fails");
MROCE_TUNABLE(half_open_timeout_ms, 1000, 100, 60000, "Free a half-open connection after, ms");
MROCE_TUNABLE(not_ready_wait_us, 100, 10, 100000, "Wait asked for in NAK NOT_READY, us");

/* Resource limits (spec 16.4) */
MROCE_TUNABLE(max_conns, 4096, 1, 1048576, "Connections per device");
MROCE_TUNABLE(max_half_open, 256, 1, 65536, "Half-open connections per device");
MROCE_TUNABLE(max_conns_per_peer, 4, 1, 64, "Connections per peer address");
MROCE_TUNABLE(conn_rate_limit, 1000, 1, 1000000, "CONNECTs accepted per second per device");
MROCE_TUNABLE(probe_reply_rate, 10000, 1, 1000000, "PROBE_REPLYs per second per connection");
MROCE_TUNABLE(nak_rate, 10000, 1, 1000000, "NAKs per second per connection");
MROCE_TUNABLE(ctx_queue_mem_mb, 1024, 1, 1048576, "Queue memory of one user context, MiB");

/* Every tunable, in the order the metaroce tool lists them. */
const struct mroce_tunable *const mroce_tunables[] = {
	&mroce_tun_dscp,
	&mroce_tun_ctrl_dscp,
	&mroce_tun_tx_batch_pkts,
	&mroce_tun_rx_steer,
	&mroce_tun_paths_per_plane,
	&mroce_tun_min_active_paths,
	&mroce_tun_suspect_probes,
	&mroce_tun_probe_max_attempts,
	&mroce_tun_failed_probe_interval_ms,
	&mroce_tun_win_idle_ms,
	&mroce_tun_loss_window_pkts,
	&mroce_tun_path_loss_thresh_pct,
	&mroce_tun_sport_min,
	&mroce_tun_sport_max,
	&mroce_tun_ack_coalesce_pkts,
	&mroce_tun_ack_coalesce_us,
	&mroce_tun_ack_carry,
	&mroce_tun_reorder_thresh,
	&mroce_tun_reo_wnd_min_us,
	&mroce_tun_reo_persist_ms,
	&mroce_tun_pto_min_us,
	&mroce_tun_rto_initial_us,
	&mroce_tun_rto_min_us,
	&mroce_tun_rto_max_us,
	&mroce_tun_ecn,
	&mroce_tun_init_cwnd_pkts,
	&mroce_tun_cwnd_min_pkts,
	&mroce_tun_max_cwnd_pkts,
	&mroce_tun_ai_pkts,
	&mroce_tun_dctcp_g_shift,
	&mroce_tun_pace_burst_pkts,
	&mroce_tun_loss_is_congestion,
	&mroce_tun_rx_capacity_mbps,
	&mroce_tun_rx_target_util_pct,
	&mroce_tun_hint_active_us,
	&mroce_tun_hint_interval_us,
	&mroce_tun_hint,
	&mroce_tun_hint_ttl_ms,
	&mroce_tun_conn_idle_timeout_s,
	&mroce_tun_rx_msg_slots,
	&mroce_tun_conn_dead_timeout_s,
	&mroce_tun_tombstone_ms,
	&mroce_tun_reset_rate_limit,
	&mroce_tun_connect_retries,
	&mroce_tun_half_open_timeout_ms,
	&mroce_tun_not_ready_wait_us,
	&mroce_tun_max_conns,
	&mroce_tun_max_half_open,
	&mroce_tun_max_conns_per_peer,
	&mroce_tun_conn_rate_limit,
	&mroce_tun_probe_reply_rate,
	&mroce_tun_nak_rate,
	&mroce_tun_ctx_queue_mem_mb,
};

const unsigned int mroce_num_tunables = ARRAY_SIZE(mroce_tunables);
