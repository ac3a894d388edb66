#!/bin/bash
# vm: -t 1200
# Planes (spec 7.1, 7.9) through the metaroce tool: hosts mra and mrb
# joined by two veth pairs (va/vb 10.77.0.x and va2/vb2 10.77.1.x), the
# devices on va/vb and va2/vb2 added as plane 1 before any connection.  RC
# traffic uses both pairs; taking va2 down mid-transfer costs no QP error
# (every byte checked by the kverbs module) and fails the plane-1 paths;
# bringing it up makes them ACTIVE and carry traffic again.  The port stays
# ACTIVE while either plane is up.  Plane add/del errors: twice, on two
# devices, not a plane, a ninth plane.
. "$(dirname "$0")/lib.sh"

tap_plan 23

need_mr_tool

setup_two_hosts
add_second_pair 10.77.1.1/24 10.77.1.2/24
ip -n $NS_A link set va2 up
ip -n $NS_B link set vb2 up
# a third pair, for a second device in mra
ip link add va3 netns $NS_A type veth peer name vb3 netns $NS_B
ip -n $NS_A link set va3 up
ip -n $NS_B link set vb3 up
add_devices la lb
ip netns exec $NS_A rdma link add lc type metaroce netdev va3

# both_grew A1 A2: va and va2 each sent at least a fifth of what both sent.
both_grew() {
	local d1=$(( $(txp $NS_A va) - $1 )) d2=$(( $(txp $NS_A va2) - $2 ))
	diag "va sent $d1 packets, va2 sent $d2"
	(( d1 > 100 && d2 > 100 && d1 * 5 >= d1 + d2 && d2 * 5 >= d1 + d2 ))
}
# flows_again A1 A2: va2 carries data again: over 200 packets and at least
# a twentieth of what both sent (healed paths restart from the initial
# window, so they get less than an even share of a short transfer).
flows_again() {
	local d1=$(( $(txp $NS_A va) - $1 )) d2=$(( $(txp $NS_A va2) - $2 ))
	diag "va sent $d1 packets, va2 sent $d2"
	(( d2 > 200 && d2 * 20 >= d1 + d2 ))
}
show_all() {
	diag "$(mra show la)"
	diag "$(cd /sys/class/infiniband/la/ports/1/hw_counters 2>/dev/null && grep -H . path_* paths_active retransmits rto_timeouts 2>/dev/null | tr '\n' ' ')"
}

ok_if "plane add la va2 (before any connection)" mra plane add la va2
ok_if "plane add lb vb2" mrb plane add lb vb2
ok_if "show lists plane 1 va2, up" bash -c "ip netns exec $NS_A $MR show la | grep -q 'plane 1: va2 .* up'"
fails_with "the same plane twice: EEXIST" "already serves" mra plane add la va2
fails_with "one netdev on two devices: EEXIST" "already serves" mra plane add lc va2
fails_with "a device's own netdev as a plane: EEXIST" "already serves" mra plane add lc va

a1=$(txp $NS_A va) a2=$(txp $NS_A va2)
ok_if "RC SEND/WRITE/READ 1 MiB and rc_many over two planes, every byte" \
	kverbs rc_send,rc_write,rc_read,rc_many size=1048576
ok_if "traffic used both veth pairs" both_grew "$a1" "$a2"
show_all
ok_if "show: ACTIVE paths on plane 0 and on plane 1" \
	bash -c "[ \$(ip netns exec $NS_A $MR show la | grep -c '^    path [0-9]* plane 0 ACTIVE ') -ge 1 ] &&
		 [ \$(ip netns exec $NS_A $MR show la | grep -c '^    path [0-9]* plane 1 ACTIVE ') -ge 1 ]"

# va2 goes down in the middle of a transfer.
t0=$(txp $NS_A va2)
kverbs rc_many iters=5000 > /tmp/planes-many.log 2>&1 &
pid=$!
# Mid-transfer: once va2 carried some of it (not after a fixed time: the
# module's setup takes seconds on a loaded host).
va2_busy() { (($(txp $NS_A va2) > t0 + 200)); }
mid=0
wait_for 60 va2_busy && kill -0 $pid 2>/dev/null && mid=1
ip -n $NS_A link set va2 down
wait $pid
rc=$?
ok_if "va2 down mid-transfer: 5000 WRs complete, every byte, no QP error" test $rc -eq 0
ok_if "va2 went down while the transfer used it" test $mid = 1
[ $rc -eq 0 ] || diag "$(cat /tmp/planes-many.log)"
show_all
ok_if "the plane-1 paths are FAILED" plane_all $NS_A la 1 FAILED

ip -n $NS_A link set va2 up
# paths_active PLANE: la's connection has paths on PLANE (a grep pattern),
# all ACTIVE.
paths_active() { plane_all $NS_A la "$1" ACTIVE; }
ok_if "va2 up: the plane-1 paths are ACTIVE again" wait_for 60 paths_active 1
show_all
a1=$(txp $NS_A va) a2=$(txp $NS_A va2)
ok_if "after the plane healed: RC WRITE/READ 1 MiB, every byte" \
	kverbs rc_write,rc_read size=1048576
ok_if "traffic flows over va2 again" flows_again "$a1" "$a2"

# The port is ACTIVE while any plane is up (MRC-PATH-035).
port_is() { [ "$(port_state la)" = "$1" ]; }
ip -n $NS_A link set va down
sleep 1
ok_if "va (plane 0) down, va2 up: port la still ACTIVE" port_is ACTIVE
ip -n $NS_A link set va2 down
ok_if "both planes down: port la DOWN" wait_for 5 port_is DOWN
ip -n $NS_A link set va2 up
ok_if "va2 up again: port la ACTIVE" wait_for 5 port_is ACTIVE
ip -n $NS_A link set va up
# every path of la's connection ACTIVE again before the next transfer
wait_for 60 paths_active '[0-9]*' || diag "not every path ACTIVE: $(mra show la)"

ok_if "plane del la va2" mra plane del la va2
fails_with "plane del of a netdev that is not a plane" "not a plane" \
	mra plane del la va2
ok_if "without plane 1: RC SEND 1 MiB, every byte" kverbs rc_send size=1048576
show_all

# Eight planes per device (MRC-PATH-001): lc takes seven more, not eight.
for i in 0 1 2 3 4 5 6 7; do
	ip -n $NS_A link add px$i type veth peer name py$i
done
add_seven() {
	local i
	for i in 0 1 2 3 4 5 6; do mra plane add lc px$i || return 1; done
	mra show lc | grep -q 'plane 7: px6 '
}
ok_if "planes 1 to 7 on one device" add_seven
fails_with "a ninth netdev: refused" "already has 8 planes" \
	mra plane add lc px7

ip netns exec $NS_A rdma link delete lc
ip netns exec $NS_A rdma link delete la
ip netns exec $NS_B rdma link delete lb
tap_done
