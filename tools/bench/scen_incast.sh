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
	tc -n msw class add dev p100 parent 1: classid 1:1 htb rate "${r}mbit" ceil "${r}mbit"
	tc -n msw qdisc add dev p100 parent 1:1 handle 10: red limit 400000 min 15000 \
		max 45000 avpkt 1200 burst 21 bandwidth "${r}mbit" probability 0.1 ecn
	for i in 1 2 3 4 5 100; do wait_for 10 gid_index s$i || return 1; done
}

jain() { awk '{ s += $1; q += $1 * $1; n++ } END { if (q > 0) printf "%.3f", s * s / (n * q); else print "-" }'; }

# incast_probe TAG: ib_send_lat 8 B from ms5 to the receiver; latency needs
# perftest's clock, so a run whose calibration failed is repeated (up to 3
# tries) and the server's figures stand in for an "inf" client line.
incast_probe() {
	local port f spid try line
	for try in 1 2 3; do
		port=$((BENCH_PORT += 1)) f=$BENCH_LOGS/incast-probe-$1-$try
		ip netns exec ms100 timeout -k 5 120 ib_send_lat -d s100 -x "$(gid_index s100)" -p $port -F \
			-s 8 -n "$BENCH_INCAST_PROBE_N" > "$f.server" 2>&1 &
		spid=$!
		wait_for 20 listening ms100 $port
		ip netns exec ms5 timeout -k 5 120 ib_send_lat -d s5 -x "$(gid_index s5)" -p $port -F \
			-s 8 -n "$BENCH_INCAST_PROBE_N" $INC_IP.100 > "$f.client" 2>&1
		wait $spid
		for line in "$(pt_result "$f.client")" "$(pt_result "$f.server")"; do
			read -r -a PROBE <<< "$line"
			[[ ${PROBE[4]:-x} =~ ^[0-9.]+$ ]] && [[ ${PROBE[7]:-x} =~ ^[0-9.]+$ ]] && return 0
		done
	done
	PROBE=()
	return 1
}

# incast_ctr NAME: the sum of MetaRoCE port counter NAME over senders 1-4.
incast_ctr() {
	local i n=0
	for i in 1 2 3 4; do n=$((n + $(mroce_cnt s$i "$1"))); done
	echo $n
}

# incast_run KIND: KIND rdma (ib_write_bw 64 KiB) or tcp (iperf3).
# Per sender: goodput (perftest's iteration count over its sample window,
# or iperf3's bytes received) and the wire rate into the switch (bridge
# port p1..p4 rx_bytes); the bottleneck's output (p100 tx_bytes): both by
# the wall clock, sampled every BENCH_SAMPLE_S, over the window in which
# all 4 senders were sending (rates.py window).
incast_run() {
	local kind=$1 i base=$((BENCH_PORT + 1)) pids=() f v vals="" err="" agg fair marks ce0 ce1
	local smp=$BENCH_LOGS/incast-$kind.samples win wire deliv rtx0 rtx1 rto0 rto1 cwe0 cwe1
	BENCH_PORT=$((BENCH_PORT + 10))
	ce0=$(mroce_cnt s100 ecn_ce_rcvd)
	rtx0=$(incast_ctr retransmits) rto0=$(incast_ctr rto_timeouts) cwe0=$(incast_ctr cwnd_reductions_ecn)
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
	rm -f "$smp"
	sampler_start "$smp" msw /sys/class/net/p{1,2,3,4}/statistics/rx_bytes /sys/class/net/p100/statistics/tx_bytes
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
	sampler_stop
	for i in 1 2 3 4; do
		f=$BENCH_LOGS/incast-$kind-$i.client
		if [ "$kind" = tcp ]; then
			v=$(python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 8 / 1048576))' "$f" 2>/dev/null)
		else
			read -r -a PT_F <<< "$(pt_result "$f")"
			v=""
			[ -n "${PT_F[1]:-}" ] && v=$(bw_from_iters "${PT_F[1]}" "${PT_F[0]}" "$BENCH_INCAST_DUR" | cut -d' ' -f1)
		fi
		[[ $v =~ ^[0-9.]+$ ]] || { err+="sender $i failed: $(grep -iE 'fail|error|couldn' "$f" | head -n 1) "; v=0; }
		vals+="$v "
	done
	agg=$(tr ' ' '\n' <<< "$vals" | awk 'NF { s += $1 } END { printf "%.2f", s }')
	fair=$(tr ' ' '\n' <<< "$vals" | awk NF | jain)
	read -r win wire <<< "$(python3 "$BENCH_HERE/rates.py" window "$smp" 4)"
	deliv=${wire##*,}
	wire=${wire%,*}
	marks=$(tc -n msw -s qdisc show dev p100 | sed -n 's/.*marked \([0-9]*\).*/\1/p' | tail -n 1)
	ce1=$(mroce_cnt s100 ecn_ce_rcvd)
	rtx1=$(incast_ctr retransmits) rto1=$(incast_ctr rto_timeouts) cwe1=$(incast_ctr cwnd_reductions_ecn)
	local st=mroce-incast
	[ "$kind" = tcp ] && st=tcp-incast
	rec group=incast stack=$st status="$([ -z "$err" ] && echo ok || echo failed)" error="${err:--}" \
		senders=4 bottleneck_mbit="$BENCH_INCAST_MBIT" per_sender_mbps="${vals% }" agg_mbps="$agg" \
		jain="$fair" window_s="$win" per_sender_wire_mbps="${wire//,/ }" delivered_mbps="${deliv:--}" \
		red_marked="${marks:-0}" ecn_ce_rcvd=$((ce1 - ce0)) \
		retransmits=$((rtx1 - rtx0)) rto_timeouts=$((rto1 - rto0)) cwnd_reductions_ecn=$((cwe1 - cwe0)) \
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
	if incast_probe idle; then
		rec group=incast_probe stack=mroce-incast status=ok median_us="${PROBE[4]}" p99_us="${PROBE[7]}"
	else
		rec group=incast_probe stack=mroce-incast status=failed \
			error="ib_send_lat printed no usable latency in 3 tries (perftest clock calibration)"
	fi
	log "incast: 4 MetaRoCE senders"
	incast_run rdma
	log "incast: 4 TCP senders"
	incast_run tcp
	mroce_feature cc || rec group=cc stack=mroce-incast status=not_measured error="$(mroce_feature_why cc)"
}
