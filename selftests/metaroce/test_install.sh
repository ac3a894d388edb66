#!/bin/bash
# vm: -t 400
# `make install` on a host: the installed module autoloads from
# /lib/modules and libibverbs finds the installed provider.  (The VM's root is
# a throwaway overlay, so installing into it is safe.)
. "$(dirname "$0")/lib.sh"

tap_plan 6
kver=$(uname -r)
# Undo what the test bench set up, so only `make install` can make this work.
rm -f "/lib/modules/$kver/updates/metaroce.ko" /etc/libibverbs.d/metaroce.driver
depmod_dir=/lib/modules/$kver/updates/drivers/infiniband/sw/metaroce

ok_if "make install succeeds" make -s install
ok_if "module installed under updates/" bash -c "ls $depmod_dir/metaroce.ko*"
ok_if "provider library and driver file installed" bash -c \
	'[ -f /usr/lib/x86_64-linux-gnu/libibverbs/libmetaroce-rdmav34.so ] &&
	 grep -qx "driver metaroce" /etc/libibverbs.d/metaroce.driver'
ok_if "modinfo resolves the installed module" bash -c \
	"modinfo -n metaroce | grep -q '^$depmod_dir/'"
ip link add e0 type veth peer name e1
ip link set e0 up
ip link set e1 up
ok_if "rdma link add autoloads the installed module" \
	rdma link add mroce0 type metaroce netdev e0
ok_if "ibv_devinfo uses the installed provider" bash -c \
	'ibv_devinfo -d mroce0 | grep -q PORT_ACTIVE'
rdma link delete mroce0
modprobe -r metaroce
tap_done
