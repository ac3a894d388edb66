#!/bin/bash
# make deb: Debian packages of MetaRoCE, checked with lintian, in build/deb/:
#   metaroce-dkms               the kernel module's source, built and installed
#                               by DKMS for every kernel with headers
#   ibverbs-providers-metaroce  the libibverbs provider and its
#                               /etc/libibverbs.d/metaroce.driver
#   metaroce-tools              the metaroce command and its manual page
# The packaging is packaging/debian/; the packages are built from a copy of
# this tree (as it is, committed or not) with dpkg-buildpackage.
# Usage: tools/deb.sh [KDIR]   (KDIR: a kernel build directory to build the
#                               DKMS package for, as a check)
set -euo pipefail
tree=$(readlink -f "$(dirname "$0")/..")
kdir=${1:-}
out=$tree/build/deb
ver=$(dpkg-parsechangelog -l "$tree/packaging/debian/changelog" -S Version)
stage=$out/src/metaroce-$ver
grep -qx "PACKAGE_VERSION=\"$ver\"" "$tree/dkms.conf" ||
	{ echo "deb: dkms.conf's PACKAGE_VERSION is not $ver (packaging/debian/changelog)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$stage"
# Sources only: no build output of the tree comes along.
rsync -a --exclude='*.o' --exclude='*.ko' --exclude='*.d' --exclude='*.so' \
	--exclude='*.so.tmp' --exclude='.*.cmd' --exclude='*.mod' --exclude='*.mod.c' \
	--exclude=modules.order --exclude=Module.symvers --exclude=/tools/metaroce/metaroce \
	--relative "$tree/./Kbuild" "$tree/./dkms.conf" "$tree/./drivers" "$tree/./include" \
	"$tree/./rdma-core-provider" "$tree/./tools/metaroce" "$stage/"
cp -r "$tree/packaging/debian" "$stage/debian"
(cd "$stage" && dpkg-buildpackage -us -uc -b) > "$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log" >&2; echo "deb: dpkg-buildpackage failed (log: $out/build.log)" >&2; exit 1; }
# lintian: no error and no warning (informational tags are allowed).
lintian --fail-on error,warning "$out"/src/*.changes 2>&1 | tee "$out/lintian.txt"
mv "$out"/src/*.deb "$out/"

# DKMS builds the packaged module here for KDIR's kernel (the test VM's),
# into a private DKMS tree: that checks that the package builds with DKMS,
# and its binaries-only DKMS tarball lets test_packages install the package
# without a compile under TCG (over 20 minutes there, about one here).
if [ -n "$kdir" ]; then
	kver=$(cat "$kdir/include/config/kernel.release")
	dk=$out/dkms
	mkdir -p "$dk/root" "$dk/tree"
	dpkg-deb -x "$out"/metaroce-dkms_"$ver"_all.deb "$dk/root"
	dko=(-m metaroce -v "$ver" --dkmstree "$dk/tree" --sourcetree "$dk/root/usr/src")
	{ dkms add "${dko[@]}" && dkms build "${dko[@]}" -k "$kver" &&
	  dkms mktarball "${dko[@]}" -k "$kver" --binaries-only \
		--archive "$out/metaroce-$ver.dkms.tar.gz"; } > "$out/dkms.log" 2>&1 ||
		{ tail -n 30 "$out/dkms.log" >&2; echo "deb: DKMS could not build the package for $kver" >&2; exit 1; }
	echo "deb: DKMS built the module for $kver: $out/metaroce-$ver.dkms.tar.gz"
fi
ls "$out"/*.deb
