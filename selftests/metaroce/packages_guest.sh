#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The Debian packages of `make deb` (build/deb/), as an operator uses them:
# dpkg -i builds the module with DKMS for the running kernel and installs
# the libibverbs provider and the metaroce tool; devices are created with
# rdma link add and carry verified traffic; dpkg --purge removes every
# file, the DKMS module included, and the module unloads cleanly.
# Run by `make check-packages` (tools/vm/run.sh), not by make check: DKMS
# runs depmod over every module of the kernel, over 9p under TCG, at install
# and at removal (some 12 minutes in all).
# The guest's own copies of the module and provider (tools/vm/guest-stage2.sh)
# are set aside first, so that only the packages' are found.
# DKMS compiling the module under TCG takes over 20 minutes: make deb has
# DKMS build it on the host for this kernel, and the package's postinst
# here loads that binaries-only DKMS tarball (its documented place,
# /usr/share/metaroce-dkms/) instead of compiling; add, install, remove and
# every file are the package's own.
. "$(dirname "$0")/lib.sh"

DEBS=build/deb
PKGS="metaroce-dkms ibverbs-providers-metaroce metaroce-tools"
KVER=$(uname -r)
tap_plan 9

built() {
	ls $DEBS/metaroce-dkms_*_all.deb $DEBS/ibverbs-providers-metaroce_*.deb \
		$DEBS/metaroce-tools_*.deb $DEBS/metaroce-*.dkms.tar.gz
}
ok_if "the packages are built (make deb)" built

# The harness's module (updates/metaroce.ko) and provider entry go.
rm -f "/lib/modules/$KVER/updates/metaroce.ko" /etc/libibverbs.d/metaroce.driver
depmod -a "$KVER"

TARBALL_DIR=/usr/share/metaroce-dkms
install_pkgs() {
	install -D -m 0644 $DEBS/metaroce-*.dkms.tar.gz -t $TARBALL_DIR || return 1
	DEBIAN_FRONTEND=noninteractive dpkg -i $DEBS/*.deb > /tmp/dpkg.log 2>&1 ||
		{ tail -n 40 /tmp/dpkg.log; return 1; }
	dkms status metaroce | grep -q "$KVER.*installed" ||
		{ dkms status; tail -n 40 /tmp/dpkg.log; return 1; }
}
ok_if "dpkg -i installs the packages; DKMS installs the module for $KVER (built by make deb)" install_pkgs

dkms_module() {
	modprobe metaroce &&
		modinfo -n metaroce | grep -q "/updates/dkms/metaroce.ko" &&
		grep -q "^metaroce " /proc/modules
}
ok_if "modprobe loads the module DKMS built" dkms_module

setup_two_hosts
files_ok() {
	test -x /usr/sbin/metaroce &&
		grep -qx "driver metaroce" /etc/libibverbs.d/metaroce.driver &&
		test -f "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/libibverbs/libmetaroce-rdmav34.so" &&
		add_devices pa pb &&
		ip netns exec $NS_A ibv_devices | grep -qw pa
}
ok_if "rdma link add makes devices; the packaged provider serves them (ibv_devices)" files_ok

ok_if "ibv_rc_pingpong between the namespaces, data checked (packaged provider)" \
	pingpong_pair ibv_rc_pingpong pa pb -c -s 65536 -n 50
ok_if "the packaged metaroce tool shows the connection" \
	bash -c "ip netns exec $NS_A /usr/sbin/metaroce show pa | grep -q 'conn '"

unload() {
	ip netns exec $NS_A rdma link delete pa &&
		ip netns exec $NS_B rdma link delete pb &&
		modprobe -r metaroce
}
ok_if "devices delete and the module unloads" unload

purge() {
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive dpkg --purge $PKGS > /tmp/dpkg-purge.log 2>&1 ||
		{ tail -n 20 /tmp/dpkg-purge.log; return 1; }
	rm -rf $TARBALL_DIR		# the test's, not the package's
	! dkms status metaroce | grep -q . &&
		! find "/lib/modules/$KVER" -name 'metaroce.ko*' | grep . &&
		test ! -e /etc/libibverbs.d/metaroce.driver &&
		test ! -e /usr/sbin/metaroce &&
		! compgen -G "/usr/src/metaroce-*" &&
		! dpkg -l $PKGS 2>/dev/null | grep -q '^ii'
}
ok_if "dpkg --purge removes every file, the DKMS module included" purge
ok_if "modprobe finds no metaroce module any more" bash -c "! modprobe -n metaroce 2>/dev/null"
tap_done
