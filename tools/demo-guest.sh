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
echo "(traffic between the hosts comes with the data path; see README)"
rdma link delete mroce_a
rdma link delete mroce_b
modprobe -r metaroce
