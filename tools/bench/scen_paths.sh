#!/bin/bash
# Multipath and planes: throughput with 1, 2 and 4 planes (extra veth
# pairs between mra and mrb), and a throughput time series across a path
# outage (netem loss 100% on one plane's veth, both directions, for
# BENCH_OUTAGE_S seconds): the dip and the time back to full speed.
# Planes need the feature (mroce_feature planes); the one-plane outage
# series runs today.

# The command that adds netdev $2 as a plane of device $1; set by the
# planes implementation's interface (see usage.md when it lands).
BENCH_PLANE_ADD=${BENCH_PLANE_ADD:-"metaroce plane add dev %s netdev %s"}

# series STACK SECONDS OUTAGE_DEV_A OUTAGE_DEV_B: ib_write_bw 64 KiB, 8 QPs,
# one result line per second; the path through the two veth ends is cut at
# t=BENCH_OUTAGE_AT for BENCH_OUTAGE_S seconds.  Records "t:MiB/s" pairs.
series() {
	local st=$1 secs=$2 dva=$3 dvb=$4 port spid cpid name t0 series="" l t
	stack "$st" || return
	BENCH_PORT=$((BENCH_PORT + 1))
	port=$BENCH_PORT
	name=$BENCH_LOGS/series-$st-$port
	in_ns "$SNS" timeout -k 5 "$secs" ib_write_bw -d "$DS" -x "$(gid_index "$DS")" -p "$port" -F \
		-s 65536 -q 8 -D 1 --run_infinitely > "$name.server" 2>&1 &
	spid=$!
	if ! wait_for 20 listening "$SNS" "$port"; then
		wait $spid
		rec group=outage stack="$st" status=failed error="server did not listen"
		return
	fi
	t0=$(date +%s.%N)
	in_ns "$CNS" timeout -k 5 "$secs" stdbuf -oL ib_write_bw -d "$DC" -x "$(gid_index "$DC")" -p "$port" -F \
		-s 65536 -q 8 -D 1 --run_infinitely "$SIP" 2>&1 |
		while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done > "$name.client" &
	cpid=$!
	sleep "$BENCH_OUTAGE_AT"
	ip netns exec $NS_A tc qdisc replace dev "$dva" root netem loss 100%
	ip netns exec $NS_B tc qdisc replace dev "$dvb" root netem loss 100%
	local t_down t_up
	t_down=$(date +%s.%N)
	sleep "$BENCH_OUTAGE_S"
	ip netns exec $NS_A tc qdisc del dev "$dva" root
	ip netns exec $NS_B tc qdisc del dev "$dvb" root
	t_up=$(date +%s.%N)
	wait $cpid
	wait $spid
	# Lines: "EPOCH  bytes iters peak avg rate"; t relative to the start.
	while read -r t l; do
		set -- $l
		[[ ${1:-} =~ ^[0-9]+$ ]] && [ $# -ge 4 ] || continue
		series+=${series:+,}$(awk -v a="$t0" -v b="$t" 'BEGIN { printf "%.2f", b - a }'):$4
	done < "$name.client"
	if [ -z "$series" ]; then
		rec group=outage stack="$st" status=failed \
			error="no per-second results: $(grep -iE 'fail|error|couldn' "$name.client" | head -n 2 | tr '\n' ' ')"
		return
	fi
	rec group=outage stack="$st" status=ok series="$series" \
		down_at="$(awk -v a="$t0" -v b="$t_down" 'BEGIN { printf "%.2f", b - a }')" \
		up_at="$(awk -v a="$t0" -v b="$t_up" 'BEGIN { printf "%.2f", b - a }')"
}

scen_paths() {
	local p k added=1
	if ! mroce_feature multipath; then
		rec group=multipath stack=mroce-2ns status=not_measured error="$(mroce_feature_why multipath)"
	fi
	if ! mroce_feature planes; then
		rec group=planes stack=mroce-2ns status=not_measured error="$(mroce_feature_why planes)"
		log "outage: one plane"
		series mroce-2ns "$BENCH_SERIES_S" va vb
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
	for p in 1 2 4; do
		for ((k = added; k < p; k++)); do
			# shellcheck disable=SC2059
			ip netns exec $NS_A $(printf "$BENCH_PLANE_ADD" ra va$k) &&
				ip netns exec $NS_B $(printf "$BENCH_PLANE_ADD" rb vb$k) || {
				rec group=planes stack=mroce-2ns planes="$p" status=failed error="adding plane $k failed"
				return
			}
		done
		added=$p
		if perftest mroce-2ns $((BENCH_DUR + 60)) ib_write_bw -s 65536 -q 8 -D "$BENCH_DUR"; then
			rec group=planes stack=mroce-2ns planes="$p" status=ok mbps="${PT_F[3]}"
		else
			rec group=planes stack=mroce-2ns planes="$p" status=failed error="$PT_ERR"
		fi
		((p == 2)) && { log "outage: plane 1 of 2"; series mroce-2ns "$BENCH_SERIES_S" va1 vb1; }
	done
}
