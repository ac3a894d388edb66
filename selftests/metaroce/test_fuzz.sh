#!/bin/bash
# vm: -t 1500
# Hostile input (issue 8): tools/mrfuzz sends FUZZ_COUNT (default 100000)
# malformed packets at device ra while RC traffic between ra and rb runs
# and is verified (ibv_rc_pingpong -c in a loop).  The packets are random,
# randomly framed with a valid CRC32C, or mutations of valid packets: of
# live traffic (captured; never with valid credentials) and of a connection
# the fuzzer opened itself from 10.77.0.3 with an RC QP attached by the
# target agent, so mutations with a recomputed CRC32C reach the transport.
# No crash, WARN or leak report (dmesg is scanned by the VM runner; the
# Debian kernel has no kmemleak, so module unload must also find every
# object freed), every packet is accounted in a drop counter or rx_packets,
# and the live traffic keeps completing with correct data.
#
# The full million-packet run (about 10 minutes under TCG):
#   tools/vm/run.sh -t 2400 -- env FUZZ_COUNT=1000000 selftests/metaroce/test_fuzz.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"

here=$(cd "$(dirname "$0")" && pwd)
COMP=$here/../compliance
FUZZ=$here/../../tools/mrfuzz
COUNT=${FUZZ_COUNT:-100000}
ROUNDS=${FUZZ_ROUNDS:-10}	# a fresh target QP each round: fatal NAKs end streams
FUZZ_IP=10.77.0.3
CNT=/sys/class/infiniband/ra/ports/1/hw_counters
W=/tmp/mroce-fuzz
mkdir -p $W

tap_plan 10
[ -x $FUZZ ] || make -s -C "$here/../.." tools/mrfuzz
setup_two_hosts
ip -n $NS_B addr add $FUZZ_IP/24 dev vb
add_devices ra rb
# nft_input NS TABLE RULE: table TABLE in namespace NS, RULE on its input.
nft_input() {
	ip netns exec "$1" nft -f - <<NFT
table ip $2 {
	chain in {
		type filter hook input priority 0;
		$3
	}
}
NFT
}
# What ra sends to the fuzzer's address must not reach rb's socket: rb has
# no such connection and answers with a stateless RESET, which ends the
# fuzzer's connection (correctly, MRC-CONN-045) at its first reply.  The
# fuzzer's packet sockets see the packets before netfilter drops them.
nft_input $NS_B fuzz "ip daddr $FUZZ_IP udp dport 4793 drop" ||
	diag "nft: the fuzzer's replies are not kept from rb"
# What the fuzzer sends, counted as host A takes it in: a round is over
# once this stops moving (the debug kernel takes packets slower than the
# fuzzer sends them, and the next round's prep must not meet the last
# one's tail).
nft_input $NS_A fuzzin "ip saddr $FUZZ_IP udp dport 4793 counter" ||
	diag "nft: no count of the fuzzer's packets"
fuzz_in() {
	ip netns exec $NS_A nft list chain ip fuzzin in 2>/dev/null |
		awk '/counter/ { for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }'
}
# drain: wait (up to 60 s) until host A has taken in all the fuzzer sent.
drain() {
	local last=-1 now i
	for ((i = 0; i < 60; i++)); do
		now=$(fuzz_in)
		[ "$now" = "$last" ] && return 0
		last=$now
		sleep 1
	done
	echo "host A still taking in the fuzzer's packets after 60 s"
}
# udp_in: UDP datagrams delivered in host A (to the MetaRoCE socket).
udp_in() {
	ip netns exec $NS_A awk '/^Udp: [0-9]/ { print $2; exit }' /proc/net/snmp
}
# accounted: rx_packets plus every drop counter of ra.
accounted() {
	local s=0 f
	for f in rx_packets drop_bad_crc drop_bad_header drop_bad_version \
		drop_no_conn drop_bad_token drop_auth drop_unconfirmed \
		drop_no_resource resets_rcvd ud_rx_packets ud_drop_qkey \
		ud_drop_no_qp ud_drop_no_recv; do
		s=$((s + $(cat $CNT/$f)))
	done
	echo $s
}
snap() { (cd $CNT && grep -H . drop_* ud_drop_* rx_packets path_duplicates nak_*_sent conn_* resets_* stream_closes_rcvd) | sort > "$1"; }

live_start 200

# Corpus: live packets from a capture, and our own connection's.
ip netns exec $NS_B tcpdump -i vb -s 0 -U -w $W/live.pcap -c 400 udp port 4793 \
	2>/dev/null &
tcpd=$!
ip netns exec $NS_A /usr/bin/python3 $COMP/target.py ra 4794 > $W/agent.log 2>&1 &
agent=$!
wait_for 60 grep -q listening $W/agent.log
wait_for 60 bash -c "[ -s $W/live.pcap ] && ! kill -0 $tcpd"
kill $tcpd 2>/dev/null
rm -f $W/state
# prep [NEXT_PSN]: a fresh target QP on our connection, and its corpus.
prep() {
	ip netns exec $NS_B /usr/bin/python3 $COMP/fuzzprep.py $FUZZ_IP $IP_A 4794 \
		$W/live.pcap $W/corpus $W/state "$@" && return 0
	dev_counters ra | grep -E 'conn_|stream|path_failed'
	return 1
}
ok_if "corpus: live capture, own connection, target agent QP" prep

snap $W/before
# The live traffic moves both counts while they are read: the accounted
# window [acc0, acc1] holds the received one [in0, in1].
acc0=$(accounted)
in0=$(udp_in)
runs0=$(live_runs)
# fuzz: ROUNDS runs of mrfuzz, each on a fresh target QP.
fuzz() {
	local r next="" per=$((COUNT / ROUNDS)) n
	: > $W/fuzz.log
	for ((r = 0; r < ROUNDS; r++)); do
		n=$per
		((r == ROUNDS - 1)) && n=$((COUNT - per * (ROUNDS - 1)))
		if ((r > 0)); then
			prep $next >> $W/fuzz.log || return 1
		fi
		ip netns exec $NS_B $FUZZ -t $IP_A -S $FUZZ_IP -c $n -s $RANDOM \
			-f $W/corpus > $W/round.log || return 1
		drain >> $W/round.log
		cat $W/round.log >> $W/fuzz.log
		next=$(sed -n 's/^next own PSN //p' $W/round.log)
	done
	awk '/^sent/ { n += $2 } END { print "total sent:", n; exit n != '$COUNT' }' $W/fuzz.log
}
ok_if "mrfuzz sent $COUNT packets in $ROUNDS rounds" fuzz
diag "$(cat $W/fuzz.log)"
sleep 2
snap $W/after
in1=$(udp_in)
acc1=$(accounted)
diag "counters that moved:"
diag "$(join -t: $W/before $W/after | awk -F: '$3 != $2 { print $1 ": +" $3 - $2 }')"
diag "UDP datagrams in: $((in1 - in0)), accounted by rx_packets and drops: $((acc1 - acc0))"

ok_if "live pingpongs completed during the fuzzing" \
	test "$(live_runs)" -gt "$runs0"
# One more after the fuzzing: the connection still carries correct data.
runs1=$(live_runs)
ok_if "live traffic completes after the fuzzing" live_more "$runs1" 180
live_stop
ok_if "every live pingpong passed its data check ($(live_runs) runs)" \
	bash -c "! grep -A30 FAIL $W/live.log"

# delta FILE_A FILE_B COUNTER: how much COUNTER moved.
delta() {
	echo $(($(sed -n "s/^$3://p" $W/after) - $(sed -n "s/^$3://p" $W/before)))
}
ok_if "drops counted by reason: bad_crc, bad_header, bad_version, no_conn, bad_token" \
	bash -c "for c in drop_bad_crc drop_bad_header drop_bad_version drop_no_conn \
		drop_bad_token; do d=\$(( \$(sed -n \"s/^\$c://p\" $W/after) - \
		\$(sed -n \"s/^\$c://p\" $W/before) )); [ \$d -gt 0 ] || \
		{ echo \"\$c did not move\"; exit 1; }; done"
ok_if "mutations reached the transport (out_of_window, no_stream or NAKs)" \
	bash -c "[ \$(( $(delta x x drop_out_of_window) + $(delta x x path_duplicates) + \
		$(delta x x nak_access_sent) + $(delta x x nak_inv_req_sent) )) -gt 0 ]"
ok_if "every datagram received is accounted (rx_packets or a drop counter)" \
	[ $((acc1 - acc0)) -ge $((in1 - in0)) -a $((in1 - in0)) -ge $((COUNT / 2)) ]
ok_if "the target agent still answers" ip netns exec $NS_B /usr/bin/python3 -c "
import sys; sys.path.insert(0, '$COMP')
from fuzzprep import agent
print(agent(4794, '$IP_A', op='counters')['rx_packets'])"
kill $agent 2>/dev/null
wait $agent 2>/dev/null

rdma link delete ra
rdma link delete rb
ok_if "module unloads: no object left behind" modprobe -r metaroce
tap_done
