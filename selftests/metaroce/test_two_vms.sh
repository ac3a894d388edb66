#!/bin/bash
# vm: -n 2 -t 600
# Two kernels: two VMs joined by a virtual Ethernet link (tools/vm/run.sh
# -n 2).  Each binds a MetaRoCE device to eth0; UD traffic goes through the
# userspace provider from VM 0 to VM 1 and back.
. "$(dirname "$0")/lib.sh"

me=$((VM_INDEX + 1))
peer=$((2 - VM_INDEX))
tap_plan 3
ip addr add 10.88.0.$me/24 dev eth0
ip link set eth0 up
ok_if "vm$VM_INDEX: the peer VM answers on the virtual link" \
	wait_for 120 ping -c 1 -W 1 10.88.0.$peer
ok_if "vm$VM_INDEX: MetaRoCE device on eth0 is ACTIVE" bash -c \
	'rdma link add m0 type metaroce netdev eth0 && for i in $(seq 50); do
		rdma link show m0/1 | grep -q ACTIVE && exit 0; sleep 0.2; done; exit 1'
wait_for 10 gid_index m0
if ((VM_INDEX == 1)); then
	ok_if "vm1: ibv_ud_pingpong server completed" \
		timeout 300 ibv_ud_pingpong -d m0 -g "$(gid_index m0)" -n 50
else
	# The server needs a moment to listen after its device is up.
	ok_if "vm0: ibv_ud_pingpong client completed" bash -c \
		"for i in \$(seq 60); do ibv_ud_pingpong -d m0 -g $(gid_index m0) -n 50 10.88.0.2 && exit 0; sleep 2; done; exit 1"
fi
rdma link delete m0
modprobe -r metaroce
tap_done
