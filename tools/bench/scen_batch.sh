#!/bin/bash
# UDP GSO batches (spec 4.8): ib_write_bw 64 KiB and 1 MiB and ib_read_bw
# 64 KiB (BENCH_BATCH_OPS; the smoke run: the 64 KiB WRITE alone), 1 QP,
# between the two namespaces, with tx_batch_pkts 1 (packet
# by packet, the default) and 32, each with the packets per GSO skb the
# senders' counters give; rxe alongside.  Sourced by guest.sh (lib.sh and
# scen_perftest.sh loaded; BENCH_* set).

scen_batch() {
	local p=/sys/module/metaroce/parameters/tx_batch_pkts def n op size
	local b0 k0
	def=$(cat $p)
	for n in 1 32; do
		echo "$n" > $p
		for op in "${BENCH_BATCH_OPS[@]}"; do
			read -r op size <<<"$op"
			log "batch: tx_batch_pkts $n, $op $size"
			b0=$(($(mroce_cnt ra tx_gso_batches) + $(mroce_cnt rb tx_gso_batches)))
			k0=$(($(mroce_cnt ra tx_packets) + $(mroce_cnt rb tx_packets)))
			BW_GROUP=batch BW_TAG=batch=$n bw_case mroce-2ns "$op" "$size" 1
			rec group=batch_pkts batch="$n" op="$op" size="$size" status=ok \
				gso_skbs=$(($(mroce_cnt ra tx_gso_batches) + $(mroce_cnt rb tx_gso_batches) - b0)) \
				packets=$(($(mroce_cnt ra tx_packets) + $(mroce_cnt rb tx_packets) - k0))
		done
	done
	echo "$def" > $p
	for op in "${BENCH_BATCH_OPS[@]}"; do
		read -r op size <<<"$op"
		log "batch: rxe $op $size"
		BW_GROUP=batch BW_TAG=batch=rxe bw_case rxe-1ns "$op" "$size" 1
	done
}
