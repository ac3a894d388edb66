#!/bin/bash
# `make check-debug`: run selftests under the debug kernel (KASAN, lockdep,
# PROVE_RCU, DEBUG_ATOMIC_SLEEP, kmemleak, UBSAN) that tools/vm/debug-kernel.sh
# builds once and caches in $MROCE_DEBUG_CACHE (default /var/cache/metaroce).
# Any report the kernel makes fails the test that was running (run.sh,
# scan-dmesg.sh; kmemleak is scanned as each test ends).
#
# Usage: tools/check-debug.sh [NAME_FILTER...]
#   Filters as tools/run-tests.sh's; default: the tests of hostile input,
#   loss, connection and QP lifecycles, scale, process kill and planes
#   going down and up (failed paths' timers).
#   MROCE_TIMEOUT_SCALE: the tests' VM timeouts are multiplied by it
#   (default 4: the debug kernel under TCG is 3-4 times slower).
#   MROCE_JOBS: tests at once (default 1, unlike make check's 2).
# Results: .vm/results-debug/ in this checkout.
set -uo pipefail
tree=$(readlink -f "$(dirname "$0")/..")
DEFAULT_TESTS=(test_hostile_wire.sh test_fuzz.sh test_compliance.sh test_rc_loss.sh
	test_conn_lifecycle.sh test_lifecycle.sh test_scale.sh test_user_kill.sh
	test_rx_validation.sh test_spoof.sh test_planes.sh)
[ $# -gt 0 ] || set -- "${DEFAULT_TESTS[@]}"

kdir=$("$tree/tools/vm/debug-kernel.sh" kernel) || exit 2
copy=$("$tree/tools/vm/debug-kernel.sh" tree) || exit 2
echo "check-debug: kernel $(cat "$kdir/kver") from $kdir; tests run from $copy"
export MROCE_KERNEL_DIR=$kdir MROCE_TREE=$copy
export MROCE_TIMEOUT_SCALE=${MROCE_TIMEOUT_SCALE:-4}
# One test at a time: the debug kernel keeps its vCPUs busy (KASAN,
# lockdep), and its timeouts were measured one VM at a time.
export MROCE_JOBS=${MROCE_JOBS:-1}
export MROCE_RESULTS=$tree/.vm/results-debug
"$copy/tools/run-tests.sh" "$@"
