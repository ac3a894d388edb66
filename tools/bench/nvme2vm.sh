#!/bin/bash
# NVMe over Fabrics between the two VMs of guest-2vm.sh (sourced there):
# fio 4 KiB random reads at queue depth 1 and 32 from a RAM-disk namespace,
# over MetaRoCE and then over rxe on the same two eth0s.  VM 1 is the
# target, VM 0 the host and the one that writes the records.  Every block
# is checked: a sequential fill writes each 4 KiB block with fio's crc32c
# verify header (its offset and a checksum of its random contents), and
# the random reads verify every block they read (verify_fatal).
# Each VM keeps one RDMA device on eth0 per case, because rdma_cm picks the
# device by address (nvmelib.sh).
# shellcheck disable=SC2154 # here: guest-2vm.sh's directory
. "$here/../../selftests/metaroce/nvmelib.sh"

# shellcheck disable=SC2034 # NQN and DONE_PORT are read by nvmelib.sh
NQN=nqn.2026-12.invalid.metaroce:bench TADDR=$PEER_IP DONE_PORT=5558

# nvme_use_dev STACK: make STACK's device the only RDMA device on eth0.
nvme_use_dev() {
	case $1 in
	mroce-2vm)
		rdma link delete rxe0 2>/dev/null
		wait_for 10 gid_index m0 ;;
	rxe-2vm)
		rdma link delete m0 2>/dev/null
		rdma link show rxe0 > /dev/null 2>&1 ||
			rdma link add rxe0 type rxe netdev eth0
		wait_for 10 gid_index rxe0 ;;
	esac
}

# nvme_fio STACK QD DEV: verified random reads at queue depth QD over the
# NVME_MIB MiB the fill wrote (every block once; a quarter of them at queue
# depth 1); one "nvme" record.
nvme_fio() {
	local st=$1 qd=$2 dev=$3 out=$BENCH_LOGS/nvme-$1-qd$2 line rc
	local -a f
	# Queue depth 1 reads a quarter of the blocks: one at a time, rxe
	# managed fewer than 8192 in 300 s between two TCG VMs.
	timeout -k 5 600 fio --name=randread --filename="$dev" --rw=randread --bs=4k \
		--direct=1 --ioengine=libaio --iodepth="$qd" --size="${NVME_MIB}M" \
		--number_ios=$(((qd == 1 ? NVME_MIB / 4 : NVME_MIB) * 256)) \
		--verify=crc32c --verify_fatal=1 --output-format=json > "$out.json" 2> "$out.err"
	rc=$?
	line=$(python3 - "$out.json" <<-'EOF'
	import json, sys
	j = json.load(open(sys.argv[1]))["jobs"][0]
	r = j["read"]
	print(j["error"], r["total_ios"], "%.1f" % r["iops"], "%.1f" % (r["clat_ns"]["mean"] / 1e3),
	      "%.1f" % (r["clat_ns"]["percentile"]["99.000000"] / 1e3))
	EOF
	)
	read -r -a f <<< "$line"
	if ((rc == 0)) && [ "${f[0]:-1}" = 0 ] && ((${f[1]:-0} > 0)); then
		rec group=nvme where=two-vm stack="$st" qd="$qd" bs=4096 status=ok ios="${f[1]}" \
			iops="${f[2]}" lat_us="${f[3]}" p99_us="${f[4]}" verified=crc32c
	else
		rec group=nvme where=two-vm stack="$st" qd="$qd" bs=4096 status=failed \
			error="fio exit $rc: $(head -c 300 "$out.err" | tr '\n' ' ')"
	fi
}

# nvme_failed STACK ERROR: a failed "nvme" record for each queue depth.
nvme_failed() {
	local qd
	for qd in $NVME_QDS; do
		rec group=nvme where=two-vm stack="$1" qd="$qd" bs=4096 status=failed error="$2"
	done
}

# nvme_host STACK: connect, fill, the random-read passes, disconnect.
nvme_host() {
	local st=$1 dev qd ok=1
	if ! nvme_host_connect || ! wait_for 30 nvme_host_bdev; then
		nvme_failed "$st" "nvme-rdma did not connect to $TADDR"
		return 1
	fi
	dev=$(nvme_host_bdev)
	if ! timeout -k 5 300 fio --name=fill --filename="$dev" --rw=write --bs=4k --direct=1 \
		--ioengine=libaio --iodepth=16 --size="${NVME_MIB}M" --verify=crc32c --do_verify=0 \
		> "$BENCH_LOGS/nvme-$st-fill.log" 2>&1; then
		nvme_failed "$st" \
			"the fill failed: $(grep -i err "$BENCH_LOGS/nvme-$st-fill.log" | head -n 2 | tr '\n' ' ')"
		ok=0
	else
		for qd in $NVME_QDS; do
			nvme_fio "$st" "$qd" "$dev"
		done
	fi
	nvme_host_disconnect || ok=0
	modprobe -r nvme-rdma nvme-fabrics 2>/dev/null
	((ok))
}

# nvme_cases: every stack, in lockstep on both VMs.
nvme_cases() {
	local st
	for st in mroce-2vm rxe-2vm; do
		log "nvme: $st"
		nvme_use_dev "$st"
		if ((VM_INDEX == 1)); then
			nvme_target_setup || echo "nvme: target setup failed for $st" >&2
			nvme_target_wait_host
			nvme_target_teardown || echo "nvme: target teardown failed for $st" >&2
		elif nvme_host "$st"; then
			nvme_host_tell_target "done"
		else
			nvme_host_tell_target fail
		fi
	done
}
