#!/bin/bash
# Build the VM's busybox initramfs for kernel KVER into OUT (a .cpio.gz).
# Usage: mkinitramfs.sh KVER OUT
set -euo pipefail
kver=$1
out=$2
here=$(dirname "$(readlink -f "$0")")
mods=/lib/modules/$kver/kernel

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/modules"
cp /bin/busybox "$work/bin/busybox"
for m in fs/netfs/netfs net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p fs/overlayfs/overlay; do
	xz -dc "$mods/$m.ko.xz" > "$work/modules/$(basename "$m").ko"
done
install -m 755 "$here/initramfs-init" "$work/init"
(cd "$work" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
mv "$out.tmp" "$out"
