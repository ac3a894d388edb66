#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# NVMe over Fabrics (RDMA) between two VMs, sourced by test_nvme_rdma.sh and
# the two-VM benchmark (tools/bench/guest-2vm.sh).  The caller sets NQN,
# TADDR (the target's address) and DONE_PORT, and provides wait_for.
#
# nvme-rdma and nvmet-rdma open their rdma_cm IDs in the initial network
# namespace, and rdma_cm picks the RDMA device by address: the VM that
# runs a case has exactly one RDMA device on the address's netdev.
# The target exports a 32 MiB RAM disk (brd); the host connects through
# /dev/nvme-fabrics (what `nvme connect` writes).  A TCP message on
# DONE_PORT tells the target that the host is done.
NVMET=/sys/kernel/config/nvmet

nvme_target_setup() {
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
		echo "$TADDR" > $NVMET/ports/1/addr_traddr &&
		echo 4420 > $NVMET/ports/1/addr_trsvcid &&
		ln -s $s $NVMET/ports/1/subsystems/$NQN
}

nvme_target_teardown() {
	local s=$NVMET/subsystems/$NQN
	rm -f $NVMET/ports/1/subsystems/$NQN
	rmdir $NVMET/ports/1 2>/dev/null
	[ -d $s/namespaces/1 ] && echo 0 > $s/namespaces/1/enable
	rmdir $s/namespaces/1 $s 2>/dev/null
	modprobe -r nvmet-rdma nvmet && modprobe -r brd && [ ! -d $s ]
}

# Wait for the host's "done" (or "fail") on TCP port DONE_PORT.
nvme_target_wait_host() {
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

# nvme_host_tell_target done|fail; the target may still be tearing down
# the previous case: retry for 60 s.
nvme_host_tell_target() {
	/usr/bin/python3 - "$TADDR" "$DONE_PORT" "$1" <<-'EOF'
	import socket, sys, time
	end = time.time() + 60
	while True:
	    try:
	        socket.create_connection((sys.argv[1], int(sys.argv[2])), 30).sendall(sys.argv[3].encode())
	        break
	    except OSError:
	        if time.time() > end:
	            raise
	        time.sleep(1)
	EOF
}

# The controller of our subsystem (nvmeN), if connected.
nvme_host_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = "$NQN" ] &&
			basename "$c" && return 0
	done
	return 1
}

nvme_host_connect() {
	local i
	modprobe nvme-rdma || return 1
	# The target may still be setting up: retry.
	for i in $(seq 60); do
		echo "transport=rdma,traddr=$TADDR,trsvcid=4420,nqn=$NQN" \
			> /dev/nvme-fabrics 2>/dev/null && break
		sleep 2
	done
	wait_for 30 nvme_host_ctrl
}

# The block device of namespace 1 (nvmeNn1 even with native multipath);
# the VM has no other NVMe device.
nvme_host_bdev() {
	local b
	b=$(lsblk -dno NAME | grep -E '^nvme[0-9]+n1$' | head -n 1)
	[ -n "$b" ] && echo "/dev/$b"
}

nvme_host_no_ctrl() {
	! nvme_host_ctrl >/dev/null
}

nvme_host_disconnect() {
	local c
	c=$(nvme_host_ctrl) || return 1
	echo 1 > /sys/class/nvme/"$c"/delete_controller || return 1
	wait_for 30 nvme_host_no_ctrl
}
