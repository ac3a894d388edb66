#!/bin/bash
# Build the VM's busybox initramfs for kernel KVER into OUT (a .cpio.gz).
# Usage: mkinitramfs.sh KVER OUT [MODDIR]
#   MODDIR: the kernel's modules (default /lib/modules/KVER); the 9p and
#   overlay drivers it has built in are not needed (the debug kernel's)
set -euo pipefail
kver=$1
out=$2
moddir=${3:-/lib/modules/$kver}
here=$(dirname "$(readlink -f "$0")")
mods=$moddir/kernel

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/modules"
cp /bin/busybox "$work/bin/busybox"
for m in fs/netfs/netfs net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p fs/overlayfs/overlay; do
	if grep -qx "kernel/$m.ko" "$moddir/modules.builtin"; then
		continue
	elif [ -f "$mods/$m.ko.xz" ]; then
		xz -dc "$mods/$m.ko.xz" > "$work/modules/$(basename "$m").ko"
	else
		cp "$mods/$m.ko" "$work/modules/"
	fi
done
install -m 755 "$here/initramfs-init" "$work/init"
(cd "$work" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
mv "$out.tmp" "$out"
