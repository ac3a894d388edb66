#!/bin/bash
# Hostile input: malformed MetaRoCE packets are dropped and counted by
# reason (spec 4.7, 5.7, 14.3), never trusted; the device keeps working.
. "$(dirname "$0")/lib.sh"

tap_plan 10
setup_two_hosts
ip netns exec $NS_A rdma link add rxa type metaroce netdev va

# cnt NAME: the value of port counter NAME of rxa.
cnt() { cat "/sys/class/infiniband/rxa/ports/1/hw_counters/$1"; }
# send KIND: one crafted packet from host B to host A's MetaRoCE port.
send() {
	ip netns exec $NS_B /usr/bin/python3 - "$1" <<'PY'
import socket, struct, sys
sys.path.insert(0, "selftests/compliance")
import mrpkt as m
kind = sys.argv[1]
good = m.datagram(77, 5, 0x1234, b"x" * 16)
pkts = {
    "short": b"\x10" * 20,
    "version": m.seal(m.bth(m.T_DATAGRAM, 48, 0, ver=2) + m.dx(77, 5, 1)),
    "length": good[:-1],
    "crc": good[:-4] + struct.pack(">I", 0xDEADBEEF),
    "type": m.seal(m.bth(0x77, 32, 0)),
    "dg_hdrlen": m.seal(m.bth(m.T_DATAGRAM, 52, 0) + m.dx(77, 5, 1) + b"\0" * 4),
    "no_qp": good,
    "conn": m.seal(m.bth(m.T_ACK, 32, 0, dcid=1234)),
}
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(pkts[kind], ("10.77.0.1", m.UDP_PORT))
PY
}
# expect KIND COUNTER: sending KIND raises COUNTER by exactly one.
expect() {
	local before after
	before=$(cnt "$2")
	send "$1" || return 1
	wait_for 5 bash -c "[ \$(cat /sys/class/infiniband/rxa/ports/1/hw_counters/$2) -gt $before ]" || return 1
	after=$(cnt "$2")
	[ "$after" -eq $((before + 1)) ]
}

ok_if "counters are exposed (rdma statistic show)" bash -c \
	'rdma statistic show link rxa/1 | grep -q drop_bad_crc'
ok_if "runt packet: drop_bad_header" expect short drop_bad_header
ok_if "version 2: drop_bad_version" expect version drop_bad_version
ok_if "UDP length inconsistent with headers: drop_bad_header" expect length drop_bad_header
ok_if "wrong CRC32C: drop_bad_crc" expect crc drop_bad_crc
ok_if "undefined packet type: drop_bad_header" expect type drop_bad_header
ok_if "DATAGRAM with the wrong HdrLen: drop_bad_header" expect dg_hdrlen drop_bad_header
ok_if "DATAGRAM to a QP that does not exist: ud_drop_no_qp" expect no_qp ud_drop_no_qp
ok_if "connection packet without a connection: drop_no_conn" expect conn drop_no_conn
ok_if "none of them counted as received" bash -c '[ "$(cat /sys/class/infiniband/rxa/ports/1/hw_counters/rx_packets)" = 0 ]'

rdma link delete rxa
modprobe -r metaroce
tap_done
