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

NQN=nqn.2026-11.invalid.metaroce:nvme-test
TADDR=10.88.0.2
NVMET=/sys/kernel/config/nvmet
DONE_PORT=5557
MIB=16

me=$((VM_INDEX + 1))
peer=$((2 - VM_INDEX))
ip addr add 10.88.0.$me/24 dev eth0
ip link set eth0 up
wait_for 120 ping -c 1 -W 1 10.88.0.$peer >/dev/null
rdma link add m0 type metaroce netdev eth0
wait_for 10 gid_index m0

target_setup() {
	local s=$NVMET/subsystems/$NQN
	modprobe nvmet-rdma || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	# A RAM disk (brd), 32 MiB: keeps what is written.
	modprobe brd rd_nr=1 rd_size=32768 || return 1
	wait_for 10 test -b /dev/ram0 || return 1
	mkdir $s && echo 1 > $s/attr_allow_any_host &&
		mkdir $s/namespaces/1 &&
		echo -n /dev/ram0 > $s/namespaces/1/device_path &&
		echo 1 > $s/namespaces/1/enable &&
		mkdir $NVMET/ports/1 &&
		echo rdma > $NVMET/ports/1/addr_trtype &&
		echo ipv4 > $NVMET/ports/1/addr_adrfam &&
		echo $TADDR > $NVMET/ports/1/addr_traddr &&
		echo 4420 > $NVMET/ports/1/addr_trsvcid &&
		ln -s $s $NVMET/ports/1/subsystems/$NQN
}

target_teardown() {
	local s=$NVMET/subsystems/$NQN
	rm -f $NVMET/ports/1/subsystems/$NQN
	rmdir $NVMET/ports/1 2>/dev/null
	[ -d $s/namespaces/1 ] && echo 0 > $s/namespaces/1/enable
	rmdir $s/namespaces/1 $s 2>/dev/null
	modprobe -r nvmet-rdma nvmet && modprobe -r brd && [ ! -d $s ]
}

# Wait for the host's "done" (or "fail") on TCP port DONE_PORT.
target_wait_host() {
	/usr/bin/python3 - "$DONE_PORT" <<-'EOF'
	import socket, sys
	s = socket.socket()
	s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	s.bind(('', int(sys.argv[1])))
	s.listen(1)
	s.settimeout(700)
	c, _ = s.accept()
	msg = c.recv(16)
	print('# host says: %s' % msg.decode(errors='replace'))
	sys.exit(0 if msg == b'done' else 1)
	EOF
}

host_tell_target() {
	/usr/bin/python3 -c "import socket,sys; socket.create_connection(('$TADDR', $DONE_PORT), 30).sendall(sys.argv[1].encode())" "$1"
}

# The controller of our subsystem (nvmeN), if connected.
host_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = "$NQN" ] &&
			basename "$c" && return 0
	done
	return 1
}

host_connect() {
	local i
	modprobe nvme-rdma || return 1
	# The target may still be setting up: retry.
	for i in $(seq 60); do
		echo "transport=rdma,traddr=$TADDR,trsvcid=4420,nqn=$NQN" \
			> /dev/nvme-fabrics 2>/dev/null && break
		sleep 2
	done
	wait_for 30 host_ctrl
}

# The block device of namespace 1 (nvmeNn1 even with native multipath);
# the VM has no other NVMe device.
host_bdev() {
	local b
	b=$(lsblk -dno NAME | grep -E '^nvme[0-9]+n1$' | head -n 1)
	[ -n "$b" ] && echo "/dev/$b"
}

host_no_ctrl() {
	! host_ctrl >/dev/null
}

host_io() {
	local dev
	wait_for 30 host_bdev
	dev=$(host_bdev) || { diag "no namespace block device"; return 1; }
	diag "namespace: $dev, $(blockdev --getsize64 "$dev") bytes"
	head -c $((MIB << 20)) /dev/urandom > /tmp/pattern || return 1
	dd if=/tmp/pattern of="$dev" bs=1M count=$MIB oflag=direct status=none ||
		return 1
	dd if="$dev" of=/tmp/back bs=1M count=$MIB iflag=direct status=none ||
		return 1
	cmp /tmp/pattern /tmp/back
}

host_disconnect() {
	local c
	c=$(host_ctrl) || return 1
	echo 1 > /sys/class/nvme/$c/delete_controller || return 1
	wait_for 30 host_no_ctrl
}

if ((VM_INDEX == 1)); then
	tap_plan 3
	ok_if "vm1: nvmet-rdma target listens on $TADDR:4420 (MetaRoCE)" target_setup
	ok_if "vm1: the host connected, checked its data and disconnected" target_wait_host
	ok_if "vm1: target torn down, nvmet modules unloaded" target_teardown
else
	tap_plan 3
	ok_if "vm0: nvme-rdma connected to $NQN" host_connect
	ok_if "vm0: $MIB MiB of random data written and read back (O_DIRECT)" host_io
	ok_if "vm0: controller deleted" host_disconnect
	if ((_tap_fail)); then
		host_tell_target fail
	else
		host_tell_target done
	fi
	modprobe -r nvme-rdma nvme-fabrics 2>/dev/null
fi
rdma link delete m0
modprobe -r metaroce
tap_done
