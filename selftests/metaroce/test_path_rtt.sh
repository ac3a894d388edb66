#!/bin/bash
# vm: -t 600
# Path estimates over a link with a known delay (spec 7.4, 12.2.1): netem
# adds 40 ms each way; while verified transfers run, every ACTIVE path's
# min_rtt and srtt are at least the 80 ms round trip, and min_rtt is not
# above srtt + 4 rttvar (MRC-PATH-017/018), its RTO follows the srtt, rttvar,
# peer Max ACK Delay and backoff exactly (MRC-PATH-019), and its window
# stays within [cwnd_min_pkts, max_cwnd_pkts] packets (MRC-CC-003).
. "$(dirname "$0")/lib.sh"
need_mr_tool

tap_plan 4
setup_two_hosts
add_devices la lb
P=/sys/module/metaroce/parameters
ip netns exec $NS_A tc qdisc replace dev va root netem delay 40ms limit 10000
ip netns exec $NS_B tc qdisc replace dev vb root netem delay 40ms limit 10000

# sample_while PID FILE: `metaroce show la --json` every 0.2 s while PID runs.
sample_while() {
	while kill -0 "$1" 2>/dev/null; do
		mra show la --json >> "$2"
		sleep 0.2
	done
}

S=/tmp/path-samples.json
: > $S
kverbs_rounds 3 rc_send,rc_write,rc_read size=262144 > /tmp/transfers.log 2>&1 &
pid=$!
sample_while $pid $S
wait $pid
ok_if "3 x 256 KiB SEND, WRITE, READ over an 80 ms round trip, verified" test $? = 0
ok_if "samples taken during the transfers" test "$(wc -l < $S)" -ge 5
# The peer's Max ACK Delay is its ack_coalesce_us (the same module here).
/usr/bin/python3 "$(dirname "$0")/path_estimates.py" $S 80000 \
	"$(cat $P/rto_min_us)" "$(cat $P/rto_max_us)" "$(cat $P/ack_coalesce_us)" \
	"$(cat $P/cwnd_min_pkts)" "$(cat $P/max_cwnd_pkts)" $((1024 + 124)) \
	> /tmp/path-estimates.txt
est=$?
ok_if "srtt, min_rtt, RTO and cwnd of every ACTIVE path follow spec 7.4, 12.2.1" \
	test $est = 0
diag "$(cat /tmp/path-estimates.txt)"

ip netns exec $NS_A tc qdisc del dev va root
ip netns exec $NS_B tc qdisc del dev vb root
rdma link delete la
rdma link delete lb
ok_if "module unloads" modprobe -r metaroce
tap_done
