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
			ip netns exec "$nsa" tc qdisc del dev "$dva" root
			ip netns exec "$nsb" tc qdisc del dev "$dvb" root
			up=$(lines)
		elif [ -n "$up" ] && ((n >= up + BENCH_SERIES_AFTER)); then
			break
		fi
		sleep 0.5
	done
	[ -n "$down" ] && [ -z "$up" ] && {
		ip netns exec "$nsa" tc qdisc del dev "$dva" root
		ip netns exec "$nsb" tc qdisc del dev "$dvb" root
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

scen_paths() {
	local p k added=1
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
	for p in 1 2 4; do
		for ((k = added; k < p; k++)); do
			# shellcheck disable=SC2059,SC2046 # the template is a command line
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
		((p == 2)) && { log "outage: plane 1 of 2"; OUTAGE_PLANES=2 series mroce-2ns $NS_A va1 $NS_B vb1; }
	done
}
