#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# vm: -t 900
#
# Memory windows through the userspace provider, between two devices in
# two network namespaces (progs/rc_mw.c): type 1 (ibv_bind_mw) and type 2
# (IBV_WR_BIND_MW, ibv_wr_bind_mw, zero based) windows on an MR with no
# remote right of its own; remote WRITE, READ and atomics through the
# window's rkey with every target byte checked; accesses outside the
# window or beyond its rights refused with IBV_WC_REM_ACCESS_ERR and the
# target untouched; LOCAL_INV and SEND_WITH_INV; a type 2 window refused to
# every QP but the peer of the one that bound it; rebinding and unbinding
# a type 1 window; bind arguments refused with their errno or with
# IBV_WC_MW_BIND_ERR; deallocating bound windows and deregistering their
# MR; a process exiting with bound windows.
. "$(dirname "$0")/lib.sh"

TESTS=(type1 type2 type2_ex zero_based range rights local_inv send_inv
       other_qp rebind bind_errno bind_err_wc dealloc teardown)
tap_plan $((${#TESTS[@]} + 5))
setup_two_hosts
add_devices mwa mwb

PROG=/tmp/rc_mw
ok_if "build rc_mw" build_prog rc_mw

ok_if "device advertises memory windows" bash -c \
	"ibv_devinfo -v -d mwa | grep -q 'max_mw:[[:space:]]*65536' &&
	 ibv_devinfo -v -d mwa | grep -q MEM_WINDOW_TYPE_2B"

run() {
	local out
	out=$(timeout 300 $PROG "$1" mwa mwb 2>&1)
	echo "$out"
	grep -q '^ok$' <<<"$out"
}
for t in "${TESTS[@]}"; do
	ok_if "rc_mw $t" run "$t"
done

# A user keeping its SQ full of binds (no window, nothing on the wire) must
# not hold a CPU with bottom halves off: SENDs of the same connection keep
# completing, and no soft lockup (2 x watchdog_thresh) is reported.
thresh=$(sysctl -n kernel.watchdog_thresh)
sysctl -qw kernel.watchdog_thresh=3
flood_ok() { run bind_flood && ! dmesg | grep -q 'soft lockup'; }
ok_if "rc_mw bind_flood (finding 6: bounded SQ work per push)" flood_ok
sysctl -qw kernel.watchdog_thresh="$thresh"

ok_if "no user objects left" bash -c \
	'! rdma res show qp | grep -v "\[ib_core\]" | grep -q . &&
	 ! rdma res show mr | grep -q . && ! rdma res show pd | grep -v "\[ib_core\]" | grep -q .'

# The driver warns if a window outlives its device: none may.
rdma link delete mwa
rdma link delete mwb
ok_if "module unloads with no window left" modprobe -r metaroce
tap_done
