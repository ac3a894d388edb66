#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# vm: -n 2 -t 900
#
# A kernel ULP end to end: NVMe over Fabrics over MetaRoCE, unmodified.
# nvme-rdma and nvmet-rdma open their rdma_cm IDs in the initial network
# namespace, so host and target are two kernels (two VMs on a virtual
# link), each with a MetaRoCE device on eth0.  VM 1 is the target: nvmet
# with a 32 MiB RAM disk (brd) namespace on an RDMA port.  VM 0 is the host:
# it connects through /dev/nvme-fabrics (what `nvme connect` writes),
# writes 16 MiB of random data with O_DIRECT, reads it back and compares
# every byte, then disconnects.  Both tear down cleanly (the VM bench fails
# the test on any kernel error report).  A TCP message tells the target
# that the host is done.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/nvmelib.sh"

NQN=nqn.2026-11.invalid.metaroce:nvme-test
TADDR=10.88.0.2
DONE_PORT=5557
MIB=16

me=$((VM_INDEX + 1))
peer=$((2 - VM_INDEX))
ip addr add 10.88.0.$me/24 dev eth0
ip link set eth0 up
wait_for 120 ping -c 1 -W 1 10.88.0.$peer >/dev/null
rdma link add m0 type metaroce netdev eth0
wait_for 10 gid_index m0

host_io() {
	local dev
	wait_for 30 nvme_host_bdev
	dev=$(nvme_host_bdev) || { diag "no namespace block device"; return 1; }
	diag "namespace: $dev, $(blockdev --getsize64 "$dev") bytes"
	head -c $((MIB << 20)) /dev/urandom > /tmp/pattern || return 1
	dd if=/tmp/pattern of="$dev" bs=1M count=$MIB oflag=direct status=none ||
		return 1
	dd if="$dev" of=/tmp/back bs=1M count=$MIB iflag=direct status=none ||
		return 1
	cmp /tmp/pattern /tmp/back
}

if ((VM_INDEX == 1)); then
	tap_plan 3
	ok_if "vm1: nvmet-rdma target listens on $TADDR:4420 (MetaRoCE)" nvme_target_setup
	ok_if "vm1: the host connected, checked its data and disconnected" nvme_target_wait_host
	ok_if "vm1: target torn down, nvmet modules unloaded" nvme_target_teardown
else
	tap_plan 3
	ok_if "vm0: nvme-rdma connected to $NQN" nvme_host_connect
	ok_if "vm0: $MIB MiB of random data written and read back (O_DIRECT)" host_io
	ok_if "vm0: controller deleted" nvme_host_disconnect
	if ((_tap_fail)); then
		nvme_host_tell_target fail
	else
		nvme_host_tell_target "done"
	fi
	modprobe -r nvme-rdma nvme-fabrics 2>/dev/null
fi
rdma link delete m0
modprobe -r metaroce
tap_done
