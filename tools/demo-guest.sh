#!/bin/bash
# The demo, inside the VM: two hosts (network namespaces joined by a veth
# pair), one MetaRoCE device each, shown the way a user sees them.
set -eu
. selftests/metaroce/lib.sh
setup_two_hosts
ip netns exec $NS_A rdma link add mroce_a type metaroce netdev va
ip netns exec $NS_B rdma link add mroce_b type metaroce netdev vb
show() { echo; echo "\$ $*"; "$@"; }
echo "== host A (netns $NS_A, $IP_A) =="
show ip netns exec $NS_A rdma link show
show ip netns exec $NS_A ibv_devices
show ip netns exec $NS_A ibv_devinfo -d mroce_a
echo "GIDs of mroce_a:"; ibdev_gids mroce_a
echo
echo "== host B (netns $NS_B, $IP_B) =="
show ip netns exec $NS_B rdma link show
show ip netns exec $NS_B ibv_devinfo -d mroce_b
echo "GIDs of mroce_b:"; ibdev_gids mroce_b

echo
echo "== UD through the userspace provider: ibv_ud_pingpong B <- A =="
wait_for 10 gid_index mroce_a
wait_for 10 gid_index mroce_b
ip netns exec $NS_B ibv_ud_pingpong -d mroce_b -g "$(gid_index mroce_b)" -n 100 &
srv=$!
wait_for 20 bash -c "ip netns exec $NS_B ss -ltnH | grep -q ':18515 '"
ip netns exec $NS_A ibv_ud_pingpong -d mroce_a -g "$(gid_index mroce_a)" -n 100 $IP_B
wait $srv

echo
echo "== RC from a kernel verbs consumer, every byte checked =="
insmod selftests/metaroce/kverbs/mroce_kverbs.ko dev_a=mroce_a dev_b=mroce_b \
	ip_a=$IP_A ip_b=$IP_B tests=rc_send,rc_write,rc_read,rc_atomic
rmmod mroce_kverbs
dmesg | grep 'mroce_kverbs: .*ok' | sed 's/^\[[^]]*\] //'

echo
echo "== counters of mroce_a =="
rdma statistic show link mroce_a/1 | tr ' ' '\n' | paste - - |
	awk '$2 != 0' | grep -E 'tx_|rx_|ack|conn_est|ud_' | column -t
rdma link delete mroce_a
rdma link delete mroce_b
modprobe -r metaroce
