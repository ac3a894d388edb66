#!/bin/bash
# The debug kernel of `make check-debug`: KASAN, lockdep (PROVE_LOCKING,
# PROVE_RCU), DEBUG_ATOMIC_SLEEP, kmemleak and UBSAN, built once from
# Debian's linux-source-6.12 with x86_64 defconfig + kvm_guest.config +
# tools/vm/debug.config, and cached outside the checkout.
#
# Usage: tools/vm/debug-kernel.sh kernel
#          build the kernel if its cache entry is missing; print its directory
#        tools/vm/debug-kernel.sh tree
#          also copy this checkout (built with `make`) next to it, rebuild
#          metaroce.ko and mroce_kverbs.ko there against the debug kernel;
#          print the copy's path
#
# The cache entry, $MROCE_DEBUG_CACHE/debug-kernel-<key> (default
# /var/cache/metaroce), holds the built source tree (src/, the KDIR of the
# modules), bzImage, kver and lib/modules/<kver>; <key> hashes every input
# of the configuration (debug.config, the linux-source package version and
# this recipe's version), so changing any of them builds a new entry.  The
# first build takes about 20 min on 2 free cores (longer on a loaded host:
# MROCE_DEBUG_JOBS sets make's -j, default the number of cores); the log is
# build.log in the entry, and an interrupted build resumes.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
tree=$(readlink -f "$here/../..")
RECIPE=1
src_tar=/usr/src/linux-source-6.12.tar.xz
cache=${MROCE_DEBUG_CACHE:-/var/cache/metaroce}

[ -f "$src_tar" ] || { echo "debug-kernel: no $src_tar (tools/deps.sh --debug)" >&2; exit 2; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
key=$( { cat "$here/debug.config"; echo "linux-source-6.12 $srcver"; echo "recipe $RECIPE"; } |
	sha256sum | cut -c1-16)
dir=$cache/debug-kernel-$key
mkdir -p "$cache"

# build_kernel: fill $dir (the caller holds its lock).
build_kernel() {
	local src=$dir/src log=$dir/build.log line opt want got bad=0

	echo "debug-kernel: building $dir (log: $log); the first build takes 20 min or more" >&2
	# An interrupted build goes on where it stopped.
	if [ ! -f "$src/Makefile" ]; then
		rm -rf "$dir"
		mkdir -p "$src"
		tar -xf "$src_tar" -C "$src" --strip-components=1
	fi
	{
		make -C "$src" defconfig
		make -C "$src" kvm_guest.config
		"$src/scripts/kconfig/merge_config.sh" -m -O "$src" "$src/.config" "$here/debug.config"
		make -C "$src" olddefconfig
	} >> "$log" 2>&1 || { echo "debug-kernel: configuration failed (see $log)" >&2; return 1; }
	# Every option of the fragment must have survived olddefconfig: a
	# dependency it lacks silently drops it.
	while read -r line; do
		case $line in
		CONFIG_*=*) opt=${line%%=*} want=$line ;;
		"# CONFIG_"*" is not set") opt=${line#\# } opt=${opt%% *} want=$line ;;
		*) continue ;;
		esac
		got=$(grep -E "^($opt=|# $opt is not set)" "$src/.config" || true)
		if [ "$got" != "$want" ] && ! { [ -z "$got" ] && [[ $want == "# "* ]]; }; then
			echo "debug-kernel: $want, but the configuration has '${got:-nothing}'" >&2
			bad=1
		fi
	done < "$here/debug.config"
	((bad == 0)) || return 1
	make -C "$src" -j"${MROCE_DEBUG_JOBS:-$(nproc)}" bzImage modules >> "$log" 2>&1 ||
		{ echo "debug-kernel: build failed (see $log)" >&2; return 1; }
	make -C "$src" INSTALL_MOD_PATH="$dir" INSTALL_MOD_STRIP=1 modules_install >> "$log" 2>&1 ||
		{ echo "debug-kernel: modules_install failed (see $log)" >&2; return 1; }
	cp "$src/arch/x86/boot/bzImage" "$dir/bzImage"
	make -s -C "$src" kernelrelease > "$dir/kver"
	touch "$dir/done"
}

exec {lock}> "$cache/.debug-kernel-$key.lock"
flock "$lock"
if [ ! -f "$dir/done" ]; then
	start=$SECONDS
	build_kernel || exit 1
	echo "debug-kernel: built in $(((SECONDS - start) / 60)) min" >&2
fi
flock -u "$lock"

case ${1:-kernel} in
kernel)
	echo "$dir"
	;;
tree)
	# kbuild builds an external module in its source directory: the
	# checkout's own build (for the stock kernel) stays as it is and the
	# debug one is made in a copy.  Kbuild outputs are not copied, so the
	# copy's are kept and rebuilt only when a source changed.  -g: the
	# kernel has no DWARF, the module has, for addr2line/faddr2line.
	copy=$cache/tree-$(printf '%s' "$tree" | sha256sum | cut -c1-12)
	mkdir -p "$copy"
	exec {tlock}> "$copy.lock"
	flock "$tlock"
	rsync -a --delete --exclude=/.git --exclude=/.vm \
		--exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude=Module.symvers --exclude=modules.order \
		"$tree/" "$copy/"
	make -s -C "$copy" KDIR="$dir/src" KCFLAGS=-g module >&2 ||
		{ echo "debug-kernel: module build against $dir/src failed" >&2; exit 1; }
	echo "$copy"
	;;
*)
	echo "usage: $0 kernel|tree" >&2
	exit 2
	;;
esac
