#!/bin/bash
# vm: -t 900
# Incast: four senders into one receiver through a bridge whose port
# towards the receiver is a 40 Mbit/s bottleneck with a RED queue that
# marks ECN CE.  Every sender moves byte-checked RC traffic
# (ibv_rc_pingpong -c); the receiver's fair-share rate hint and the
# senders' ECN response share the bottleneck: report Jain's fairness
# index of the four throughputs, and check the queue is controlled by
# marking, not by drops.
. "$(dirname "$0")/lib.sh"

N=4
R=10.79.0.100
RATE=40
tap_plan 6

ip link add br0 type bridge
ip link set br0 up
ip netns add mrr
ip link add r-br type veth peer name r-eth netns mrr
ip link set r-br master br0 up
ip -n mrr addr add $R/24 dev r-eth
ip -n mrr link set r-eth up
ip -n mrr link set lo up
for i in $(seq 1 $N); do
	ip netns add mrs$i
	ip link add s$i-br type veth peer name s$i-eth netns mrs$i
	ip link set s$i-br master br0 up
	ip -n mrs$i addr add 10.79.0.$i/24 dev s$i-eth
	ip -n mrs$i link set s$i-eth up
	ip -n mrs$i link set lo up
done
# The bottleneck: the bridge port towards the receiver, RED with ECN.
tc qdisc add dev r-br root handle 1: htb default 1
tc class add dev r-br parent 1: classid 1:1 htb rate ${RATE}mbit ceil ${RATE}mbit
tc qdisc add dev r-br parent 1:1 handle 10: red limit 200000 min 15000 \
	max 45000 avpkt 1100 burst 20 probability 0.2 bandwidth ${RATE}mbit ecn

ip netns exec mrr rdma link add mr type metaroce netdev r-eth
for i in $(seq 1 $N); do
	ip netns exec mrs$i rdma link add ms$i type metaroce netdev s$i-eth
done
for d in mr $(seq -f "ms%g" 1 $N); do wait_for 10 gid_index $d; done
echo $RATE > /sys/module/metaroce/parameters/rx_capacity_mbps
cnt() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }

# All four at once: 64 KiB messages, every byte checked by -c.
for i in $(seq 1 $N); do
	ip netns exec mrr timeout 200 ibv_rc_pingpong -d mr -g "$(gid_index mr)" \
		-p $((18600 + i)) -s 65536 -n 200 -c > /tmp/incast-srv$i.log 2>&1 &
done
# Each server listens once it has opened the device and made its QP; a
# client does not retry its connect (seconds apart on a loaded host).
listeners() { ip netns exec mrr ss -ltnH | grep -c ':186[0-9][0-9] '; }
all_listening() { [ "$(listeners)" = $N ]; }
wait_for 60 all_listening ||
	diag "servers listening after 60 s: $(listeners) of $N"
pids=()
for i in $(seq 1 $N); do
	ip netns exec mrs$i timeout 200 ibv_rc_pingpong -d ms$i \
		-g "$(gid_index ms$i)" -p $((18600 + i)) -s 65536 -n 200 -c $R \
		> /tmp/incast-cli$i.log 2>&1 &
	pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
wait
ok_if "4 senders into 1 receiver through the bottleneck: every byte checked" \
	test $fails -eq 0
for i in $(seq 1 $N); do
	grep -q "iters in" /tmp/incast-cli$i.log ||
		diag "sender $i: $(cat /tmp/incast-cli$i.log); receiver: $(cat /tmp/incast-srv$i.log)"
done
for d in mr ms1 ms2 ms3 ms4; do
	diag "$d: $(cd /sys/class/infiniband/$d/ports/1/hw_counters && grep -H . tx_data_packets rx_data_packets retransmits rto_timeouts tlp_probes syncs_sent stream_retries retry_exceeded path_suspect paths_active conn_failed conn_rejected conn_peer_restart nak_*_sent nak_*_rcvd drop_no_stream late_arrivals | tr '\n' ' ')"
done

# Mbit/s of each sender, from ibv_rc_pingpong's report.
rates=$(for i in $(seq 1 $N); do
	sed -n 's/.* = \([0-9.]*\) Mbit\/sec/\1/p' /tmp/incast-cli$i.log | head -1
done | tr '\n' ' ')
diag "sender rates (Mbit/s): $rates"
jain=$(echo "$rates" | python3 -c '
import sys
x = [float(v) for v in sys.stdin.read().split()]
print("%.3f" % (sum(x) ** 2 / (len(x) * sum(v * v for v in x))) if len(x) == 4 else 0)')
diag "Jain's fairness index: $jain"
ok_if "every sender got a fair share (Jain's index >= 0.8)" \
	python3 -c "import sys; sys.exit(0 if float('$jain') >= 0.8 else 1)"

q=$(tc -s qdisc show dev r-br | grep -A3 "red 10:")
diag "bottleneck: $(echo $q | tr '\n' ' ')"
marked=$(echo "$q" | sed -n 's/.*marked \([0-9]*\).*/\1/p' | head -1)
dropped=$(echo "$q" | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -1)
sent=$(echo "$q" | sed -n 's/.*Sent [0-9]* bytes \([0-9]*\) pkt.*/\1/p' | head -1)
ok_if "the bottleneck marked ECN CE" test "${marked:-0}" -gt 0
ok_if "the receiver saw and echoed CE marks" test "$(cnt mr ecn_ce_rcvd)" -gt 0
ce_cuts=0
for i in $(seq 1 $N); do ce_cuts=$((ce_cuts + $(cnt ms$i cwnd_reductions_ecn))); done
diag "sender window cuts on ECN: $ce_cuts; hint-limited packets: $(for i in $(seq 1 $N); do cnt ms$i hint_limited; done | tr '\n' ' ')"
# MRC-CC-001 (in part): with default tunables the senders run the spec's
# ECN-driven window control.
ok_if "senders cut their windows on ECN" test $ce_cuts -gt 0
diag "bottleneck: $sent packets, $marked marked, $dropped dropped"
ok_if "marking, not loss, controls the queue (drops < 2% of packets)" \
	test $(( ${dropped:-0} * 50 )) -lt "${sent:-1}"

echo 0 > /sys/module/metaroce/parameters/rx_capacity_mbps
ip netns exec mrr rdma link delete mr
for i in $(seq 1 $N); do ip netns exec mrs$i rdma link delete ms$i; done
tap_done
