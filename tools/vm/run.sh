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
set -uo pipefail
here=$(dirname "$(readlink -f "$0")")
tree=$(readlink -f "$here/../..")
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

ko=$tree/drivers/infiniband/sw/metaroce/metaroce.ko
[ -f "$ko" ] || { echo "run.sh: $ko not built (run make)" >&2; exit 2; }
kver=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
kernel=/boot/vmlinuz-$kver
[ -f "$kernel" ] || { echo "run.sh: no $kernel for module built against $kver (make deps)" >&2; exit 2; }

cache=$tree/.vm
mkdir -p "$cache"
initrd=$cache/initramfs-$kver.cpio.gz
if [ ! -f "$initrd" ] || [ "$here/initramfs-init" -nt "$initrd" ] || [ "$here/mkinitramfs.sh" -nt "$initrd" ]; then
	"$here/mkinitramfs.sh" "$kver" "$initrd" || exit 2
fi

# modules.dep & co. with metaroce.ko in updates/, made on the host (depmod
# over 9p under TCG takes minutes); the guest copies them into place.
stage=$cache/modules
sdir=$stage/lib/modules/$kver
# One run at a time stages the modules: two concurrent runs would race on
# the directory (and ln into the host's tree through the symlink).
exec {stagelock}> "$cache/modules.lock"
flock "$stagelock"
if [ ! -f "$sdir/modules.dep.bin" ] || [ "$ko" -nt "$sdir/modules.dep.bin" ]; then
	rm -rf "$stage"
	mkdir -p "$sdir/updates"
	ln -sfn "/lib/modules/$kver/kernel" "$sdir/kernel"
	cp /lib/modules/"$kver"/modules.{order,builtin,builtin.modinfo} "$sdir/"
	cp "$ko" "$sdir/updates/"
	depmod -b "$stage" "$kver" || exit 2
fi
flock -u "$stagelock"

[ -n "$out" ] || out=$(mktemp -d /tmp/mroce-vm.XXXXXX)
mkdir -p "$out"
out=$(readlink -f "$out")
cmd=$(printf '%q ' "$@")

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
			-append "console=ttyS0 panic=-1 oops=panic quiet loglevel=4 tsc=unstable rdinit=/init" \
			-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
			-virtfs "local,path=$d,mount_tag=vmout,security_model=none" \
			-device virtio-rng-pci \
			"${net[@]}" > "$d/qemu.log" 2>&1 &
		pids+=($!)
		((i == 0 && nvm == 2)) && sleep 1
	done
	for ((i = 0; i < nvm; i++)); do
		wait "${pids[$i]}"
		qrcs[i]=$?
	done
}

# booted: did every VM reach its job?  A guest that oopses while booting
# (seen rarely under multi-threaded TCG, in the kernel's own code patching)
# never got to run anything; that boot is retried, a test never is.
booted() {
	local i
	for ((i = 0; i < nvm; i++)); do
		grep -q "guest: ready" "$out/vm$i/console.log" 2>/dev/null || return 1
	done
}

qrcs=()
for attempt in 1 2 3; do
	boot_vms
	booted && break
	echo "run.sh: a VM failed to boot (attempt $attempt); console tail:" >&2
	tail -n 5 "$out"/vm*/console.log >&2
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
	fi
done
exit "$rc"
