#!/bin/bash
# Queue pairs through the userspace provider without RC traffic: an RC QP
# moved RESET -> INIT -> RTR -> RTS -> ERR -> RESET twice with query_qp
# checks and the posting rules, and many QPs of assorted sizes.
. "$(dirname "$0")/lib.sh"

tap_plan 3
setup_two_hosts
ip netns exec $NS_A rdma link add mra0 type metaroce netdev va
ip netns exec $NS_B rdma link add mrb0 type metaroce netdev vb
wait_for 10 bash -c 'grep -q ffff /sys/class/infiniband/mr[ab]0/ports/1/gids/*'

for t in states many; do
	ok_if "pyverbs: RC $t" timeout 240 /usr/bin/python3 \
		selftests/metaroce/pyverbs/rc_user.py "$t" mra0 mrb0
done
ok_if "no user objects left" bash -c \
	'rdma res show | grep -q "mra0: pd 1 cq 1 qp 1 cm_id 0 mr 0 ctx 0" &&
	 rdma res show | grep -q "mrb0: pd 1 cq 1 qp 1 cm_id 0 mr 0 ctx 0"'

rdma link delete mra0
rdma link delete mrb0
modprobe -r metaroce
tap_done
