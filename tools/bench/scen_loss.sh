#!/bin/bash
# Throughput under netem loss (both directions of the veth v0/v1), as a
# share of each stack's lossless figure from the same run.

# netem drops a UDP GSO batch (spec 4.8) whole, a burst no wire makes, so
# MetaRoCE sends packet by packet (tx_batch_pkts 1) while netem drops: the
# loss is per datagram, as for rxe and as published figures mean it.
BATCH=/sys/module/metaroce/parameters/tx_batch_pkts
BATCH_DEF=$(cat $BATCH 2>/dev/null)

set_loss() {
	local dev
	for dev in "$@"; do
		if [ "$LOSS" = 0 ]; then
			tc qdisc del dev "$dev" root 2>/dev/null
		else
			tc qdisc replace dev "$dev" root netem loss "$LOSS%"
		fi
	done
	if [ -n "$BATCH_DEF" ]; then
		if [ "$LOSS" = 0 ]; then echo "$BATCH_DEF"; else echo 1; fi > $BATCH
	fi
}

netem_drops() {
	local n
	n=$(tc -s qdisc show dev "$1" | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n 1)
	echo "${n:-0}"
}

# The client's counters that say why it resent, and netem's drops each way
# (v0 carries the data, v1 the ACKs), as "name=value" words.
LOSS_CNTS="retransmits fast_retransmits tlp_probes spurious_retransmits rto_timeouts probes_sent path_reroutes"
loss_snap() {
	local c
	for c in $LOSS_CNTS; do
		echo "$c=$(mroce_cnt "$1" "$c")"
	done
	echo "netem_drops_data=$(netem_drops v0)"
	echo "netem_drops_ack=$(netem_drops v1)"
}

# loss_diff BEFORE AFTER: "name=after-before" for each word of AFTER.
loss_diff() {
	local kv k
	declare -A b
	for kv in $1; do b[${kv%%=*}]=${kv#*=}; done
	for kv in $2; do
		k=${kv%%=*}
		echo "$k=$(( ${kv#*=} - ${b[$k]:-0} ))"
	done
}

# loss_case WHERE STACK: ib_write_bw 64 KiB, 1 QP, at the current LOSS.
loss_case() {
	local where=$1 st=$2 s0
	stack "$st"
	s0=$(loss_snap "$DC")
	if perftest "$st" $((BENCH_DUR + 60)) ib_write_bw -s 65536 -D "$BENCH_DUR"; then
		# shellcheck disable=SC2046  # one rec argument per word
		rec group=loss where="$where" stack="$st" loss_pct="$LOSS" status=ok \
			mbps="$PT_MBPS" iters="${PT_F[1]}" mbps_perftest="${PT_F[3]}" perftest_clock="$PT_CLOCK" \
			$(loss_diff "$s0" "$(loss_snap "$DC")")
	else
		rec group=loss where="$where" stack="$st" loss_pct="$LOSS" status=failed error="$PT_ERR"
	fi
}

scen_loss() {
	local st
	for LOSS in $BENCH_LOSS; do
		log "loss $LOSS%"
		set_loss v0 v1
		for st in $BENCH_LOSS_STACKS; do loss_case veth "$st"; done
		if [ -n "$BENCH_LOSS_TCP" ]; then
			if iperf tcp-1ns "$BENCH_DUR" 1; then
				rec group=loss where=veth stack=tcp-1ns loss_pct="$LOSS" status=ok mbps="$IP_MBPS"
			else
				rec group=loss where=veth stack=tcp-1ns loss_pct="$LOSS" status=failed error="$PT_ERR"
			fi
		fi
	done
	LOSS=0
	set_loss v0 v1
}
