// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Port counters: per-CPU 64-bit counts summed when read.
 */
#include "counters.h"
#include "mroce.h"

/* The names spec 18 requires, exactly. */
static const struct rdma_stat_desc mroce_counter_descs[] = {
	[MROCE_CNT_TX_PACKETS] = { .name = "tx_packets" },
	[MROCE_CNT_RX_PACKETS] = { .name = "rx_packets" },
	[MROCE_CNT_TX_BYTES] = { .name = "tx_bytes" },
	[MROCE_CNT_RX_BYTES] = { .name = "rx_bytes" },
	[MROCE_CNT_TX_DATA_PACKETS] = { .name = "tx_data_packets" },
	[MROCE_CNT_RX_DATA_PACKETS] = { .name = "rx_data_packets" },
	[MROCE_CNT_ACKS_SENT] = { .name = "acks_sent" },
	[MROCE_CNT_ACKS_RCVD] = { .name = "acks_rcvd" },
	[MROCE_CNT_ACKS_CARRIED] = { .name = "acks_carried" },
	[MROCE_CNT_ACKS_CARRIED_RCVD] = { .name = "acks_carried_rcvd" },
	[MROCE_CNT_RETRANSMITS] = { .name = "retransmits" },
	[MROCE_CNT_FAST_RETRANSMITS] = { .name = "fast_retransmits" },
	[MROCE_CNT_TLP_PROBES] = { .name = "tlp_probes" },
	[MROCE_CNT_RTO_TIMEOUTS] = { .name = "rto_timeouts" },
	[MROCE_CNT_SPURIOUS_RETRANSMITS] = { .name = "spurious_retransmits" },
	[MROCE_CNT_TX_ABANDONED] = { .name = "tx_abandoned" },
	[MROCE_CNT_SYNCS_SENT] = { .name = "syncs_sent" },
	[MROCE_CNT_SYNCS_RCVD] = { .name = "syncs_rcvd" },
	[MROCE_CNT_STREAM_RETRIES] = { .name = "stream_retries" },
	[MROCE_CNT_RETRY_EXCEEDED] = { .name = "retry_exceeded" },
	[MROCE_CNT_RNR_RETRIES] = { .name = "rnr_retries" },
	[MROCE_CNT_RNR_RETRY_EXCEEDED] = { .name = "rnr_retry_exceeded" },
	[MROCE_CNT_OOO_ARRIVALS] = { .name = "ooo_arrivals" },
	[MROCE_CNT_PATH_REORDER] = { .name = "path_reorder" },
	[MROCE_CNT_DUPLICATES] = { .name = "duplicates" },
	[MROCE_CNT_PATH_DUPLICATES] = { .name = "path_duplicates" },
	[MROCE_CNT_LATE_ARRIVALS] = { .name = "late_arrivals" },
	[MROCE_CNT_ECN_CE_RCVD] = { .name = "ecn_ce_rcvd" },
	[MROCE_CNT_ECN_CE_REPORTED] = { .name = "ecn_ce_reported" },
	[MROCE_CNT_CWND_REDUCTIONS_ECN] = { .name = "cwnd_reductions_ecn" },
	[MROCE_CNT_CWND_REDUCTIONS_LOSS] = { .name = "cwnd_reductions_loss" },
	[MROCE_CNT_HINT_LIMITED] = { .name = "hint_limited" },
	[MROCE_CNT_MSG_SLOTS_WAITS] = { .name = "msg_slots_waits" },
	[MROCE_CNT_CREDIT_WAITS] = { .name = "credit_waits" },
	[MROCE_CNT_PATHS_ACTIVE] = { .name = "paths_active" },
	[MROCE_CNT_PATH_SUSPECT] = { .name = "path_suspect" },
	[MROCE_CNT_PATH_REROUTES] = { .name = "path_reroutes" },
	[MROCE_CNT_PATH_FAILED] = { .name = "path_failed" },
	[MROCE_CNT_PROBES_SENT] = { .name = "probes_sent" },
	[MROCE_CNT_PROBE_REPLIES_RCVD] = { .name = "probe_replies_rcvd" },
	[MROCE_CNT_CONN_ACTIVE] = { .name = "conn_active" },
	[MROCE_CNT_CONN_HALF_OPEN] = { .name = "conn_half_open" },
	[MROCE_CNT_CONN_HALF_OPEN_EXPIRED] = { .name = "conn_half_open_expired" },
	[MROCE_CNT_CONN_HALF_OPEN_EVICTED] = { .name = "conn_half_open_evicted" },
	[MROCE_CNT_CONN_ESTABLISHED] = { .name = "conn_established" },
	[MROCE_CNT_CONN_CLOSED] = { .name = "conn_closed" },
	[MROCE_CNT_CONN_FAILED] = { .name = "conn_failed" },
	[MROCE_CNT_CONN_PEER_RESTART] = { .name = "conn_peer_restart" },
	[MROCE_CNT_CONN_RESTART_CHECKS] = { .name = "conn_restart_checks" },
	[MROCE_CNT_CONN_REJECTED] = { .name = "conn_rejected" },
	[MROCE_CNT_CONNECT_RETRIES] = { .name = "connect_retries" },
	[MROCE_CNT_RESETS_SENT] = { .name = "resets_sent" },
	[MROCE_CNT_RESETS_RCVD] = { .name = "resets_rcvd" },
	[MROCE_CNT_STREAMS_ACTIVE] = { .name = "streams_active" },
	[MROCE_CNT_STREAM_CLOSES_SENT] = { .name = "stream_closes_sent" },
	[MROCE_CNT_STREAM_CLOSES_RCVD] = { .name = "stream_closes_rcvd" },
	[MROCE_CNT_NAK_RNR_SENT] = { .name = "nak_rnr_sent" },
	[MROCE_CNT_NAK_RNR_RCVD] = { .name = "nak_rnr_rcvd" },
	[MROCE_CNT_NAK_NOT_READY_SENT] = { .name = "nak_not_ready_sent" },
	[MROCE_CNT_NAK_NOT_READY_RCVD] = { .name = "nak_not_ready_rcvd" },
	[MROCE_CNT_NAK_ACCESS_SENT] = { .name = "nak_access_sent" },
	[MROCE_CNT_NAK_ACCESS_RCVD] = { .name = "nak_access_rcvd" },
	[MROCE_CNT_NAK_INV_REQ_SENT] = { .name = "nak_inv_req_sent" },
	[MROCE_CNT_NAK_INV_REQ_RCVD] = { .name = "nak_inv_req_rcvd" },
	[MROCE_CNT_NAK_LENGTH_SENT] = { .name = "nak_length_sent" },
	[MROCE_CNT_NAK_LENGTH_RCVD] = { .name = "nak_length_rcvd" },
	[MROCE_CNT_NAK_OP_ERR_SENT] = { .name = "nak_op_err_sent" },
	[MROCE_CNT_NAK_OP_ERR_RCVD] = { .name = "nak_op_err_rcvd" },
	[MROCE_CNT_NAK_SEQ_SENT] = { .name = "nak_seq_sent" },
	[MROCE_CNT_NAK_SEQ_RCVD] = { .name = "nak_seq_rcvd" },
	[MROCE_CNT_NAK_CLOSED_SENT] = { .name = "nak_closed_sent" },
	[MROCE_CNT_NAK_CLOSED_RCVD] = { .name = "nak_closed_rcvd" },
	[MROCE_CNT_ATOMIC_REPLAYS] = { .name = "atomic_replays" },
	[MROCE_CNT_DROP_BAD_CRC] = { .name = "drop_bad_crc" },
	[MROCE_CNT_DROP_BAD_HEADER] = { .name = "drop_bad_header" },
	[MROCE_CNT_DROP_BAD_VERSION] = { .name = "drop_bad_version" },
	[MROCE_CNT_DROP_NO_CONN] = { .name = "drop_no_conn" },
	[MROCE_CNT_DROP_BAD_TOKEN] = { .name = "drop_bad_token" },
	[MROCE_CNT_DROP_AUTH] = { .name = "drop_auth" },
	[MROCE_CNT_DROP_OUT_OF_WINDOW] = { .name = "drop_out_of_window" },
	[MROCE_CNT_DROP_NO_STREAM] = { .name = "drop_no_stream" },
	[MROCE_CNT_DROP_NO_RESOURCE] = { .name = "drop_no_resource" },
	[MROCE_CNT_DROP_SEG_WINDOW] = { .name = "drop_seg_window" },
	[MROCE_CNT_DROP_RATE_LIMITED] = { .name = "drop_rate_limited" },
	[MROCE_CNT_DROP_UNCONFIRMED] = { .name = "drop_unconfirmed" },
	[MROCE_CNT_UD_TX_PACKETS] = { .name = "ud_tx_packets" },
	[MROCE_CNT_UD_RX_PACKETS] = { .name = "ud_rx_packets" },
	[MROCE_CNT_UD_DROP_QKEY] = { .name = "ud_drop_qkey" },
	[MROCE_CNT_UD_DROP_NO_QP] = { .name = "ud_drop_no_qp" },
	[MROCE_CNT_UD_DROP_NO_RECV] = { .name = "ud_drop_no_recv" },
	/* Debugging aid beyond spec 18: POST_SEND commands without WRs. */
	[MROCE_CNT_DOORBELLS] = { .name = "doorbells" },
	[MROCE_CNT_TX_GSO_BATCHES] = { .name = "tx_gso_batches" },
	[MROCE_CNT_RX_FRAG_PACKETS] = { .name = "rx_frag_packets" },
	[MROCE_CNT_RX_STEERED] = { .name = "rx_steered" },
	[MROCE_CNT_TIMER_OVERDUE] = { .name = "timer_overdue" },
	[MROCE_CNT_TX_WINDOW_CHUNKS] = { .name = "tx_window_chunks" },
};

static_assert(ARRAY_SIZE(mroce_counter_descs) == MROCE_NUM_COUNTERS);

struct rdma_hw_stats *mroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port_num)
{
	return rdma_alloc_hw_stats_struct(mroce_counter_descs,
					  ARRAY_SIZE(mroce_counter_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/* The value of counter idx of mdev, summed over the CPUs. */
u64 mroce_counter_sum(struct mroce_dev *mdev, int idx)
{
	u64 v = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		v += READ_ONCE(per_cpu_ptr(mdev->stats, cpu)->c[idx]);
	return v;
}

int mroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port_num, int index)
{
	struct mroce_dev *mdev = to_mdev(ibdev);
	int cpu, i;

	for (i = 0; i < MROCE_NUM_COUNTERS; i++)
		stats->value[i] = 0;
	for_each_possible_cpu(cpu) {
		const struct mroce_stats *s = per_cpu_ptr(mdev->stats, cpu);

		for (i = 0; i < MROCE_NUM_COUNTERS; i++)
			stats->value[i] += READ_ONCE(s->c[i]);
	}
	return MROCE_NUM_COUNTERS;
}
