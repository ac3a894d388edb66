#!/bin/bash
# vm: -t 900
# Multipath over ECMP: two hosts joined by two veth links, each host's
# MetaRoCE address on a dummy device and an ECMP route with the L4 hash
# to the peer's, so a path's UDP source port really picks its link.  A
# connection sprays over both links; when one link silently drops
# everything, its paths move to fresh entropy and the traffic moves to the
# other link with no QP error; every byte is checked (kernel verbs tests).
. "$(dirname "$0")/lib.sh"

A=10.80.0.1
B=10.80.0.2
KV_A=ma KV_B=mb KV_IP_A=$A KV_IP_B=$B
tap_plan 9

ip netns add $NS_A
ip netns add $NS_B
for h in $NS_A $NS_B; do
	ip -n $h link set lo up
	ip netns exec $h sysctl -qw net.ipv4.fib_multipath_hash_policy=1 \
		net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
done
for i in 1 2; do
	ip link add a$i netns $NS_A type veth peer name b$i netns $NS_B
	ip -n $NS_A addr add 10.81.$i.1/24 dev a$i
	ip -n $NS_B addr add 10.81.$i.2/24 dev b$i
	ip -n $NS_A link set a$i up
	ip -n $NS_B link set b$i up
done
ip -n $NS_A link add da type dummy
ip -n $NS_B link add db type dummy
ip -n $NS_A addr add $A/32 dev da
ip -n $NS_B addr add $B/32 dev db
ip -n $NS_A link set da up
ip -n $NS_B link set db up
ip -n $NS_A route add $B/32 src $A nexthop via 10.81.1.2 dev a1 nexthop via 10.81.2.2 dev a2
ip -n $NS_B route add $A/32 src $B nexthop via 10.81.1.1 dev b1 nexthop via 10.81.2.1 dev b2

# Eight paths: with random entropy all of them hash onto one of the two
# links with probability 1/128; such a connection is set up again (below).
modprobe metaroce
echo 8 > /sys/module/metaroce/parameters/paths_per_plane
links_add() {
	ip netns exec $NS_A rdma link add ma type metaroce netdev da &&
		ip netns exec $NS_B rdma link add mb type metaroce netdev db
}
links_del() {
	ip netns exec $NS_A rdma link delete ma
	ip netns exec $NS_B rdma link delete mb
}
links_add

cnt() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }
# txp NS DEV: packets DEV has sent.
# share_ok BEFORE1 BEFORE2: both of host A's links sent at least a fifth
# of what A sent since the BEFORE counts.
share_ok() {
	local d1=$(( $(txp $NS_A a1) - $1 )) d2=$(( $(txp $NS_A a2) - $2 ))
	diag "a1 sent $d1 packets, a2 sent $d2"
	(( d1 * 5 >= d1 + d2 && d2 * 5 >= d1 + d2 ))
}

ok_if "each device has its dummy address as a GID" gid_index ma

# spread_run: a byte-checked transfer on a connection, then whether it
# used both links.  The ECMP hash is not the endpoint's to choose: if
# every path's entropy landed on one link, a new connection (fresh random
# entropy) is tried, at most three in all.  A transport that does not
# spray fails all three.
spread_run() {
	local try t1 t2
	for try in 1 2 3; do
		t1=$(txp $NS_A a1) t2=$(txp $NS_A a2)
		kverbs rc_send,rc_write,rc_read,rc_atomic size=262144 || return 1
		share_ok "$t1" "$t2" && return 0
		diag "connection $try: every path hashed onto one link; new connection"
		links_del && links_add || return 1
	done
	return 2
}
spread_run > /tmp/mp-spread.log 2>&1
rc=$?
diag "$(cat /tmp/mp-spread.log)"
ok_if "RC traffic over ECMP: SEND/WRITE/READ/ATOMIC, every byte" test $rc -ne 1
ok_if "one connection's paths are spread over both links" test $rc -eq 0
ok_if "eight ACTIVE paths per connection" \
	bash -c "[ \$(cat /sys/class/infiniband/ma/ports/1/hw_counters/paths_active) -eq 8 ]"

# Link 2 turns into a black hole in both directions.
reroutes0=$(cnt ma path_reroutes)
# The connection and its paths live on between the runs: the link dies
# under established paths (on a fast host a transfer could end before a
# fault injected after its start).
ip netns exec $NS_A tc qdisc add dev a2 root netem loss 100%
ip netns exec $NS_B tc qdisc add dev b2 root netem loss 100%
kverbs rc_many iters=6000 > /tmp/mp-many.log 2>&1 &
pid=$!
wait $pid
rc=$?
ok_if "black-holed link under live paths: 6000 WRs complete, every byte, no QP error" \
	test $rc -eq 0
[ $rc -eq 0 ] || diag "$(cat /tmp/mp-many.log)"
ok_if "paths on the dead link moved to fresh entropy" \
	bash -c "(( \$(cat /sys/class/infiniband/ma/ports/1/hw_counters/path_reroutes) + \
		   \$(cat /sys/class/infiniband/mb/ports/1/hw_counters/path_reroutes) > $reroutes0 ))"
counters() {
	local d
	for d in ma mb; do
		diag "$d: $(cd /sys/class/infiniband/$d/ports/1/hw_counters && grep -H . path_reroutes path_suspect path_failed rto_timeouts tlp_probes probes_sent retransmits paths_active | tr '\n' ' ')"
	done
}
counters

# With link 2 still dead, new traffic flows over link 1 only.
d1=$(qdisc_dropped $NS_A a2)
t1=$(txp $NS_A a1)
ok_if "while the link is dead: 1 MiB SEND/WRITE/READ, every byte" \
	kverbs rc_send,rc_write,rc_read size=1048576
d2=$(qdisc_dropped $NS_A a2)
moved=$(( $(txp $NS_A a1) - t1 ))
diag "link 1 carried $moved packets; the dead link swallowed $((d2 - d1))"
ok_if "traffic left the dead link (it got under 5% of the packets)" \
	test $(( (d2 - d1) * 20 )) -lt "$moved"
counters

# Healed: traffic still flows, and nothing broke.
ip netns exec $NS_A tc qdisc del dev a2 root
ip netns exec $NS_B tc qdisc del dev b2 root
ok_if "link healed: RC traffic, every byte" kverbs rc_send,rc_write size=262144

links_del
tap_done
