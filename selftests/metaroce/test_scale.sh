#!/bin/bash
# vm: -t 1200
# Many QPs between two hosts (tools/bench/qpscale.c: one process, N RC QP
# pairs between ra and rb, one RDMA WRITE each, checked byte by byte):
# they share one connection (design point 6), and a responder that offers
# few message slots holds its requester back (spec 11.5.1, MRC-ORD-013)
# instead of refusing packets until the QPs time out.
. "$(dirname "$0")/lib.sh"

tap_plan 10
PROG=/tmp/qpscale
ok_if "build qpscale" gcc -O2 -Wall -Wextra -o $PROG tools/bench/qpscale.c -libverbs
setup_two_hosts
cnt() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }
devices() {
	ip netns exec $NS_A rdma link add ra type metaroce netdev va &&
		ip netns exec $NS_B rdma link add rb type metaroce netdev vb &&
		wait_for 10 gid_index ra && wait_for 10 gid_index rb
}
# pairs N: N QP pairs carry a verified WRITE; the tool's report on failure.
pairs() {
	local rc
	timeout -k 5 600 $PROG -a ra -b rb -n "$1" -x "$(gid_index ra)" \
		-X "$(gid_index rb)" > /tmp/qpscale.log 2>&1
	rc=$?
	((rc == 0)) || diag "$(grep -v '^mem_' /tmp/qpscale.log | tr '\n' ' ')"
	return $rc
}

# Each side offers 64 message slots (read when a connection opens).  A
# 20 ms delay each way keeps the WRITEs in flight while the next ones are
# posted (without it, over a veth, each may complete before the next post
# and the slots are never all taken), and makes the RTT 8 times
# rto_initial_us: the first packets of paths without an RTT sample time
# out, and their probes must back off until a reply can arrive
# (MRC-PATH-019).  A probe timeout that stayed at rto_initial_us moved the
# paths to new entropy before every reply, and the connection failed.
modprobe metaroce
echo 64 > /sys/module/metaroce/parameters/rx_msg_slots
devices
ip netns exec $NS_A tc qdisc add dev va root netem delay 20ms
ip netns exec $NS_B tc qdisc add dev vb root netem delay 20ms
ok_if "64 message slots, 40 ms RTT: 1024 QP pairs each move a verified WRITE" \
	pairs 1024
ip netns exec $NS_A tc qdisc del dev va root
ip netns exec $NS_B tc qdisc del dev vb root
diag "$(grep -E '^(setup_s|traffic_s|teardown_s|completed|wc_errors)=' /tmp/qpscale.log | tr '\n' ' ')"
waits=$(cnt ra msg_slots_waits) refused=$(cnt rb drop_no_resource)
diag "requester waits for a slot: $waits; responder refusals: $refused"
ok_if "the requester held messages back for slots (msg_slots_waits $waits)" \
	test "$waits" -gt 0
ok_if "the responder refused no packet for want of a tracker" \
	test "$refused" -eq 0
failed=$(($(cnt ra path_failed) + $(cnt rb path_failed)))
ok_if "at 8x rto_initial_us no path failed, no connection failed (path_failed $failed)" \
	test "$failed" -eq 0 -a "$(cnt ra conn_failed)" -eq 0 -a "$(cnt rb conn_failed)" -eq 0
ok_if "one connection carries them all (conn_established 1 on each side)" \
	test "$(cnt ra conn_established)" -eq 1 -a "$(cnt rb conn_established)" -eq 1
rdma link delete ra
rdma link delete rb

# 4096 pairs at once over a plain veth, default message slots: every
# stream waits for window room at the same time.  Walking all waiting
# streams at every ACK made each ACK cost milliseconds under TCG; the RTT
# then grew past the RTO and the paths of a lossless link went round
# SUSPECT, PROBING and FAILED (path_failed 22-31, 300-700 resends for no
# loss, and some runs ended in IB_WC_RETRY_EXC_ERR).  The only loss here
# is a full input backlog: what is resent beyond tail loss probes must
# stay within what the kernel dropped, plus 2% of the data packets for
# the reordering a vCPU stall under TCG can cause (one run of five resent
# 115 of 8300 with no drop; the runs before the fix resent 300-730).
echo 4096 > /sys/module/metaroce/parameters/rx_msg_slots
devices
dropped0=$(backlog_dropped)
ok_if "4096 QP pairs each move a verified WRITE over one veth" pairs 4096
diag "$(grep -E '^(setup_s|traffic_s|teardown_s|completed|wc_errors)=' /tmp/qpscale.log | tr '\n' ' ')"
dropped=$(($(backlog_dropped) - dropped0))
resent=$(($(cnt ra retransmits) + $(cnt rb retransmits) - $(cnt ra tlp_probes) - $(cnt rb tlp_probes)))
failed=$(($(cnt ra path_failed) + $(cnt rb path_failed)))
diag "resent beyond tail loss probes: $resent; backlog drops: $dropped; path_failed $failed"
diag "$(dev_counters ra rb | tr '\n' ' ')"
ok_if "4096 pairs: no path failed, no connection failed (path_failed $failed)" \
	test "$failed" -eq 0 -a "$(cnt ra conn_failed)" -eq 0 -a "$(cnt rb conn_failed)" -eq 0
slack=$(($(cnt ra tx_data_packets) / 50))
ok_if "4096 pairs: resends ($resent) within the packets dropped ($dropped) + $slack" \
	test "$resent" -le $((dropped + slack))
rdma link delete ra
rdma link delete rb
ok_if "module unloads" modprobe -r metaroce
tap_done
