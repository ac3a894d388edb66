#!/bin/bash
# Soak run (issue 18): selftests/metaroce/soak_guest.sh in the VM bench,
# mixed RC/UD, kernel/user traffic under changing faults for MINUTES
# (default 30), then slab and page usage compared with the baseline and
# kmemleak asked (on a kernel that has it).  Not part of make check.
#
# Usage: tools/soak.sh [MINUTES]       (make soak [SOAK_MINUTES=5])
# Output: the TAP of the run, ending with a "soak: key=value" line of
# figures; logs in .vm/soak/.  Exit 0 when every check passed.
set -u
tree=$(cd "$(dirname "$0")/.." && pwd)
minutes=${1:-${SOAK_MINUTES:-30}}
case $minutes in *[!0-9]* | "") echo "usage: $0 [MINUTES]" >&2; exit 2 ;; esac
# Setup, teardown and the runs still going at the end take long under TCG
# on a loaded host or a debug kernel (a 30 min run on a host at load 30 did
# not finish in 45 min): three times the soak, and 20 min more.
exec "$tree/tools/vm/run.sh" -t $((minutes * 180 + 1200)) -o "$tree/.vm/soak" -- \
	env SOAK_MINUTES="$minutes" selftests/metaroce/soak_guest.sh
