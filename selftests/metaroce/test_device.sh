#!/bin/bash
# Device registration: autoload, naming, provider matching, two devices in
# two namespaces, the GSI QP, bad arguments.
. "$(dirname "$0")/lib.sh"

tap_plan 16
setup_two_hosts

ok_if "metaroce is not loaded before the first link add" \
	bash -c '! grep -q "^metaroce " /proc/modules'
ok_if "rdma link add autoloads the module (ns A, name mroce_a)" \
	ip netns exec $NS_A rdma link add mroce_a type metaroce netdev va
ok_if "module is loaded" grep -q "^metaroce " /proc/modules
ok_if "MRC-VRB-003: a device name without any 'mroce' prefix works (ns B, name zz9)" \
	ip netns exec $NS_B rdma link add zz9 type metaroce netdev vb
ok_if "rdma link show lists each device with its netdev in its namespace" bash -c \
	'ip netns exec mra rdma link show | grep -q "^link mroce_a/1 .* netdev va " &&
	 ip netns exec mrb rdma link show | grep -q "^link zz9/1 .* netdev vb "'
ok_if "sysfs metaroce_abi_version and parent" bash -c \
	'[ "$(cat /sys/class/infiniband/zz9/metaroce_abi_version)" = 1 ] &&
	 [ "$(cat /sys/class/infiniband/zz9/parent)" = vb ]'
ok_if "ibv_devices lists both (the provider matched them)" bash -c \
	'l=$(ibv_devices); grep -qw mroce_a <<<"$l" && grep -qw zz9 <<<"$l"'
ok_if "ibv_devinfo -v on a freely named device: port active, vendor part" bash -c \
	'o=$(ibv_devinfo -v -d zz9) && grep -q "PORT_ACTIVE" <<<"$o" &&
	 grep -q "vendor_part_id:.*19794" <<<"$o" && grep -q "max_qp:" <<<"$o" &&
	 grep -q "link_layer:.*Ethernet" <<<"$o"'
ok_if "ibv_devinfo in the other namespace works too" \
	ip netns exec $NS_A ibv_devinfo -d mroce_a
ok_if "ib_mad created the GSI QP (QPN 1) on each device" bash -c \
	'rdma resource show qp link mroce_a/1 | grep -q "lqpn 1 .*type GSI" &&
	 rdma resource show qp link zz9/1 | grep -q "lqpn 1 .*type GSI"'
fails_with "a second link on the same netdev fails with EEXIST" "exists" \
	ip netns exec $NS_A rdma link add again type metaroce netdev va
fails_with "a missing netdev fails cleanly" "" \
	rdma link add nope type metaroce netdev does_not_exist
fails_with "the loopback device is refused with EINVAL" "invalid" \
	rdma link add lo0 type metaroce netdev lo
ip link add tun9 type ipip remote 192.0.2.1 local 192.0.2.2 2>/dev/null
ok_if "a non-Ethernet netdev (ipip) is refused" bash -c \
	'! rdma link add tun0 type metaroce netdev tun9 2>/dev/null && ! [ -e /sys/class/infiniband/tun0 ]'
fails_with "a taken ib device name is refused" "" \
	bash -c 'ip link add dm0 type dummy && rdma link add zz9 type metaroce netdev dm0'
ok_if "the failed attempts left exactly the two devices" bash -c \
	'[ "$(rdma link show | grep -c "^link ")" = 2 ] && [ "$(ls /sys/class/infiniband | wc -l)" = 2 ]'

rdma link delete mroce_a
rdma link delete zz9
modprobe -r metaroce
tap_done
