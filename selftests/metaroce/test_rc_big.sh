#!/bin/bash
# vm: -t 1500 -m 5632
# Messages of max_msg_sz (2 GiB) between two namespaces (progs/rc_big.c):
# one RDMA WRITE, one RDMA READ and one SEND of 2 GiB each, every byte
# checked, then a SEND of 2 GiB + 1 byte that completes with
# IBV_WC_LOC_LEN_ERR.  The veth runs with a 9000-byte MTU so that the
# devices' active MTU, and the QPs' path MTU, is 4096.  The VM has 5.5 GiB:
# both 2 GiB buffers are pinned in one process.
. "$(dirname "$0")/lib.sh"

tap_plan 4
setup_two_hosts
ip -n $NS_A link set va mtu 9000
ip -n $NS_B link set vb mtu 9000
add_devices ra rb

ok_if "build rc_big" build_prog rc_big
mtu4096() { ibv_devinfo -d "$1" | grep -q 'active_mtu:.*4096'; }
ok_if "active MTU 4096 on both devices" bash -c \
	"$(declare -f mtu4096); mtu4096 ra && mtu4096 rb"
log=/tmp/rc_big.log
ip netns exec $NS_A /tmp/rc_big ra rb > $log 2>&1
rc=$?
diag "$(cat $log)"
ok_if "2 GiB WRITE, READ and SEND, every byte; 2 GiB + 1 fails with LOC_LEN_ERR" \
	test $rc -eq 0
# few_resends: the two devices resent at most 1% of their data packets.
few_resends() {
	local r t
	r=$(( $(hw_counter ra retransmits) + $(hw_counter rb retransmits) ))
	t=$(( $(hw_counter ra tx_data_packets) + $(hw_counter rb tx_data_packets) ))
	diag "$r retransmissions of $t data packets"
	(( r * 100 <= t ))
}
ok_if "no retransmission storm: at most 1% of the data packets resent" \
	few_resends

rdma link delete ra
rdma link delete rb
modprobe -r metaroce
tap_done
