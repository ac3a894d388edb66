#!/bin/bash
# Every way a device goes away is clean: rdma link delete, netdev deletion,
# netdev moved to another namespace, module unload with devices present.
# The harness fails the test on any kernel error report.
. "$(dirname "$0")/lib.sh"

tap_plan 10
setup_two_hosts
gone() { [ ! -e "/sys/class/infiniband/$1" ]; }

ip netns exec $NS_A rdma link add lc0 type metaroce netdev va
ok_if "rdma link delete removes the device" bash -c \
	'rdma link delete lc0 && ! [ -e /sys/class/infiniband/lc0 ]'
ok_if "the same netdev can be bound again after delete" \
	ip netns exec $NS_A rdma link add lc0 type metaroce netdev va

ip link add dv0 type veth peer name dv1
ip link set dv0 up
rdma link add lc1 type metaroce netdev dv0
ip link del dv0
ok_if "deleting the netdev removes its device" wait_for 10 gone lc1

ip link add mv0 type veth peer name mv1
rdma link add lc2 type metaroce netdev mv0
ip link set mv0 netns $NS_B
ok_if "moving the netdev to another namespace removes its device" wait_for 10 gone lc2
ok_if "the moved netdev can be bound in its new namespace" \
	ip netns exec $NS_B rdma link add lc2 type metaroce netdev mv0

# Starts ibv_asyncwatch on device $2 in namespace $1, output in $3, and
# returns once it has opened the device (it prints its event fd then; a
# loaded host can take seconds to start it).  Its pid is in $watch.
watch_device() {
	ip netns exec "$1" stdbuf -oL ibv_asyncwatch -d "$2" > "$3" 2>&1 &
	watch=$!
	wait_for 20 grep -q "async event FD" "$3"
}
stop_watch() { kill "$watch" 2>/dev/null; wait "$watch" 2>/dev/null; }

delete_with_user() {
	local r

	watch_device mrb lc2 /tmp/aw.txt || { stop_watch; cat /tmp/aw.txt; return 1; }
	timeout 20 rdma link delete lc2
	r=$?
	# DEVICE_FATAL is delivered before the delete returns; its line may
	# still be on its way through the pipe.
	wait_for 5 grep -q DEVICE_FATAL /tmp/aw.txt
	stop_watch
	cat /tmp/aw.txt
	[ $r = 0 ] && gone lc2 && grep -q DEVICE_FATAL /tmp/aw.txt
}
ok_if "a user context open while deleting: delete completes, user sees DEVICE_FATAL" \
	delete_with_user

unload_with_user() {
	local r

	watch_device mra lc0 /tmp/aw0.txt || { stop_watch; cat /tmp/aw0.txt; return 1; }
	timeout 20 modprobe -r metaroce
	r=$?
	stop_watch
	[ $r = 0 ] && gone lc0 && ! grep -q "^metaroce " /proc/modules
}
ok_if "module unload with a device and an open user context removes it" \
	unload_with_user
ok_if "reload and re-add" bash -c \
	'modprobe metaroce && ip netns exec mra rdma link add lc0 type metaroce netdev va &&
	 ip netns exec mrb rdma link add lc3 type metaroce netdev vb'
ok_if "namespace deletion (netdevs destroyed) removes both devices" bash -c \
	'ip netns del mra; ip netns del mrb; for i in $(seq 100); do
		[ -e /sys/class/infiniband/lc0 ] || [ -e /sys/class/infiniband/lc3 ] || exit 0; sleep 0.1; done; exit 1'
ok_if "final unload is clean" modprobe -r metaroce
tap_done
