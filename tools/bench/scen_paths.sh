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
		ip netns exec "$1" tc qdisc replace dev "$2" root tbf \
			rate "${BENCH_LINK_MBIT}mbit" burst 32kb latency 50ms
	else
		ip netns exec "$1" tc qdisc del dev "$2" root
	fi
}

# series STACK NS_A DEV_A NS_B DEV_B: ib_write_bw 64 KiB, 8 QPs, --run_infinitely -D 1
# prints one result line per second of perftest's own clock.  After
# BENCH_OUTAGE_AT lines the path through veth ends DEV_A/DEV_B is cut
# (netem loss 100%, both ways) for BENCH_OUTAGE_S seconds; the run ends
# BENCH_SERIES_AFTER lines after the cut is lifted (or at a deadline).
# Records the per-second MiB/s and the line counts at cut and restore.
series() {
	local st=$1 nsa=$2 dva=$3 nsb=$4 dvb=$5 port spid cpid name n down up end vals
	stack "$st" || return
	BENCH_PORT=$((BENCH_PORT + 1))
	port=$BENCH_PORT
	name=$BENCH_LOGS/series-$st-$port
	end=$((SECONDS + 120 + BENCH_OUTAGE_AT + BENCH_OUTAGE_S + BENCH_SERIES_AFTER))
	in_ns "$SNS" timeout -k 5 $((end - SECONDS + 10)) ib_write_bw -d "$DS" -x "$(gid_index "$DS")" \
		-p "$port" -F -s 65536 -q 8 -D 1 --run_infinitely > "$name.server" 2>&1 &
	spid=$!
	if ! wait_for 20 listening "$SNS" "$port"; then
		kill $spid 2>/dev/null
		wait $spid
		rec group=outage stack="$st" status=failed error="server did not listen"
		return
	fi
	in_ns "$CNS" timeout -k 5 $((end - SECONDS)) stdbuf -oL ib_write_bw -d "$DC" -x "$(gid_index "$DC")" \
		-p "$port" -F -s 65536 -q 8 -D 1 --run_infinitely "$SIP" > "$name.client" 2>&1 &
	cpid=$!
	lines() { awk '/^ *#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { n++ } END { print n + 0 }' "$name.client"; }
	down="" up=""
	while ((SECONDS < end)) && kill -0 $cpid 2>/dev/null; do
		n=$(lines)
		if [ -z "$down" ] && ((n >= BENCH_OUTAGE_AT)); then
			ip netns exec "$nsa" tc qdisc replace dev "$dva" root netem loss 100%
			ip netns exec "$nsb" tc qdisc replace dev "$dvb" root netem loss 100%
			down=$(lines)
			sleep "$BENCH_OUTAGE_S"
			link_restore "$nsa" "$dva"
			link_restore "$nsb" "$dvb"
			up=$(lines)
		elif [ -n "$up" ] && ((n >= up + BENCH_SERIES_AFTER)); then
			break
		fi
		sleep 0.5
	done
	[ -n "$down" ] && [ -z "$up" ] && {
		link_restore "$nsa" "$dva"
		link_restore "$nsb" "$dvb"
	}
	kill $cpid $spid 2>/dev/null
	wait $cpid $spid
	vals=$(awk '/^ *#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { printf "%s%s", s, $4; s = "," }' "$name.client")
	if [ -z "$down" ] || [ -z "$vals" ]; then
		rec group=outage stack="$st" status=failed \
			error="only $(lines) per-second results before the deadline: $(grep -iE 'fail|error|couldn' "$name.client" | head -n 2 | tr '\n' ' ')"
		return
	fi
	rec group=outage stack="$st" planes="$OUTAGE_PLANES" status=ok series="$vals" \
		down_at="$down" up_at="$up" outage_s="$BENCH_OUTAGE_S"
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
			rec group=planes stack=mroce-2ns planes="$p" status=ok mbps="${PT_F[3]}" \
				link_mbit="$BENCH_LINK_MBIT"
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
