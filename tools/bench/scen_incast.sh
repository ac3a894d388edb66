#!/bin/bash
# Incast: 4 sender namespaces into 1 receiver through a bridge whose port
# toward the receiver is the bottleneck (htb rate limit + RED with ECN
# marking).  Aggregate throughput, Jain's fairness index and the latency of
# a probe QP (a 5th namespace) with and without the load; TCP (iperf3, ECN
# on) through the same bottleneck is the baseline.

INC_IP=10.66.0

setup_incast() {
	local i
	ip netns add msw
	ip -n msw link add br0 type bridge
	ip -n msw link set br0 up
	for i in 1 2 3 4 5 100; do
		ip netns add ms$i
		ip link add e0 netns ms$i type veth peer name p$i netns msw
		ip -n ms$i addr add $INC_IP.$i/24 dev e0
		ip -n ms$i link set lo up
		ip -n ms$i link set e0 up
		ip -n msw link set p$i master br0
		ip -n msw link set p$i up
		ip netns exec ms$i sysctl -qw net.ipv4.tcp_ecn=1
		ip netns exec ms$i rdma link add s$i type metaroce netdev e0
	done
	local r=$BENCH_INCAST_MBIT
	tc -n msw qdisc add dev p100 root handle 1: htb default 1
	tc -n msw class add dev p100 parent 1: classid 1:1 htb rate ${r}mbit ceil ${r}mbit
	tc -n msw qdisc add dev p100 parent 1:1 handle 10: red limit 400000 min 15000 \
		max 45000 avpkt 1200 burst 21 bandwidth ${r}mbit probability 0.1 ecn
	for i in 1 2 3 4 5 100; do wait_for 10 gid_index s$i || return 1; done
}

jain() { awk '{ s += $1; q += $1 * $1; n++ } END { if (q > 0) printf "%.3f", s * s / (n * q); else print "-" }'; }

# incast_probe TAG: ib_send_lat 8 B from ms5 to the receiver.
incast_probe() {
	local port=$((BENCH_PORT += 1)) f=$BENCH_LOGS/incast-probe-$1 spid
	ip netns exec ms100 timeout -k 5 120 ib_send_lat -d s100 -x "$(gid_index s100)" -p $port -F \
		-s 8 -n "$BENCH_INCAST_PROBE_N" > "$f.server" 2>&1 &
	spid=$!
	wait_for 20 listening ms100 $port
	ip netns exec ms5 timeout -k 5 120 ib_send_lat -d s5 -x "$(gid_index s5)" -p $port -F \
		-s 8 -n "$BENCH_INCAST_PROBE_N" $INC_IP.100 > "$f.client" 2>&1
	wait $spid
	read -r -a PROBE <<< "$(pt_result "$f.client")"
}

# incast_run KIND: KIND rdma (ib_write_bw 64 KiB) or tcp (iperf3).
incast_run() {
	local kind=$1 i base=$((BENCH_PORT + 1)) pids=() f vals="" err="" agg fair marks ce0 ce1
	BENCH_PORT=$((BENCH_PORT + 10))
	ce0=$(cat /sys/class/infiniband/s100/ports/1/hw_counters/ecn_ce_rcvd 2>/dev/null || echo 0)
	for i in 1 2 3 4; do
		f=$BENCH_LOGS/incast-$kind-$i
		if [ "$kind" = tcp ]; then
			ip netns exec ms100 timeout -k 5 $((BENCH_INCAST_DUR + 40)) iperf3 -s -1 -p $((base + i)) > "$f.server" 2>&1 &
		else
			ip netns exec ms100 timeout -k 5 $((BENCH_INCAST_DUR + 60)) ib_write_bw -d s100 \
				-x "$(gid_index s100)" -p $((base + i)) -F -s 65536 -D "$BENCH_INCAST_DUR" > "$f.server" 2>&1 &
		fi
		pids+=($!)
		wait_for 20 listening ms100 $((base + i))
	done
	for i in 1 2 3 4; do
		f=$BENCH_LOGS/incast-$kind-$i
		if [ "$kind" = tcp ]; then
			ip netns exec ms$i timeout -k 5 $((BENCH_INCAST_DUR + 40)) iperf3 -c $INC_IP.100 \
				-p $((base + i)) -t "$BENCH_INCAST_DUR" -J > "$f.client" 2>&1 &
		else
			ip netns exec ms$i timeout -k 5 $((BENCH_INCAST_DUR + 60)) ib_write_bw -d s$i \
				-x "$(gid_index s$i)" -p $((base + i)) -F -s 65536 -D "$BENCH_INCAST_DUR" \
				$INC_IP.100 > "$f.client" 2>&1 &
		fi
		pids+=($!)
	done
	PROBE=()
	if [ "$kind" = rdma ]; then
		sleep 3
		incast_probe loaded
	fi
	for i in "${pids[@]}"; do wait "$i"; done
	for i in 1 2 3 4; do
		f=$BENCH_LOGS/incast-$kind-$i.client
		if [ "$kind" = tcp ]; then
			v=$(python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 8 / 1048576))' "$f" 2>/dev/null)
		else
			v=$(pt_result "$f" | awk '{ print $4 }')
		fi
		[ -n "$v" ] || { err+="sender $i failed: $(grep -iE 'fail|error|couldn' "$f" | head -n 1) "; v=0; }
		vals+="$v "
	done
	agg=$(tr ' ' '\n' <<< "$vals" | awk 'NF { s += $1 } END { printf "%.2f", s }')
	fair=$(tr ' ' '\n' <<< "$vals" | awk NF | jain)
	marks=$(tc -n msw -s qdisc show dev p100 | sed -n 's/.*marked \([0-9]*\).*/\1/p' | tail -n 1)
	ce1=$(cat /sys/class/infiniband/s100/ports/1/hw_counters/ecn_ce_rcvd 2>/dev/null || echo 0)
	local st=mroce-incast
	[ "$kind" = tcp ] && st=tcp-incast
	rec group=incast stack=$st status="$([ -z "$err" ] && echo ok || echo failed)" error="${err:--}" \
		senders=4 bottleneck_mbit="$BENCH_INCAST_MBIT" per_sender_mbps="${vals% }" agg_mbps="$agg" \
		jain="$fair" red_marked="${marks:-0}" ecn_ce_rcvd=$((ce1 - ce0)) \
		probe_median_us="${PROBE[4]:--}" probe_p99_us="${PROBE[7]:--}" \
		cc="$(mroce_feature cc && echo present || echo absent)"
}

scen_incast() {
	if ! setup_incast; then
		rec group=incast stack=mroce-incast status=failed error="topology setup failed"
		return
	fi
	log "incast: probe alone"
	incast_probe idle
	rec group=incast_probe stack=mroce-incast status="$([ ${#PROBE[@]} -gt 7 ] && echo ok || echo failed)" \
		median_us="${PROBE[4]:--}" p99_us="${PROBE[7]:--}"
	log "incast: 4 MetaRoCE senders"
	incast_run rdma
	log "incast: 4 TCP senders"
	incast_run tcp
	mroce_feature cc || rec group=cc stack=mroce-incast status=not_measured error="$(mroce_feature_why cc)"
}
