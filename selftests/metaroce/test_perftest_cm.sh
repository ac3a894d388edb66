#!/bin/bash
# vm: -t 1500
# Unmodified perftest between the two namespaces, connected through rdma_cm
# (-R): every RC test (ib_{send,write,read}_{bw,lat}, ib_atomic_{bw,lat});
# and UD ib_send_{bw,lat}, with and without -R, with four QPs.  Both
# sides must finish without errors and report sane figures: the expected
# iteration count, a positive bandwidth or a finite positive latency.  The
# server's device must have received at least one data packet per message
# and sent no NAK.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/perflib.sh"
tap_plan $((${#RC_TESTS[@]} + 4 + 1))
perf_devices

for t in "${RC_TESTS[@]}"; do
	# shellcheck disable=SC2046
	ok_if "ib_$t -R (rdma_cm)" perf "ib_$t -R" 1 100 ib_$t $(size $t)
done
ok_if "ib_send_bw -c UD" perf "ib_send_bw -c UD" 0 200 ib_send_bw -c UD -s 1024
ok_if "ib_send_lat -c UD" perf "ib_send_lat -c UD" 0 200 ib_send_lat -c UD -s 1024
ok_if "ib_send_bw -c UD -q 4 -R" perf "ib_send_bw -c UD -q 4 -R" 1 100 \
	ib_send_bw -c UD -q 4 -s 512
ok_if "ib_send_lat -c UD -R" perf "ib_send_lat -c UD -R" 1 100 \
	ib_send_lat -c UD -s 512

ok_if "no user objects left" user_objects_gone

rdma link delete ra
rdma link delete rb
modprobe -r metaroce
tap_done
