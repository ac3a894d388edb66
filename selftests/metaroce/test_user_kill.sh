#!/bin/bash
# A process with QPs, CQs, MRs and AHs and mapped rings dies by SIGKILL in
# the middle of a UD stream: the kernel releases everything (rdma res show
# is back to the kernel's own objects) and the module unloads.  Same when
# the device is deleted under a streaming process, and when its netdev is.
. "$(dirname "$0")/lib.sh"

tap_plan 12
setup_two_hosts
add_devices mra0 mrb0

STREAM=/tmp/ud_stream
ok_if "build ud_stream" build_prog ud_stream

summary() { rdma res show | sed 's/^[0-9]*: //' | sort; }
base=$(summary)
diag "before: $base"

# start: run the stream forever with extra objects in the background.
start() {
	rm -f /tmp/stream.out
	$STREAM -k -n 0 mra0 mrb0 > /tmp/stream.out 2>&1 &
	pid=$!
}
# ended_cleanly: the stream process still runs (then killed) or ended on
# a verbs error, never by a signal.
ended_cleanly() {
	local rc
	sleep 2
	if kill -0 $pid 2>/dev/null; then
		kill -9 $pid
		wait $pid 2>/dev/null
		return 0
	fi
	wait $pid
	rc=$?
	diag "$(cat /tmp/stream.out)"
	test $rc -gt 0 -a $rc -lt 128
}
user_qps() { rdma res show qp | grep -c "pid $1"; }
back_to_base() { [ "$(summary)" = "$base" ] && [ "$(user_qps "$1")" = 0 ]; }

start
ok_if "the stream runs" wait_for 60 grep -q ready /tmp/stream.out
ok_if "its QPs are visible (rdma res show qp)" bash -c "[ \$(rdma res show qp | grep -c 'pid $pid') -ge 10 ]"
sleep 1
kill -9 $pid
wait $pid 2>/dev/null
ok_if "after SIGKILL the kernel released every object" wait_for 30 back_to_base $pid
diag "after: $(summary)"

# Again, and delete a device under the running process instead.
start
ok_if "the stream runs again" wait_for 60 grep -q ready /tmp/stream.out
ok_if "rdma link delete under a streaming process completes" \
	timeout 60 rdma link delete mra0
# It either still runs (its rings stay mapped, the kernel just stopped
# serving them) or it stopped on an error from a verb: never by a signal.
ok_if "the process outlived the removal or ended on a verbs error" \
	ended_cleanly
ok_if "mrb0's objects are released too" wait_for 30 bash -c \
	"rdma res show | grep -q 'mrb0: pd 1 cq 1 qp 1 cm_id 0 mr 0 ctx 0'"

# Once more, and delete the netdevs (the veth pair) under it.
ip netns exec $NS_A rdma link add mra0 type metaroce netdev va
wait_for 10 gid_index mra0
start
ok_if "the stream runs a third time" wait_for 60 grep -q ready /tmp/stream.out
both_gone() { ! [ -e /sys/class/infiniband/mra0 ] && ! [ -e /sys/class/infiniband/mrb0 ]; }
del_netdev() { ip -n $NS_A link del va && wait_for 30 both_gone; }
ok_if "netdev deleted under a streaming process: both devices go" del_netdev
ok_if "the process outlived it or ended on a verbs error" ended_cleanly

ok_if "module unloads (every object released)" modprobe -r metaroce
tap_done
