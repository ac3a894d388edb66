#!/bin/bash
# vm: -t 600
# A plane that comes up after the connection was made (spec 7.9,
# MRC-PATH-037): hosts mra and mrb joined by two veth pairs (va/vb
# 10.77.0.x, va2/vb2 10.77.1.x), va2 and vb2 added as plane 1 but down
# when the devices connect, so no peer address is reachable through plane
# 1 and the connection gets no paths there.  When the pair comes up, the
# established connection must pair plane 1 and create paths on it, which
# go ACTIVE and carry traffic (every byte checked by the kverbs module).
. "$(dirname "$0")/lib.sh"

tap_plan 7

need_mr_tool

setup_two_hosts
add_second_pair 10.77.1.1/24 10.77.1.2/24
add_devices la lb

ns_of() { [ "$1" = la ] && echo $NS_A || echo $NS_B; }
# plane1_active DEV: DEV's connection has paths on plane 1, all ACTIVE.
plane1_active() { plane_all "$(ns_of "$1")" "$1" 1 ACTIVE; }

mra plane add la va2
mrb plane add lb vb2
ok_if "connection made with plane 1 down: RC SEND 64 KiB, every byte" \
	kverbs rc_send size=65536
ok_if "no path on plane 1 on either side" \
	test "$(paths_on $NS_A la 1)" -eq 0 -a "$(paths_on $NS_B lb 1)" -eq 0

ip -n $NS_A link set va2 up
ip -n $NS_B link set vb2 up
ok_if "plane 1 up: la's connection has paths on it, all ACTIVE" \
	wait_for 30 plane1_active la
ok_if "plane 1 up: lb's connection has paths on it, all ACTIVE" \
	wait_for 30 plane1_active lb
diag "$(mra show la)"
a2=$(txp $NS_A va2) b2=$(txp $NS_B vb2)
ok_if "RC WRITE/READ 1 MiB over both planes, every byte" \
	kverbs rc_write,rc_read size=1048576
ok_if "va2 and vb2 carried the traffic's packets" \
	test $(($(txp $NS_A va2) - a2)) -gt 100 -a $(($(txp $NS_B vb2) - b2)) -gt 100
diag "va2 sent $(($(txp $NS_A va2) - a2)), vb2 sent $(($(txp $NS_B vb2) - b2))"

ip netns exec $NS_A rdma link delete la
ip netns exec $NS_B rdma link delete lb
ok_if "module unloads" modprobe -r metaroce
tap_done
