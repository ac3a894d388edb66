#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The packet CRC32C implementation (crc.c, spec 4.6): at load the module
# checks every candidate (lib, insn, sb8) against the known answers and
# takes the fastest it measured; crc32c_impl=NAME forces one.  With each
# forced in turn, RC traffic between two hosts moves checked data and no
# packet fails its CRC; a name that does not exist refuses the load.
. "$(dirname "$0")/lib.sh"

IMPLS="lib insn sb8"
PARAM=/sys/module/metaroce/parameters/crc32c_impl
tap_plan 5
setup_two_hosts
modprobe -r metaroce 2>/dev/null

# load_line: the module's CRC report of its last load.
load_line() { dmesg | grep 'metaroce: crc32c vectors ok' | tail -n 1; }

auto_pick() {
	local line pick best
	modprobe metaroce || return 1
	line=$(load_line)
	echo "$line"
	for i in $IMPLS; do
		grep -q " $i [0-9]* ns" <<<"$line" || { echo "$i not measured"; return 1; }
	done
	pick=$(sed -n 's/.*using \([a-z0-9]*\)$/\1/p' <<<"$line")
	# The fastest of those measured.
	best=$(grep -o '[a-z0-9]* [0-9]* ns' <<<"$line" | sort -k2,2n | head -n 1 | cut -d' ' -f1)
	[ "$(cat $PARAM)" = "$pick" ] && [ "$pick" = "$best" ]
}
ok_if "load: lib, insn and sb8 pass the known answers and are measured; the fastest is used" auto_pick
modprobe -r metaroce

# forced NAME: load with crc32c_impl=NAME; checked RC traffic both ways,
# no CRC drop, clean unload.
forced() {
	local impl=$1 bad
	modprobe metaroce crc32c_impl="$impl" || return 1
	[ "$(cat $PARAM)" = "$impl" ] || { echo "crc32c_impl reads $(cat $PARAM)"; return 1; }
	add_devices ca cb || return 1
	pingpong_pair ibv_rc_pingpong ca cb -c -s 4096 -n 200 || return 1
	pingpong_pair ibv_rc_pingpong ca cb -c -s 777 -n 200 || return 1
	bad=$(($(hw_counter ca drop_bad_crc) + $(hw_counter cb drop_bad_crc)))
	((bad == 0)) || { echo "drop_bad_crc $bad"; return 1; }
	ip netns exec $NS_A rdma link delete ca &&
		ip netns exec $NS_B rdma link delete cb && modprobe -r metaroce
}
for impl in $IMPLS; do
	ok_if "crc32c_impl=$impl: checked RC data both ways (4096 B and 777 B messages), no CRC drop" forced $impl
done

refused() {
	! modprobe metaroce crc32c_impl=crc16 2>/dev/null &&
		! grep -q '^metaroce ' /proc/modules
}
ok_if "crc32c_impl=crc16 (no such implementation): the load fails" refused
tap_done
