#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Lint the MetaRoCE kernel code: checkpatch.pl --strict over every source
# file, then a sparse (C=2) + W=1 build of the module.  Exits non-zero and
# prints the findings if there are any; prints "lint: clean" otherwise.
#
#   CHECKPATCH=/path/to/checkpatch.pl   use this checkpatch instead of the
#                                       copy extracted from linux-source-6.12
#   KDIR=/path/to/kernel/build          kernel build dir (as in the Makefile)
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD

DRV=drivers/infiniband/sw/metaroce
UAPI=(include/uapi/rdma/metaroce-abi.h include/uapi/rdma/metaroce-nl.h)
CACHE=.vm/lint
SRC_TARBALL=/usr/src/linux-source-6.12.tar.xz
SRC_PREFIX=linux-source-6.12

# Kernel to build against: same rule as the top-level Makefile -- the running
# kernel's build dir when it exists, else the newest installed 6.12 headers.
if [ -z "${KDIR:-}" ]; then
	if [ -d "/lib/modules/$(uname -r)/build" ]; then
		KDIR=/lib/modules/$(uname -r)/build
	else
		KDIR=$(ls -d /lib/modules/6.12.*/build 2>/dev/null | sort -V | tail -n 1 || true)
	fi
fi
if [ -z "$KDIR" ] || [ ! -d "$KDIR" ]; then
	echo "lint: no kernel build dir: run 'make deps' or set KDIR" >&2
	exit 2
fi

command -v sparse >/dev/null ||
	{ echo "lint: sparse not installed: run 'make deps'" >&2; exit 2; }

# --- checkpatch.pl ----------------------------------------------------------

if [ -n "${CHECKPATCH:-}" ]; then
	checkpatch=$CHECKPATCH
else
	checkpatch=$CACHE/$SRC_PREFIX/scripts/checkpatch.pl
	if [ ! -f "$checkpatch" ]; then
		[ -f "$SRC_TARBALL" ] ||
			{ echo "lint: $SRC_TARBALL missing: run 'make deps' or set CHECKPATCH" >&2; exit 2; }
		echo "lint: extracting checkpatch.pl from $SRC_TARBALL (once)"
		mkdir -p "$CACHE"
		# Only the three members checkpatch needs; the tarball is ~150 MB.
		tar -xJf "$SRC_TARBALL" -C "$CACHE" --wildcards \
			"$SRC_PREFIX/scripts/checkpatch.pl" \
			"$SRC_PREFIX/scripts/spelling.txt" \
			"$SRC_PREFIX/scripts/const_structs.checkpatch"
	fi
fi

# No checkpatch type is ignored.  The ones that make no sense out of tree
# are already silent: --no-tree drops the checks that need a kernel tree
# (MAINTAINERS lookups, in-tree headers, ...) and FILE_PATH_CHANGES ("does
# MAINTAINERS need updating?") only fires on patches, never with -f.  Add
# an --ignore here only with a comment saying why the check cannot apply.

# Every .c/.h of the driver (not the generated metaroce.mod.c) + the uapi.
drv_files=()
while IFS= read -r f; do
	drv_files+=("$f")
done < <(find "$DRV" -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \) \
		! -name '*.mod.c' | sort)
# The in-kernel verbs test module is kernel code too (checkpatch only here;
# W=1 is part of every build of it).
kv_files=()
while IFS= read -r f; do
	kv_files+=("$f")
done < <(find selftests/metaroce/kverbs -maxdepth 1 -type f \
		\( -name '*.c' -o -name '*.h' \) ! -name '*.mod.c' | sort)
files=("${drv_files[@]}" "${UAPI[@]}" "${kv_files[@]}")

status=0

cp_out=$(perl "$checkpatch" --strict --no-tree --terse --no-summary \
	-f "${files[@]}" 2>&1) || true
if [ -n "$cp_out" ]; then
	echo "lint: checkpatch findings:"
	printf '%s\n' "$cp_out"
	status=1
fi

# --- sparse + W=1 build -----------------------------------------------------

# Build a private copy of the kernel sources under $CACHE/src, so that the
# full rebuild needed to see every compiler warning (the compiler only warns
# about files it recompiles) never cleans or rewrites the objects and the
# metaroce.ko in the working tree that "make check" may be using.
src=$CACHE/src
rm -rf "$src"
mkdir -p "$src/$DRV" "$src/include/uapi/rdma"
cp Kbuild "$src/"
cp "$DRV/Kbuild" "${drv_files[@]}" "$src/$DRV/"
cp "${UAPI[@]}" "$src/include/uapi/rdma/"

build_log=$CACHE/build.log
if ! make -C "$KDIR" M="$ROOT/$src" C=2 W=1 modules >"$build_log" 2>&1; then
	echo "lint: build failed:"
	sed "s|$ROOT/$src/||g" "$build_log"
	exit 1
fi
build_out=$(sed "s|$ROOT/$src/||g" "$build_log" |
	grep -E '(warning|error):' |
	grep -E "(^|/)($DRV|include/uapi/rdma)/" || true)
if [ -n "$build_out" ]; then
	echo "lint: sparse / compiler findings:"
	printf '%s\n' "$build_out"
	status=1
fi

if [ "$status" -ne 0 ]; then
	exit "$status"
fi
echo "lint: clean"
