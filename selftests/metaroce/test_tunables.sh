#!/bin/bash
# The tunables of spec section 17 (MRC-TUN-001), checked against the
# spec's own table by tunables_check.py: every one exists with its default
# and range, out-of-range values are refused with EINVAL and change
# nothing, both ends of each range are accepted.  What the limits and
# timeouts do is checked by the compliance suite (t_limits, t_not_ready).
. "$(dirname "$0")/lib.sh"

need_mr_tool

modprobe metaroce
out=$(/usr/bin/python3 "$(dirname "$0")/tunables_check.py" \
	Documentation/metaroce/spec.md $MR)
rc=$?
n=$(grep -c '^\(not \)\?ok ' <<<"$out")
tap_plan $((n + 1))
echo "$out"
_tap_n=$n
[ $rc -eq 0 ] || _tap_fail=1
modprobe -r metaroce
ok_if "the module unloads after every tunable was set to its ends" \
	bash -c '! grep -q "^metaroce " /proc/modules'
tap_done
