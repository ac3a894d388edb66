#!/bin/bash
# Run a command inside qemu (TCG) booting the installed 6.12 kernel, with the
# host root shared read-only and the freshly built metaroce.ko installed.
#
# Usage: tools/vm/run.sh [-n 1|2] [-t SECONDS] [-m MIB] [-o OUTDIR] [-q] -- COMMAND...
#   -n 2   two VMs joined by a virtual Ethernet link (eth0 in each); the
#          command runs in both with VM_INDEX=0/1 in its environment
#   -t     timeout for the whole run (default 300 s)
#   -m     memory of each VM in MiB (default 2048)
#   -o     where console log, stdout, dmesg and rc go (default: a temp dir)
#   -q     do not echo the guest's output
#
# Exit status: the command's, or 1 if the guest crashed, timed out, or its
# kernel log shows a WARN/BUG/Oops/leak/hung-task report.
#
# Environment:
#   MROCE_KERNEL_DIR     boot another kernel: a directory with bzImage, kver
#                        and lib/modules/<kver> (what tools/vm/debug-kernel.sh
#                        builds); MROCE_TREE's metaroce.ko must be built for it
#   MROCE_TREE           the tree whose module, provider and tools the guest
#                        uses (default: the one this script is in)
#   MROCE_TIMEOUT_SCALE  multiplies -t (a slower kernel); default 1
#   MROCE_BOOT_LIMIT     seconds a guest may take to reach its job before the
#                        boot counts as failed and is retried; default 480
#   MROCE_KERNEL_ARGS    replaces the hardening options on the kernel command
#                        line (default: $MROCE_HARDENING below; for the debug
#                        kernel, kasan_multi_shot loglevel=5)
set -uo pipefail
here=$(dirname "$(readlink -f "$0")")
tree=$(readlink -f "${MROCE_TREE:-$here/../..}")
nvm=1 timeout=300 mem=2048 out="" quiet=0
while getopts "n:t:m:o:q" opt; do
	case $opt in
	n) nvm=$OPTARG ;;
	t) timeout=$OPTARG ;;
	m) mem=$OPTARG ;;
	o) out=$OPTARG ;;
	q) quiet=1 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: $0 [-n 1|2] [-t S] [-m MIB] [-o DIR] -- COMMAND..." >&2; exit 2; }
case $mem in *[!0-9]* | "") echo "run.sh: -m takes MiB" >&2; exit 2 ;; esac
case $nvm in 1 | 2) ;; *) echo "run.sh: -n takes 1 or 2" >&2; exit 2 ;; esac
scale=${MROCE_TIMEOUT_SCALE:-1}
case $scale in *[!0-9]* | "") echo "run.sh: MROCE_TIMEOUT_SCALE takes an integer" >&2; exit 2 ;; esac
timeout=$((timeout * scale))
# A guest not ready for its job by then failed to boot (retried, as one
# that oopses while booting); the debug kernel takes about 110 s.
boot_limit=${MROCE_BOOT_LIMIT:-480}

ko=$tree/drivers/infiniband/sw/metaroce/metaroce.ko
[ -f "$ko" ] || { echo "run.sh: $ko not built (run make)" >&2; exit 2; }
kver=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
if [ -n "${MROCE_KERNEL_DIR:-}" ]; then
	kernel=$MROCE_KERNEL_DIR/bzImage
	moddir=$MROCE_KERNEL_DIR/lib/modules/$kver
	[ "$(cat "$MROCE_KERNEL_DIR/kver" 2>/dev/null)" = "$kver" ] ||
		{ echo "run.sh: $ko is built for $kver, not for $MROCE_KERNEL_DIR" >&2; exit 2; }
else
	kernel=/boot/vmlinuz-$kver
	moddir=/lib/modules/$kver
fi
[ -f "$kernel" ] || { echo "run.sh: no $kernel for module built against $kver (make deps)" >&2; exit 2; }

cache=$tree/.vm
mkdir -p "$cache"
# One run at a time makes the initramfs and stages the modules: runs side
# by side (tools/run-tests.sh's MROCE_JOBS) would race on the files (and ln
# into the host's tree through the symlink).
exec {stagelock}> "$cache/modules.lock"
flock "$stagelock"
initrd=$cache/initramfs-$kver.cpio.gz
if [ ! -f "$initrd" ] || [ "$here/initramfs-init" -nt "$initrd" ] || [ "$here/mkinitramfs.sh" -nt "$initrd" ]; then
	"$here/mkinitramfs.sh" "$kver" "$initrd" "$moddir" || exit 2
fi

# modules.dep & co. with metaroce.ko in updates/, made on the host (depmod
# over 9p under TCG takes minutes); the guest copies them into place.
stage=$cache/modules
sdir=$stage/lib/modules/$kver
if [ ! -f "$sdir/modules.dep.bin" ] || [ "$ko" -nt "$sdir/modules.dep.bin" ]; then
	rm -rf "$stage"
	mkdir -p "$sdir/updates"
	ln -sfn "$moddir/kernel" "$sdir/kernel"
	cp "$moddir"/modules.{order,builtin,builtin.modinfo} "$sdir/"
	cp "$ko" "$sdir/updates/"
	depmod -b "$stage" "$kver" || exit 2
fi
flock -u "$stagelock"

[ -n "$out" ] || out=$(mktemp -d /tmp/mroce-vm.XXXXXX)
mkdir -p "$out"
out=$(readlink -f "$out")
cmd=$(printf '%q ' "$@")

# Hardening of the stock kernel, on every run of `make check`: KFENCE, which
# Debian's 6.12 has built in with sampling off.  Every 100 ms one slab
# allocation lands in a guarded page, and a stray access to it or a use
# after it is freed gets a KFENCE report, which fails the test.  Measured
# in qemu CPU seconds (host load too high and uneven for wall time), three
# VMs of test_kverbs started together, to its 10th point:
#   nothing 103 s; kfence.sample_interval=100 110 s (+7%);
#   page_poison=1 about +5 s per boot (every freed page is poisoned, 2 GiB
#   at boot), no difference after; its boots under heavy load logged soft
#   lockups and one crashed early, so it is not on by default.
# slub_debug=FZP (with kfence and page_poison), two VMs of test_rc_loss at
# once: the 1 MiB transfers took 86 s instead of 45, a retransmission check
# 31 s instead of 9 -- 2-3x, as any slub_debug flag takes SLUB off its fast
# path for every cache skbs use: `make check` (32 min) would pass 45 min.
# MROCE_KERNEL_ARGS="kfence.sample_interval=100 page_poison=1 slub_debug=FZP"
# turns them all on for a run.
MROCE_HARDENING="kfence.sample_interval=100"
# The debug kernel (MROCE_KERNEL_DIR) has KASAN instead, which reports every
# bad access, not the first only.  Its console also shows warning-level
# messages (loglevel=5): the stacks of an RCU stall or hung task are printed
# at that level, and a VM that times out leaves only its console.
if [ -n "${MROCE_KERNEL_DIR:-}" ]; then
	kargs=${MROCE_KERNEL_ARGS-kasan_multi_shot loglevel=5}
else
	kargs=${MROCE_KERNEL_ARGS-$MROCE_HARDENING}
fi

# Two VMs share the machine's two cores.
smp=$((nvm == 1 ? 2 : 1))

# boot_vms: start the VMs; waits for all of them; qrcs[i] gets each exit.
boot_vms() {
	local i d sock net pids=()

	port=$((20000 + RANDOM % 20000))
	for ((i = 0; i < nvm; i++)); do
		d=$out/vm$i
		rm -rf "$d"
		mkdir -p "$d"
		cp "$here/guest-stage2.sh" "$d/stage2.sh"
		{
			printf 'MROCE_TREE=%q\n' "$tree"
			printf 'KVER=%q\n' "$kver"
			printf 'MODSTAGE=%q\n' "$sdir"
			printf 'VM_INDEX=%d\nVM_COUNT=%d\nexport VM_INDEX VM_COUNT\n' "$i" "$nvm"
			printf 'JOB=%q\n' "$cmd"
		} > "$d/job.env"
		net=()
		if ((nvm == 2)); then
			if ((i == 0)); then sock="listen=127.0.0.1:$port"; else sock="connect=127.0.0.1:$port"; fi
			net=(-netdev "socket,id=n0,$sock" -device "virtio-net-pci,netdev=n0,mac=52:54:00:00:00:1$i")
		fi
		# tsc=unstable: under TCG the clocksource watchdog marks the TSC
		# unstable some 20 s into a run, and the sched_clock static key
		# flip that follows can hit a half-patched instruction on the
		# other vCPU (Oops: int3 in sched_clock_cpu, a panic).  Starting
		# without the TSC avoids the flip.
		timeout --foreground -k 10 "$timeout" qemu-system-x86_64 \
			-accel tcg,thread=multi -cpu max -smp "$smp" -m "$mem" \
			-display none -monitor none -serial "file:$d/console.log" \
			-no-reboot -nodefaults \
			-kernel "$kernel" -initrd "$initrd" \
			-append "console=ttyS0 panic=-1 oops=panic quiet loglevel=4 tsc=unstable rdinit=/init $kargs" \
			-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
			-virtfs "local,path=$d,mount_tag=vmout,security_model=none" \
			-device virtio-rng-pci \
			"${net[@]}" > "$d/qemu.log" 2>&1 &
		pids+=($!)
		((i == 0 && nvm == 2)) && sleep 1
	done
	# A guest whose kernel reported an error before its job started
	# (guest-stage2.sh) powers off: its peer VM would wait for it in vain.
	# One whose kernel reports an error on the console before it gets that
	# far may never get there (the debug kernel's KASAN report in
	# identify_cpu, see booted(), repeats in an interrupt handler for
	# ever): the console says so, and we stop it.  So with a guest not
	# ready after boot_limit seconds.
	local t0=$SECONDS
	while :; do
		alive=0
		for ((i = 0; i < nvm; i++)); do
			kill -0 "${pids[$i]}" 2>/dev/null && alive=1
			d=$out/vm$i
			grep -q "guest: ready" "$d/console.log" 2>/dev/null && continue
			if ! "$here/scan-dmesg.sh" "$d/console.log" 2> "$d/bootreport.tmp"; then
				mv "$d/bootreport.tmp" "$d/bootreport"
			elif ((SECONDS - t0 > boot_limit)); then
				echo "not ready after ${boot_limit}s" > "$d/bootfail"
			fi
			rm -f "$d/bootreport.tmp"
		done
		((alive)) || break
		if compgen -G "$out/vm*/bootreport" > /dev/null ||
		   compgen -G "$out/vm*/bootfail" > /dev/null; then
			kill "${pids[@]}" 2>/dev/null
			break
		fi
		sleep 2
	done
	for ((i = 0; i < nvm; i++)); do
		wait "${pids[$i]}"
		qrcs[i]=$?
	done
}

# booted: did every VM reach its job?  A guest that oopses while booting
# (seen rarely under multi-threaded TCG, in the kernel's own code patching)
# never got to run anything; that boot is retried, a test never is.  So is
# one whose kernel logged an error report before the job started (nothing
# of ours was loaded yet): under TCG the debug kernel's KASAN at times
# reports a wild access in do_raw_spin_lock from handle_edge_irq during
# identify_cpu, an emulation artifact.  A report once the job has started
# is never retried.
booted() {
	local i
	for ((i = 0; i < nvm; i++)); do
		[ ! -f "$out/vm$i/bootreport" ] || return 1
		grep -q "guest: ready" "$out/vm$i/console.log" 2>/dev/null || return 1
	done
}

qrcs=()
for attempt in 1 2 3; do
	boot_vms
	booted && break
	if compgen -G "$out/vm*/bootreport" > /dev/null; then
		echo "run.sh: a kernel error report before the job (attempt $attempt), rebooting:" >&2
		cat "$out"/vm*/bootreport >&2
		mkdir -p "$out/bootreports"
		for f in "$out"/vm*/dmesg-boot.txt; do
			[ -f "$f" ] && cp "$f" "$out/bootreports/attempt$attempt-$(basename "$(dirname "$f")").txt"
		done
	else
		echo "run.sh: a VM failed to boot (attempt $attempt); console tail:" >&2
		tail -n 5 "$out"/vm*/console.log >&2
	fi
done

rc=0
for ((i = 0; i < nvm; i++)); do
	qrc=${qrcs[$i]}
	d=$out/vm$i
	if ((quiet == 0)) && [ -f "$d/stdout.txt" ]; then
		((nvm > 1)) && echo "=== vm$i ==="
		cat "$d/stdout.txt"
	fi
	if ((qrc == 124 || qrc == 137)); then
		echo "run.sh: vm$i TIMED OUT after ${timeout}s; console tail:" >&2
		tail -n 30 "$d/console.log" >&2
		rc=1
	elif [ -f "$d/bootreport" ]; then
		echo "run.sh: vm$i: a kernel error report before the job on every boot:" >&2
		cat "$d/bootreport" >&2
		rc=1
	elif [ -f "$d/bootfail" ]; then
		echo "run.sh: vm$i: not ready for its job within ${boot_limit}s on any boot; console tail:" >&2
		tail -n 30 "$d/console.log" >&2
		rc=1
	elif [ ! -f "$d/rc" ]; then
		echo "run.sh: vm$i CRASHED (no exit status); console tail:" >&2
		tail -n 60 "$d/console.log" >&2
		rc=1
	else
		vrc=$(cat "$d/rc")
		((vrc != 0 && rc == 0)) && rc=$vrc
		if ! "$here/scan-dmesg.sh" "$d/dmesg.txt"; then
			echo "run.sh: vm$i kernel log has error reports (see $d/dmesg.txt)" >&2
			rc=1
		fi
		# kmemleak's scan when the job ended (a kernel with kmemleak).
		if [ -s "$d/kmemleak.txt" ]; then
			echo "run.sh: vm$i kmemleak reports $(grep -c '^unreferenced object' "$d/kmemleak.txt") leak(s) (see $d/kmemleak.txt)" >&2
			rc=1
		fi
	fi
done
exit "$rc"
