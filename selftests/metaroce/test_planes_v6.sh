#!/bin/bash
# vm: -t 900
# Planes over IPv6 (spec 7.1, MRC-PATH-004): hosts mra and mrb joined by
# va/vb (fd77::x, and 10.77.0.x) and va2/vb2 (fd78::x only), plus va3/vb3
# with IPv4 addresses only.  va2/vb2 are plane 1, va3/vb3 plane 2.  A
# connection between the devices' IPv6 GIDs puts paths on plane 1 and none
# on plane 2 (no IPv6 address there); ibv_rc_pingpong with every byte
# checked uses both IPv6 pairs; va2 taken down mid-transfer costs no error
# and fails the plane-1 paths; brought up, they are ACTIVE and carry data.
. "$(dirname "$0")/lib.sh"

tap_plan 12

need_mr_tool

setup_two_hosts
add_second_pair "fd78::1/64 nodad" "fd78::2/64 nodad"
ip link add va3 netns $NS_A type veth peer name vb3 netns $NS_B
ip -n $NS_A addr add 10.77.2.1/24 dev va3
ip -n $NS_B addr add 10.77.2.2/24 dev vb3
# Linux flushes an interface's IPv6 addresses when it goes down, unless
# told to keep them: va2 goes down and up below.
ip netns exec $NS_A sysctl -qw net.ipv6.conf.va2.keep_addr_on_down=1
ip netns exec $NS_B sysctl -qw net.ipv6.conf.vb2.keep_addr_on_down=1
for l in va2 va3; do ip -n $NS_A link set $l up; done
for l in vb2 vb3; do ip -n $NS_B link set $l up; done
add_devices la lb


# gid6_index DEV: the index of DEV's GID fd77::N.
gid6_index() {
	local f
	f=$(grep -l '^fd77:' /sys/class/infiniband/"$1"/ports/1/gids/* \
		2>/dev/null | head -n 1)
	[ -n "$f" ] && basename "$f"
}

# pp6 LOG ARGS...: ibv_rc_pingpong -c between la and lb over their IPv6
# GIDs (server in B), both sides must finish.  The tool exchanges QP
# numbers over TCP on IPv4 (its server listens on the first address
# family getaddrinfo gives); the RDMA traffic uses the IPv6 GIDs.
pp6() {
	local log=$1 rc=0 pid
	shift
	ip netns exec $NS_B timeout 200 ibv_rc_pingpong -d lb \
		-g "$(gid6_index lb)" -c "$@" > "$log.srv" 2>&1 &
	pid=$!
	wait_for 20 bash -c "ip netns exec $NS_B ss -ltnH | grep -q ':18515 '" ||
		rc=1
	if ((rc == 0)); then
		ip netns exec $NS_A timeout 200 ibv_rc_pingpong -d la \
			-g "$(gid6_index la)" -c "$@" $IP_B > "$log" 2>&1 || rc=1
	fi
	((rc)) && kill $pid 2>/dev/null	# a server nobody connects to
	wait $pid || rc=1
	if ((rc)) || ! grep -q 'iters in' "$log" ||
	   ! grep -q 'iters in' "$log.srv"; then
		echo "client:"; cat "$log"; echo "server:"; cat "$log.srv"
		return 1
	fi
	grep 'iters in' "$log"
}

# paths PLANE [STATE]: paths of la's IPv6 connection to lb on PLANE (in
# STATE).
V6CONN="fd77::1 -> fd77::2"
paths() { paths_on $NS_A la "$1" "${2:-}" "$V6CONN"; }
# grew A1 A2 MIN: va and va2 each sent at least MIN packets and a
# twentieth of what both sent since A1, A2.
grew() {
	local d1=$(( $(txp $NS_A va) - $1 )) d2=$(( $(txp $NS_A va2) - $2 ))
	diag "va sent $d1 packets, va2 sent $d2"
	(( d1 >= $3 && d2 >= $3 && d1 * 20 >= d1 + d2 && d2 * 20 >= d1 + d2 ))
}
show_all() { diag "$(mra show la)"; }

ok_if "plane add la va2, la va3" bash -c \
	"ip netns exec $NS_A $MR plane add la va2 &&
	 ip netns exec $NS_A $MR plane add la va3"
ok_if "plane add lb vb2, lb vb3" bash -c \
	"ip netns exec $NS_B $MR plane add lb vb2 &&
	 ip netns exec $NS_B $MR plane add lb vb3"

a1=$(txp $NS_A va) a2=$(txp $NS_A va2)
ok_if "ibv_rc_pingpong -c 64 KiB x 200 between the IPv6 GIDs" \
	pp6 /tmp/pl6-a -s 65536 -n 200
show_all
both_active() { (( $(paths 0 ACTIVE) >= 1 && $(paths 1 ACTIVE) >= 1 )); }
ok_if "the IPv6 connection has ACTIVE paths on plane 0 and plane 1" both_active
ok_if "no path of the IPv6 connection on the IPv4-only plane 2" \
	test "$(paths 2)" -eq 0
ok_if "traffic used both IPv6 veth pairs" grew "$a1" "$a2" 100

# va2 goes down in the middle of a transfer.
t0=$(txp $NS_A va2)
pp6 /tmp/pl6-b -s 65536 -n 600 > /tmp/pl6-b.out 2>&1 &
pid=$!
# Mid-transfer: once va2 carried some of it (the pingpong server's start
# alone can take seconds on a loaded host).
va2_busy() { (($(txp $NS_A va2) > t0 + 200)); }
mid=0
wait_for 60 va2_busy && kill -0 $pid 2>/dev/null && mid=1
ip -n $NS_A link set va2 down
wait $pid
rc=$?
ok_if "va2 down mid-transfer: 600 round trips complete, every byte" \
	test $rc -eq 0
ok_if "va2 went down while the transfer used it" test $mid = 1
[ $rc -eq 0 ] || diag "$(cat /tmp/pl6-b.out)"
show_all
allin() { plane_all $NS_A la 1 "$1" "$V6CONN"; }	# every plane-1 path in STATE
ok_if "the plane-1 paths are FAILED" allin FAILED

ip -n $NS_A link set va2 up
ok_if "va2 up: the plane-1 paths are ACTIVE again" wait_for 60 allin ACTIVE
a1=$(txp $NS_A va) a2=$(txp $NS_A va2)
ok_if "after the plane healed: ibv_rc_pingpong -c 64 KiB x 300" \
	pp6 /tmp/pl6-c -s 65536 -n 300
ok_if "traffic flows over va2 again" grew "$a1" "$a2" 100
show_all

ip netns exec $NS_A rdma link delete la
ip netns exec $NS_B rdma link delete lb
tap_done
