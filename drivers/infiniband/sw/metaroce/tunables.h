/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The table of transport tunables (tunables.c), shared by the module
 * parameters and the netlink interface (netlink.c).
 */
#ifndef MROCE_TUNABLES_H
#define MROCE_TUNABLES_H

#include <linux/types.h>

/* Tunables (spec 17), module parameters in tunables.c. */
extern unsigned int mroce_tx_batch_pkts;
extern unsigned int mroce_rx_steer;
extern unsigned int mroce_ack_coalesce_pkts;
extern unsigned int mroce_ack_coalesce_us;
extern unsigned int mroce_ack_carry;
extern unsigned int mroce_reo_wnd_min_us;
extern unsigned int mroce_reo_persist_ms;
extern unsigned int mroce_pto_min_us;
extern unsigned int mroce_rto_initial_us;
extern unsigned int mroce_rto_min_us;
extern unsigned int mroce_rto_max_us;
extern unsigned int mroce_paths_per_plane;
extern unsigned int mroce_min_active_paths;
extern unsigned int mroce_reorder_thresh;
extern unsigned int mroce_suspect_probes;
extern unsigned int mroce_probe_max_attempts;
extern unsigned int mroce_failed_probe_interval_ms;
extern unsigned int mroce_loss_window_pkts;
extern unsigned int mroce_path_loss_thresh_pct;
extern unsigned int mroce_init_cwnd_pkts;
extern unsigned int mroce_cwnd_min_pkts;
extern unsigned int mroce_max_cwnd_pkts;
extern unsigned int mroce_ai_pkts;
extern unsigned int mroce_dctcp_g_shift;
extern unsigned int mroce_pace_burst_pkts;
extern unsigned int mroce_loss_is_congestion;
extern unsigned int mroce_ecn;
extern unsigned int mroce_rx_capacity_mbps;
extern unsigned int mroce_rx_target_util_pct;
extern unsigned int mroce_hint_active_us;
extern unsigned int mroce_hint_interval_us;
extern unsigned int mroce_hint_ttl_ms;
extern unsigned int mroce_sport_min;
extern unsigned int mroce_sport_max;
extern unsigned int mroce_conn_idle_timeout_s;
extern unsigned int mroce_rx_msg_slots;
extern unsigned int mroce_conn_dead_timeout_s;
extern unsigned int mroce_tombstone_ms;
extern unsigned int mroce_reset_rate_limit;
extern unsigned int mroce_dscp;
extern unsigned int mroce_ctrl_dscp;
extern unsigned int mroce_hint;
extern unsigned int mroce_connect_retries;
extern unsigned int mroce_half_open_timeout_ms;
extern unsigned int mroce_win_idle_ms;
extern unsigned int mroce_not_ready_wait_us;
extern unsigned int mroce_max_conns;
extern unsigned int mroce_max_half_open;
extern unsigned int mroce_max_conns_per_peer;
extern unsigned int mroce_conn_rate_limit;
extern unsigned int mroce_probe_reply_rate;
extern unsigned int mroce_nak_rate;
extern unsigned int mroce_ctx_queue_mem_mb;

struct mroce_tunable {
	const char *name;
	unsigned int *val;
	u32 lo;
	u32 hi;
};

extern const struct mroce_tunable *const mroce_tunables[];
extern const unsigned int mroce_num_tunables;

const struct mroce_tunable *mroce_tunable_find(const char *name);
bool mroce_tunable_valid(const struct mroce_tunable *t, u32 v);
u32 mroce_tunable_get(const struct mroce_tunable *t);
int mroce_tunable_set(const struct mroce_tunable *t, u32 v);

#endif /* MROCE_TUNABLES_H */
