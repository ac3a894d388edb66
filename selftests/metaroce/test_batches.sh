#!/bin/bash
# vm: -t 600
# UDP GSO batches (spec 4.8): a sender hands several packets of a path to
# the stack as one skb (tx_gso_batches), a veth carries it whole and the
# receiving stack cuts it into its datagrams.  The kernel verbs tests
# check every byte and completion; under loss too, and with batching off
# (tx_batch_pkts 1, the default) nothing is batched.
. "$(dirname "$0")/lib.sh"

tap_plan 10
setup_two_hosts
add_devices la lb
# Emulator stalls must not fire RTOs here: the batches are the subject.
echo 20000 > /sys/module/metaroce/parameters/rto_min_us
echo 32 > /sys/module/metaroce/parameters/tx_batch_pkts

# batched DEV CMD...: run CMD (its output to stderr); print "GSO skbs
# packets" that DEV sent meanwhile; CMD's exit status.
batched() {
	local b0 p0 rc dev=$1
	shift
	b0=$(hw_counter "$dev" tx_gso_batches)
	p0=$(hw_counter "$dev" tx_packets)
	"$@" >&2
	rc=$?
	echo "$(($(hw_counter "$dev" tx_gso_batches) - b0)) $(($(hw_counter "$dev" tx_packets) - p0))"
	return $rc
}

fp0=$(hw_counter lb rx_frag_packets)
w=$(batched la kverbs rc_write size=1048576 iters=4)
ok_if "4 x 1 MiB WRITE verified" test $? = 0
diag "WRITE: la sent $w (GSO skbs, packets)"
set -- $w
ok_if "WRITE: the requester sends GSO batches" test "${1:-0}" -gt 0
# New data keeps its path for a batch (MRC-PATH-040): 10.3 to 12.9
# packets per skb over the 4 paths with the VM alone on the host, 6.7 and
# 9.7 with two VMs on its two CPUs (ACKs then free the window a few
# packets at a time); spraying packet by packet made 5.4 alone.
ok_if "WRITE: MRC-PATH-040: a path keeps new data for a batch (packets >= 6 x batches)" \
	test "${2:-0}" -ge $((6 * ${1:-0}))

# The receiver places the datagrams of a batch from the page fragments
# they came in, without a linearizing copy (MRC-ENC-027).
fp=$(($(hw_counter lb rx_frag_packets) - fp0))
ok_if "WRITE: the receiver placed $fp packets from their fragments (rx_frag_packets > half the packets)" \
	test "$fp" -gt $((${2:-0} / 2))

r=$(batched lb kverbs rc_read size=1048576 iters=4)
ok_if "4 x 1 MiB READ verified" test $? = 0
diag "READ: lb (the responder) sent $r"
set -- $r
ok_if "READ: the responder sends its responses in GSO batches" test "${1:-0}" -gt 0

ip netns exec $NS_A tc qdisc replace dev va root netem loss 2%
ip netns exec $NS_B tc qdisc replace dev vb root netem loss 2%
l=$(batched la kverbs rc_send,rc_write,rc_read size=1048576)
ok_if "loss 2%: 1 MiB SEND, WRITE, READ verified" test $? = 0
diag "loss 2%: la sent $l; retransmitted $(hw_counter la retransmits)"
set -- $l
ok_if "loss 2%: still in GSO batches" test "${1:-0}" -gt 0
ip netns exec $NS_A tc qdisc del dev va root
ip netns exec $NS_B tc qdisc del dev vb root

echo 1 > /sys/module/metaroce/parameters/tx_batch_pkts
o=$(batched la kverbs rc_write size=1048576)
ok_if "tx_batch_pkts 1: 1 MiB WRITE verified" test $? = 0
set -- $o
ok_if "tx_batch_pkts 1: no GSO batch ($o)" test "${1:-1}" = 0

rdma link delete la
rdma link delete lb
modprobe -r metaroce
tap_done
