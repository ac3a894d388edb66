#!/bin/bash
# Throughput under netem loss (both directions of the veth v0/v1), as a
# share of each stack's lossless figure from the same run.

set_loss() {
	local dev
	for dev in "$@"; do
		if [ "$LOSS" = 0 ]; then
			tc qdisc del dev "$dev" root 2>/dev/null
		else
			tc qdisc replace dev "$dev" root netem loss "$LOSS%"
		fi
	done
}

netem_drops() {
	tc -s qdisc show dev "$1" | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n 1
}

# loss_case WHERE STACK: ib_write_bw 64 KiB, 1 QP, at the current LOSS.
loss_case() {
	local where=$1 st=$2
	local r0 r1 t0 t1
	stack "$st"
	r0=$(mroce_cnt "$DC" retransmits) t0=$(mroce_cnt "$DC" rto_timeouts)
	if perftest "$st" $((BENCH_DUR + 60)) ib_write_bw -s 65536 -D "$BENCH_DUR"; then
		r1=$(mroce_cnt "$DC" retransmits) t1=$(mroce_cnt "$DC" rto_timeouts)
		rec group=loss where="$where" stack="$st" loss_pct="$LOSS" status=ok \
			mbps="$PT_MBPS" iters="${PT_F[1]}" mbps_perftest="${PT_F[3]}" perftest_clock="$PT_CLOCK" \
			retransmits=$((r1 - r0)) rto_timeouts=$((t1 - t0))
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
