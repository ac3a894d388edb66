#!/bin/bash
# The packet CRC32C implementations (crc.c): ib_write_bw 64 KiB, 1 QP,
# between the two namespaces with each implementation forced in turn
# (crc32c_impl=lib, insn, sb8), then with the one the module picks at
# load (auto), whose per-packet timings the load printed; rxe alongside.
# BENCH_CRC_IMPLS: which, in order.  Sourced by guest.sh
# (lib.sh and scen_perftest.sh loaded; BENCH_* set).

# crc_reload IMPL: the module again with crc32c_impl=IMPL, and the
# devices of both topologies.
crc_reload() {
	ip netns exec $NS_A rdma link delete ra
	ip netns exec $NS_B rdma link delete rb
	rdma link delete m0
	rdma link delete m1
	modprobe -r metaroce || return 1
	modprobe metaroce crc32c_impl="$1" || return 1
	ip netns exec $NS_A rdma link add ra type metaroce netdev va
	ip netns exec $NS_B rdma link add rb type metaroce netdev vb
	rdma link add m0 type metaroce netdev v0
	rdma link add m1 type metaroce netdev v1
	wait_for 10 gid_index ra && wait_for 10 gid_index rb &&
		wait_for 10 gid_index m0 && wait_for 10 gid_index m1
}

scen_crc() {
	local impl line
	for impl in $BENCH_CRC_IMPLS; do
		log "crc: $impl"
		if ! crc_reload "$impl"; then
			rec group=crc stack=mroce-2ns impl="$impl" status=failed \
				error="module load with crc32c_impl=$impl failed"
			continue
		fi
		line=$(dmesg | grep 'metaroce: crc32c vectors ok' | tail -n 1)
		BW_GROUP=crc BW_TAG=impl=$impl bw_case mroce-2ns write 65536 1
		rec group=crc_impl impl="$impl" status=ok \
			chosen="$(cat /sys/module/metaroce/parameters/crc32c_impl)" \
			load="${line#*] }"
	done
	log "crc: rxe write 64 KiB"
	BW_GROUP=crc BW_TAG=impl=rxe bw_case rxe-1ns write 65536 1
}
