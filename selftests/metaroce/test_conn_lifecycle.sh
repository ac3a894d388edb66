#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# vm: -t 900
#
# Connection and stream lifecycle (spec 6.5.4 to 6.8) between devices mra0
# and mrb0 in two namespaces, through the userspace provider
# (pyverbs/conn_life.py): a killed peer process fails our outstanding
# request at the retry budget after its STREAM_CLOSE (as InfiniBand
# would, not sooner); a destroyed peer QP detaches our stream; idle connections are reclaimed
# (CONN_CLOSE, TOMBSTONE) and new ones work; a restarted peer device
# fails our connection (RESET NO_CONNECTION); the dead-connection timer
# and a failed handshake fail waiting QPs; a connection whose responder
# side gets its QP only after half_open_timeout_ms is not freed.  Then the connection-level
# compliance checks (selftests/compliance/conn_lifecycle.py) against mra0
# with host B as a crafted peer.
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
# py TEST: one conn_life.py test; its output (timings) goes to the TAP
# diagnostics whether it passes or not.
# Under the debug kernel conn_life.py takes a failure before the retry
# budget as one whose retry clock started before the kill (MROCE_SLOW,
# from lib.sh).
py() {
	local rc
	/usr/bin/python3 "$here/pyverbs/conn_life.py" "$@" > "/tmp/conn-$1.log" 2>&1
	rc=$?
	cat "/tmp/conn-$1.log" >> /tmp/conn-life.log
	return $rc
}
COMP=$here/../compliance
OUT=/tmp/conn-compliance.txt

setup_two_hosts
ip netns exec $NS_A rdma link add mra0 type metaroce netdev va
ip netns exec $NS_B rdma link add mrb0 type metaroce netdev vb
wait_for 10 bash -c 'grep -q ffff /sys/class/infiniband/mr[ab]0/ports/1/gids/*'

tap_plan 9
ok_if "killed peer process: READ fails with RETRY_EXC_ERR at once" py kill mra0 mrb0
ok_if "destroyed / failed peer QP: stream detached, requests fail at once" py destroy mra0 mrb0
ok_if "idle connections are reclaimed and new ones work" py idle mra0 mrb0
ok_if "peer restart: our QPs fail, new connections work" py restart mra0 mrb0
wait_for 10 bash -c 'grep -q ffff /sys/class/infiniband/mrb0/ports/1/gids/*'
ok_if "dead-connection timer and handshake failure fail the QP" py dead mra0 mrb0
wait_for 10 bash -c 'grep -q ffff /sys/class/infiniband/mrb0/ports/1/gids/*'
ok_if "a QP whose peer reaches RTR 2.5 s later: no half-open expiry" py late mra0 mrb0

diag "$(cat /tmp/conn-life.log)"

# Compliance: host B has no device and plays the peer of mra0.
rdma link delete mrb0
ip netns exec $NS_B timeout 300 /usr/bin/python3 -u $COMP/conn_lifecycle.py \
	$IP_B $IP_A mra0 > $OUT 2>&1
rc=$?
diag "$(cat $OUT)"
ok_if "compliance checks ran (exit $rc)" grep -q '^summary' $OUT
ok_if "every compliance check passed" bash -c "! grep -qE '^MRC-[A-Z]+-[0-9]+ +fail' $OUT && [ $rc = 0 ]"

rdma link delete mra0
ok_if "module unloads" modprobe -r metaroce
tap_done
