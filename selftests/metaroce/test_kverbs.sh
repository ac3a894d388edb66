#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# vm: -t 900
#
# Kernel verbs consumers: mroce_kverbs.ko (selftests/metaroce/kverbs) drives
# the ib_verbs.h API between two MetaRoCE devices, as nvme-rdma, NFS/RDMA or
# rdma_rw do, and checks every byte.  One TAP point per test of the module,
# each its own insmod: ok when insmod succeeds (the module's init fails
# unless its test passed), no kernel error report appeared meanwhile and no
# verbs object was left behind.  The module's kernel log lines follow each
# point as diagnostics.
#
#   KVERBS_TESTS="objects flush"   run only these (space or comma separated)
#   KVERBS_SIZE=4096 KVERBS_ITERS=256   the module's size and iters
#
# The module is built on the host: make -C selftests/metaroce/kverbs
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
KO=$here/kverbs/mroce_kverbs.ko
SCAN=$here/../../tools/vm/scan-dmesg.sh
ALL="objects flush ud_send rc_send rc_write rc_read rc_atomic rc_bad_rkey rc_rnr rc_many frmr frmr_inv frmr_err srq srq_err ud_srq limits"
DEV_A=kva
DEV_B=kvb

tests=${KVERBS_TESTS:-$ALL}
read -ra list <<<"${tests//,/ }"
tap_plan ${#list[@]}

# The sysfs form of the IPv4-mapped GID of an address.
v4gid() {
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$1" "$2" "$3" "$4"
}

has_gid() {
	ibdev_gids "$1" | grep -qx "$(v4gid "$2")"
}

# The verbs objects (restrack counts) of both devices.
resources() {
	rdma resource show 2>/dev/null | grep -E " ($DEV_A|$DEV_B): "
}

setup_err=""
setup_two_hosts
if ! ip netns exec $NS_A rdma link add $DEV_A type metaroce netdev va ||
	! ip netns exec $NS_B rdma link add $DEV_B type metaroce netdev vb; then
	setup_err="rdma link add failed"
elif ! wait_for 10 has_gid $DEV_A $IP_A || ! wait_for 10 has_gid $DEV_B $IP_B; then
	setup_err="no IPv4 RoCE GID on $DEV_A/$DEV_B: $(ibdev_gids $DEV_A) / $(ibdev_gids $DEV_B)"
elif [ ! -f "$KO" ]; then
	setup_err="$KO is not built: make -C selftests/metaroce/kverbs"
fi
baseline=$(resources)

# diag_each TEXT...: each non-empty argument as diagnostics.
diag_each() {
	local d
	for d in "$@"; do
		[ -n "$d" ] && diag "$d"
	done
	return 0
}

not_ok() {
	echo "not ok $_tap_n - $1"
	_tap_fail=$((_tap_fail + 1))
	shift
	diag_each "$@"
}

# run_one NAME: one insmod of the module with tests=NAME.
run_one() {
	local name=$1 out rc log msgs splat="" left
	local args=(dev_a=$DEV_A dev_b=$DEV_B ip_a=$IP_A ip_b=$IP_B "tests=$name")

	[ -n "${KVERBS_SIZE:-}" ] && args+=("size=$KVERBS_SIZE")
	[ -n "${KVERBS_ITERS:-}" ] && args+=("iters=$KVERBS_ITERS")
	_tap_n=$((_tap_n + 1))
	if [ -n "$setup_err" ]; then
		not_ok "$name" "$setup_err"
		return
	fi

	echo "mroce_kverbs-selftest: start $_tap_n $name" > /dev/kmsg
	out=$(insmod "$KO" "${args[@]}" 2>&1)
	rc=$?
	grep -q '^mroce_kverbs ' /proc/modules && rmmod mroce_kverbs
	log=$(dmesg | sed -n "/mroce_kverbs-selftest: start $_tap_n $name\$/,\$p")
	msgs=$(grep -o 'mroce_kverbs: .*' <<<"$log")
	if [ -x "$SCAN" ] && ! splat=$("$SCAN" /dev/stdin <<<"$log" 2>&1); then
		splat=${splat:-kernel error report}
	else
		splat=""
	fi
	left=$(resources)

	if ((rc != 0)); then
		not_ok "$name" "$msgs" "$out"
	elif [ -n "$splat" ]; then
		not_ok "$name" "$msgs" "kernel error report during the test:" "$splat"
	elif [ "$left" != "$baseline" ]; then
		not_ok "$name" "$msgs" "verbs objects left behind:" \
			"before: $baseline" "after: $left"
	else
		echo "ok $_tap_n - $name"
		diag_each "$msgs"
	fi
}

for t in "${list[@]}"; do
	run_one "$t"
done

rdma link delete $DEV_A 2>/dev/null
rdma link delete $DEV_B 2>/dev/null
modprobe -r metaroce
tap_done
