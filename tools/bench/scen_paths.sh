#!/bin/bash
# Multipath and planes: throughput with 1, 2 and 4 planes (veth pairs
# between mra and mrb, each shaped to BENCH_LINK_MBIT so that a plane, not
# the emulated CPU, is the bottleneck), and a throughput time series across
# a plane outage (netem loss 100% on one plane's veth, both directions, for
# BENCH_OUTAGE_S seconds): the dip and the time back to full speed.

MROCE_TOOL=${MROCE_TOOL:-$(readlink -f "$(dirname "${BASH_SOURCE[0]}")/../metaroce/metaroce")}
# The command that adds netdev $2 as a plane of device $1 (usage.md).
BENCH_PLANE_ADD=${BENCH_PLANE_ADD:-"$MROCE_TOOL plane add %s %s"}
PLANE_SHAPE=0

# link_restore NS DEV: DEV's root qdisc back to what the scenario set.
link_restore() {
	if ((PLANE_SHAPE)); then
		tc -n "$1" qdisc replace dev "$2" root tbf \
			rate "${BENCH_LINK_MBIT}mbit" burst 32kb latency 50ms
	else
		tc -n "$1" qdisc del dev "$2" root
	fi
}

# series STACK NS_A DEV_A NS_B DEV_B: ib_write_bw 64 KiB, 8 QPs,
# --run_infinitely, and by the wall clock: the bytes the server device
# received (its hw_counters rx_bytes: every MetaRoCE packet on every plane,
# payload and headers, retransmissions included) sampled every
# BENCH_SAMPLE_S, as MiB/s per second (rates.py series).  BENCH_OUTAGE_AT
# seconds after the traffic started, the path through veth ends
# DEV_A/DEV_B is cut (netem loss 100%, both ways) for BENCH_OUTAGE_S
# seconds; the run ends BENCH_SERIES_AFTER seconds after the cut is lifted.
# perftest's own per-interval figures need its clock calibration, which
# fails under TCG most of the time, so they are not used.
series() {
	local st=$1 nsa=$2 dva=$3 nsb=$4 dvb=$5 port spid cpid name t0="" tdown tup vals
	local ctr tout
	stack "$st" || return
	BENCH_PORT=$((BENCH_PORT + 1))
	port=$BENCH_PORT
	name=$BENCH_LOGS/series-$st-$port
	ctr=/sys/class/infiniband/$DS/ports/1/hw_counters/rx_bytes
	bg_ns "$SNS" timeout -k 5 180 ib_write_bw -d "$DS" -x "$(gid_index "$DS")" \
		-p "$port" -F -s 65536 -q 8 -D 5 --run_infinitely > "$name.server" 2>&1
	spid=$BG_PID
	if ! wait_for 20 listening "$SNS" "$port"; then
		kill $spid 2>/dev/null
		wait $spid
		rec group=outage stack="$st" status=failed error="server did not listen"
		return
	fi
	rm -f "$name.samples"
	sampler_start "$name.samples" "$ctr"
	bg_ns "$CNS" timeout -k 5 170 ib_write_bw -d "$DC" -x "$(gid_index "$DC")" \
		-p "$port" -F -s 65536 -q 8 -D 5 --run_infinitely "$SIP" > "$name.client" 2>&1
	cpid=$BG_PID
	# Traffic has started when the counter moved by a MiB.
	local c0 c end=$((SECONDS + 90))
	read -r c0 < "$ctr"
	while ((SECONDS < end)) && kill -0 $cpid 2>/dev/null; do
		read -r c < "$ctr"
		if ((c - c0 > 1048576)); then
			t0=$EPOCHREALTIME
			break
		fi
		sleep 0.2
	done
	if [ -n "$t0" ]; then
		# Under load a command takes a second or more to start in the
		# guest: the outage begins once the data direction (A's egress) is
		# cut and ends once both directions are back; tc -n, not ip netns
		# exec, which also remounts /sys.
		sleep "$BENCH_OUTAGE_AT"
		tc -n "$nsa" qdisc replace dev "$dva" root netem loss 100%
		tdown=$EPOCHREALTIME
		tc -n "$nsb" qdisc replace dev "$dvb" root netem loss 100%
		sleep "$BENCH_OUTAGE_S"
		link_restore "$nsa" "$dva"
		link_restore "$nsb" "$dvb"
		tup=$EPOCHREALTIME
		sleep "$BENCH_SERIES_AFTER"
	fi
	tout=$(awk -v a="${tdown:-0}" -v b="${tup:-0}" 'BEGIN { printf "%.1f", b - a }')
	sampler_stop
	kill $cpid $spid 2>/dev/null
	wait $cpid $spid
	if [ -z "$t0" ]; then
		rec group=outage stack="$st" status=failed \
			error="no traffic within 90 s: $(grep -iE 'fail|error|couldn' "$name.client" | head -n 2 | tr '\n' ' ')"
		return
	fi
	# Second k of the series covers [t0 + k - 1, t0 + k).
	vals=$(python3 "$BENCH_HERE/rates.py" series "$name.samples" "$t0" 1)
	rec group=outage stack="$st" planes="$OUTAGE_PLANES" status=ok series="$vals" \
		series_of="server rx_bytes, MiB/s per wall-clock second" \
		down_at="$(awk -v a="$t0" -v b="$tdown" 'BEGIN { printf "%.1f", b - a }')" \
		up_at="$(awk -v a="$t0" -v b="$tup" 'BEGIN { printf "%.1f", b - a }')" outage_s="$tout"
}

# planes_devices P: fresh devices ra, rb (no connection left from an
# earlier run: planes pair when a connection opens) with P planes each.
planes_devices() {
	local k
	ip netns exec $NS_A rdma link delete ra 2>/dev/null
	ip netns exec $NS_B rdma link delete rb 2>/dev/null
	ip netns exec $NS_A rdma link add ra type metaroce netdev va &&
		ip netns exec $NS_B rdma link add rb type metaroce netdev vb &&
		wait_for 10 gid_index ra && wait_for 10 gid_index rb || return 1
	for ((k = 1; k < $1; k++)); do
		# shellcheck disable=SC2059,SC2046 # the template is a command line
		ip netns exec $NS_A $(printf "$BENCH_PLANE_ADD" ra va$k) &&
			ip netns exec $NS_B $(printf "$BENCH_PLANE_ADD" rb vb$k) || return 1
	done
}

scen_paths() {
	local p k
	if ! mroce_feature planes; then
		rec group=planes stack=mroce-2ns status=not_measured error="$(mroce_feature_why planes)"
		log "outage: one plane"
		OUTAGE_PLANES=1 series mroce-2ns $NS_A va $NS_B vb
		return
	fi
	# Extra planes: veth pairs va1..va3 / vb1..vb3, 10.77.k.0/24.
	for k in 1 2 3; do
		ip link add va$k netns $NS_A type veth peer name vb$k netns $NS_B
		ip -n $NS_A addr add 10.77.$k.1/24 dev va$k
		ip -n $NS_B addr add 10.77.$k.2/24 dev vb$k
		ip -n $NS_A link set va$k up
		ip -n $NS_B link set vb$k up
	done
	PLANE_SHAPE=1
	for k in "" 1 2 3; do
		link_restore $NS_A va$k
		link_restore $NS_B vb$k
	done
	for p in 1 2 4; do
		if ! planes_devices $p; then
			rec group=planes stack=mroce-2ns planes="$p" status=failed error="setting up $p planes failed"
			break
		fi
		if perftest mroce-2ns $((BENCH_DUR + 60)) ib_write_bw -s 65536 -q 8 -D "$BENCH_DUR"; then
			rec group=planes stack=mroce-2ns planes="$p" status=ok mbps="$PT_MBPS" \
				mbps_perftest="${PT_F[3]}" perftest_clock="$PT_CLOCK" link_mbit="$BENCH_LINK_MBIT"
		else
			rec group=planes stack=mroce-2ns planes="$p" status=failed error="$PT_ERR"
		fi
		((p == 2)) && { log "outage: plane 1 of 2"; OUTAGE_PLANES=2 series mroce-2ns $NS_A va1 $NS_B vb1; }
	done
	PLANE_SHAPE=0
	for k in "" 1 2 3; do
		ip netns exec $NS_A tc qdisc del dev va$k root 2>/dev/null
		ip netns exec $NS_B tc qdisc del dev vb$k root 2>/dev/null
	done
	for k in 1 2 3; do ip -n $NS_A link del va$k; done
	planes_devices 1 || log "paths: could not set up ra, rb again"
}
