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

RC_TESTS=(send_bw send_lat write_bw write_lat read_bw read_lat atomic_bw
	  atomic_lat)
tap_plan $((${#RC_TESTS[@]} + 4 + 1))
setup_two_hosts
modprobe rdma_ucm
ip netns exec $NS_A rdma link add ra type metaroce netdev va
ip netns exec $NS_B rdma link add rb type metaroce netdev vb
wait_for 10 gid_index ra
wait_for 10 gid_index rb
. "$(dirname "$0")/perflib.sh"

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

ok_if "no user objects left" bash -c \
	'! rdma res show qp | grep -v "\[ib_core\]" | grep -q . &&
	 ! rdma res show cm_id | grep -q .'

rdma link delete ra
rdma link delete rb
modprobe -r metaroce
tap_done
