#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# check_imports.sh LIB HEADER
#
# Fails if LIB imports an IBVERBS_PRIVATE_34 symbol that is not listed in
# METAROCE_PRIVATE_SYMBOLS in HEADER (verbs_private.h), or if LIB exports any
# symbol.  The load-time self-check only verifies the listed symbols, so the
# list must cover every private import.
set -eu

lib=$1
header=$2
NM=${NM:-nm}
status=0

imports=$($NM -D --undefined-only "$lib" |
	sed -n 's/^.*[[:space:]]U[[:space:]]\{1,\}\([^@[:space:]]*\)@\{1,2\}IBVERBS_PRIVATE_34.*$/\1/p' |
	sort -u)

for sym in $imports; do
	if ! grep -q "^[[:space:]]*X($sym)" "$header"; then
		echo "$lib: imports $sym@IBVERBS_PRIVATE_34, which is not in METAROCE_PRIVATE_SYMBOLS ($header)" >&2
		status=1
	fi
done

# Symbols we define and export (version-definition names excluded).
exports=$($NM -D --defined-only "$lib" | awk '$2 != "A" { print $3 }')
if [ -n "$exports" ]; then
	echo "$lib: exports symbols, but must export none:" $exports >&2
	status=1
fi

exit $status
