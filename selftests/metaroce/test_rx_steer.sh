#!/bin/bash
# vm: -t 600
# Receive steering (rxsteer.c, spec 20.1): with a backlog of packets on
# the CPU they arrived on, a connection's packets are taken on its home
# CPU (rx_steered), in order: every byte and completion checked by the
# kernel verbs tests, under loss too; with rx_steer 0 nothing is steered.
. "$(dirname "$0")/lib.sh"

tap_plan 7
setup_two_hosts
add_devices la lb
P=/sys/module/metaroce/parameters

steered() { echo $(($(hw_counter la rx_steered) + $(hw_counter lb rx_steered))); }

ok_if "rx_steer is on by default" test "$(cat $P/rx_steer)" = 1

s0=$(steered)
kverbs rc_write,rc_send,rc_read size=1048576 iters=8 >&2
ok_if "1 MiB WRITE, SEND, READ x 8 verified" test $? = 0
s1=$(steered)
diag "steered $((s1 - s0)) packets; spurious retransmissions $(hw_counter la spurious_retransmits)"
ok_if "packets taken on their connection's home CPU (rx_steered $((s1 - s0)) > 0)" \
	test $((s1 - s0)) -gt 0

ip netns exec $NS_A tc qdisc replace dev va root netem loss 2%
ip netns exec $NS_B tc qdisc replace dev vb root netem loss 2%
s0=$(steered)
kverbs rc_write,rc_send,rc_read size=1048576 iters=4 >&2
ok_if "loss 2%: 1 MiB WRITE, SEND, READ x 4 verified" test $? = 0
diag "loss 2%: steered $(($(steered) - s0)); retransmitted $(hw_counter la retransmits)"
ip netns exec $NS_A tc qdisc del dev va root
ip netns exec $NS_B tc qdisc del dev vb root

# One small message at a time: no backlog, nothing to steer for.
s0=$(steered)
kverbs rc_send size=8 iters=200 >&2
ok_if "200 x 8 B SEND verified" test $? = 0
diag "8 B SENDs: steered $(($(steered) - s0))"

echo 0 > $P/rx_steer
s0=$(steered)
kverbs rc_write size=1048576 iters=8 >&2
ok_if "rx_steer 0: 1 MiB WRITE x 8 verified" test $? = 0
ok_if "rx_steer 0: nothing steered" test "$(steered)" = "$s0"
echo 1 > $P/rx_steer

rdma link delete la
rdma link delete lb
modprobe -r metaroce
tap_done
