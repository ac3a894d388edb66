#!/bin/bash
# Stage 2, PID 1 inside the VM (root = host root, read-only, + tmpfs overlay).
# Installs the freshly built module and provider into the overlay, runs the
# job, saves its exit status and the kernel log, and powers off.
OUT=/mnt/vmout
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8

KMEMLEAK=/sys/kernel/debug/kmemleak

finish() {
	# A kernel with kmemleak: what leaked while the job ran.  An object is
	# reported once it is some seconds old and unreferenced in two scans.
	if [ -w $KMEMLEAK ]; then
		echo scan > $KMEMLEAK
		sleep 6
		echo scan > $KMEMLEAK
		cat $KMEMLEAK > "$OUT/kmemleak.txt"
	fi
	dmesg > "$OUT/dmesg.txt" 2>&1
	echo "$1" > "$OUT/rc"
	sync
	echo o > /proc/sysrq-trigger
	sleep 10
}

# /tmp stays the overlay's: the tree under test may live in the host's /tmp.
mount -t tmpfs tmpfs /run
mkdir -p /run/netns /var/run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
# The links udev makes on a real host: process substitution (<(...)) and
# /dev/stdin need them (dkms uses both).
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
[ -e /dev/stdin ] || ln -s /proc/self/fd/0 /dev/stdin
[ -e /dev/stdout ] || ln -s /proc/self/fd/1 /dev/stdout
[ -e /dev/stderr ] || ln -s /proc/self/fd/2 /dev/stderr

# shellcheck source=/dev/null
. "$OUT/job.env" || finish 125
hostname "mroce-vm$VM_INDEX"
ip link set lo up
# The two-VM link is a virtio-net NIC (eth0); its driver is a module.
modprobe -q virtio_net
sysctl -qw kernel.hung_task_timeout_secs=60 kernel.panic_on_oops=1

# The module goes where modprobe (and rdma link autoload) finds it.
# (modules.* indexes were generated on the host by run.sh)  A kernel that is
# not the host's (the debug one) has its modules in MODSTAGE/kernel only.
mkdir -p "/lib/modules/$KVER"
[ -e "/lib/modules/$KVER/kernel" ] ||
	ln -s "$(readlink -f "$MODSTAGE/kernel")" "/lib/modules/$KVER/kernel" || finish 125
cp -r "$MODSTAGE/updates" "/lib/modules/$KVER/" || finish 125
cp "$MODSTAGE"/modules.* "/lib/modules/$KVER/" || finish 125
# The provider is used from the build tree.  libibverbs dlopen()s every
# provider named in /etc/libibverbs.d at each program start, which over 9p
# under TCG costs seconds per verbs program: the guest keeps only ours and
# rxe's (the comparison baseline).  /etc is the overlay's.
mkdir -p /etc/libibverbs.d
for f in /etc/libibverbs.d/*.driver; do
	[ "$f" = /etc/libibverbs.d/rxe.driver ] || rm -f "$f"
done
echo "driver $MROCE_TREE/rdma-core-provider/libmetaroce" > /etc/libibverbs.d/metaroce.driver

# Nothing of ours ran yet: a kernel error report now is the boot's (under
# TCG, the debug kernel's KASAN at times sees an emulation artifact while
# bringing up a CPU).  run.sh boots again; from here on, every report fails
# the job.
if dmesg | "$MROCE_TREE/tools/vm/scan-dmesg.sh" /dev/stdin 2> "$OUT/bootreport.tmp"; then
	rm -f "$OUT/bootreport.tmp"
else
	dmesg > "$OUT/dmesg-boot.txt"
	mv "$OUT/bootreport.tmp" "$OUT/bootreport"
	echo "guest: kernel error report before the job, powering off" > /dev/console
	sync
	echo o > /proc/sysrq-trigger
	sleep 10
fi
# Leaks are counted from here: what booting left is not the job's.
if [ -w $KMEMLEAK ]; then
	echo scan > $KMEMLEAK
	echo clear > $KMEMLEAK
fi

echo "guest: ready, running job" > /dev/console
cd "$MROCE_TREE" || finish 125
bash -c "$JOB" 2>&1 | tee "$OUT/stdout.txt" > /dev/console
finish "${PIPESTATUS[0]}"
