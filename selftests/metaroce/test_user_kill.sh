#!/bin/bash
# A process with QPs, CQs, MRs and AHs and mapped rings dies by SIGKILL in
# the middle of a UD stream: the kernel releases everything (rdma res show
# is back to the kernel's own objects) and the module unloads.  Same when
# the device is deleted under a streaming process.
. "$(dirname "$0")/lib.sh"

tap_plan 9
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
sleep 2
if kill -0 $pid 2>/dev/null; then
	kill -9 $pid
	wait $pid 2>/dev/null
	ok_if "the process outlives the device's removal" true
else
	wait $pid
	rc=$?
	diag "$(cat /tmp/stream.out)"
	ok_if "the process ended on a verbs error, not a signal (status $rc)" \
		test $rc -gt 0 -a $rc -lt 128
fi
ok_if "mrb0's objects are released too" wait_for 30 bash -c \
	"rdma res show | grep -q 'mrb0: pd 1 cq 1 qp 1 cm_id 0 mr 0 ctx 0'"

rdma link delete mrb0
ok_if "module unloads" modprobe -r metaroce
tap_done
