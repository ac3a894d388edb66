#!/bin/bash
# perftest latency, bandwidth and atomic rate per stack; iperf3 TCP over
# the same links.  Sourced by guest.sh (lib.sh loaded; BENCH_* set).

num() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }

# lat_case STACK OP: 8-byte ib_OP_lat, median (perftest t_typical) and p99.
# perftest sometimes fails to calibrate its clock under TCG and prints
# "inf" on one side; ib_send_lat and ib_write_lat measure on both sides, so
# the server's figures stand in then (recorded as from=server).  LAT_GROUP
# and LAT_TAG (KEY=VALUE) override the record's group and add a field, as
# BW_GROUP and BW_TAG do for bw_case (atomic_case: AT_GROUP, LAT_TAG);
# LAT_ARGS adds one perftest option (-e: completions by event).
lat_case() {
	local st=$1 op=$2 from=client
	if perftest "$st" 120 "ib_${op}_lat" -s 8 -n "$BENCH_LAT_ITERS" ${LAT_ARGS:+"$LAT_ARGS"}; then
		if ! num "${PT_F[4]}" && [ -n "$PT_SLINE" ]; then
			read -r -a PT_F <<< "$PT_SLINE"
			from=server
		fi
		if ! num "${PT_F[4]}" || ! num "${PT_F[7]}"; then
			rec group="${LAT_GROUP:-lat}" ${LAT_TAG:+"$LAT_TAG"} stack="$st" op="$op" size=8 status=failed \
				error="perftest printed no usable latency (clock calibration?): $PT_LINE"
			return
		fi
		rec group="${LAT_GROUP:-lat}" ${LAT_TAG:+"$LAT_TAG"} stack="$st" op="$op" size=8 status=ok from=$from \
			median_us="${PT_F[4]}" p99_us="${PT_F[7]}" min_us="${PT_F[2]}" iters="${PT_F[1]}"
	else
		rec group="${LAT_GROUP:-lat}" ${LAT_TAG:+"$LAT_TAG"} stack="$st" op="$op" size=8 status=failed error="$PT_ERR"
	fi
}

# bw_case STACK OP SIZE QPS: ib_OP_bw for BENCH_DUR seconds.  mbps and
# msgs_per_s from perftest's iteration count over its sample window
# (lib.sh bw_from_iters); mbps_perftest is perftest's own figure, 0.00 when
# its clock calibration failed (perftest_clock=failed).  BW_GROUP and
# BW_TAG (KEY=VALUE) override the record's group and add a field.
bw_case() {
	local st=$1 op=$2 size=$3 qps=$4 w0 w1 r0 r1 t0 t1
	w0=$(wire_bytes "$st")
	stack "$st"
	r0=$(mroce_cnt "$DC" retransmits) t0=$(mroce_cnt "$DC" rto_timeouts)
	if perftest "$st" $((BENCH_DUR + 60)) "ib_${op}_bw" -s "$size" -q "$qps" -D "$BENCH_DUR"; then
		w1=$(wire_bytes "$st")
		r1=$(mroce_cnt "$DC" retransmits) t1=$(mroce_cnt "$DC" rto_timeouts)
		rec group="${BW_GROUP:-bw}" ${BW_TAG:+"$BW_TAG"} stack="$st" op="$op" size="$size" qps="$qps" status=ok \
			mbps="$PT_MBPS" msgs_per_s="$PT_RATE" iters="${PT_F[1]}" \
			mbps_perftest="${PT_F[3]}" perftest_clock="$PT_CLOCK" \
			wire_bytes=$((w1 - w0)) retransmits=$((r1 - r0)) rto_timeouts=$((t1 - t0))
	else
		rec group="${BW_GROUP:-bw}" ${BW_TAG:+"$BW_TAG"} stack="$st" op="$op" size="$size" qps="$qps" status=failed error="$PT_ERR"
	fi
}

atomic_case() {
	local st=$1
	if perftest "$st" $((BENCH_DUR + 60)) ib_atomic_bw -D "$BENCH_DUR"; then
		rec group="${AT_GROUP:-atomic}" ${LAT_TAG:+"$LAT_TAG"} stack="$st" op=fetch_add size=8 status=ok ops_per_s="${PT_RATE%.*}" \
			iters="${PT_F[1]}" perftest_clock="$PT_CLOCK"
	else
		rec group="${AT_GROUP:-atomic}" ${LAT_TAG:+"$LAT_TAG"} stack="$st" op=fetch_add size=8 status=failed error="$PT_ERR"
	fi
}

tcp_case() {
	local st=$1 streams=$2
	if iperf "$st" "$BENCH_DUR" "$streams"; then
		rec group=bw stack="$st" op=tcp size=- qps="$streams" status=ok mbps="$IP_MBPS"
	else
		rec group=bw stack="$st" op=tcp size=- qps="$streams" status=failed error="$PT_ERR"
	fi
}

# The headline cases first (latency, write 64 KiB, TCP): on a slow host a
# run cut short still has them.
scen_perftest_core() {
	local st op q
	for st in $BENCH_STACKS; do
		log "latency: $st"
		for op in $BENCH_LAT_OPS; do lat_case "$st" "$op"; done
	done
	for st in $BENCH_STACKS; do
		log "bandwidth: $st write 64 KiB"
		for q in $BENCH_QPS; do bw_case "$st" write 65536 "$q"; done
	done
	for st in $BENCH_TCP; do
		log "tcp: $st"
		for q in $BENCH_QPS; do tcp_case "$st" "$q"; done
	done
}

# The rest of the bandwidth matrix, the atomic rate, latency with
# completions by event (ib_send_lat -e: ibv_req_notify_cq and a completion
# channel) and the 8-byte message rate.
scen_perftest_rest() {
	local st op size q
	for st in $BENCH_STACKS; do
		log "latency by event, 8 B message rate: $st"
		for op in $BENCH_LAT_EVENT_OPS; do
			LAT_GROUP=lat_event LAT_ARGS=-e lat_case "$st" "$op"
		done
		for op in $BENCH_RATE_OPS; do
			BW_GROUP=rate bw_case "$st" "$op" 8 1
		done
	done
	for st in $BENCH_STACKS; do
		log "bandwidth: $st"
		# Write at every size first, then send and read.
		for op in $BENCH_BW_OPS; do
			for size in $BENCH_SIZES; do
				[ "$op/$size" = write/65536 ] && continue
				for q in $BENCH_QPS; do bw_case "$st" "$op" "$size" "$q"; done
			done
		done
		((BENCH_ATOMIC)) && atomic_case "$st"
	done
}
