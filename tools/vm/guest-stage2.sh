#!/bin/bash
# Stage 2, PID 1 inside the VM (root = host root, read-only, + tmpfs overlay).
# Installs the freshly built module and provider into the overlay, runs the
# job, saves its exit status and the kernel log, and powers off.
OUT=/mnt/vmout
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8

finish() {
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

# shellcheck source=/dev/null
. "$OUT/job.env" || finish 125
hostname "mroce-vm$VM_INDEX"
ip link set lo up
# The two-VM link is a virtio-net NIC (eth0); its driver is a module.
modprobe -q virtio_net
sysctl -qw kernel.hung_task_timeout_secs=60 kernel.panic_on_oops=1

# The module goes where modprobe (and rdma link autoload) finds it.
# (modules.* indexes were generated on the host by run.sh)
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

echo "guest: ready, running job" > /dev/console
cd "$MROCE_TREE" || finish 125
bash -c "$JOB" 2>&1 | tee "$OUT/stdout.txt" > /dev/console
finish "${PIPESTATUS[0]}"
