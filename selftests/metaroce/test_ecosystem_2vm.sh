#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# vm: -n 2 -t 1500
#
# test_ecosystem's UCX and libfabric cases between two kernels (issue 22):
# two VMs joined by a virtual Ethernet link, a MetaRoCE device on each
# eth0, servers in VM 1 and clients in VM 0.
#  - UCX's UCT layer: ucx_perftest put_bw over rc_verbs.
#  - UCX's UCP layer over rc_verbs and ud_verbs: ucx_perftest tag_bw 64 KiB,
#    tag_lat 8 B and stream_bw 4 KiB, and progs/ucp_check.c's ping-pongs
#    (8 B-1 MiB) through the tag and stream APIs, every byte checked.
#  - libfabric's verbs provider: fi_pingpong msg endpoints, and rdm ones
#    through ofi_rxm, every byte checked (-c).
#  - Open MPI with pml ucx: mpi_check's ping-pong (8 B-1 MiB) and allreduce,
#    rank 0 in VM 0 and rank 1 in VM 1.  The VMs run no ssh, so mpirun's
#    rsh launcher starts its daemon in VM 1 through progs/vmrsh.py.
# Each case runs its server on a port of its own; the client tries again
# until that server listens (the other VM cannot be asked).  Each VM checks
# that the case moved data through its own device.
. "$(dirname "$0")/lib.sh"

for t in ucx_perftest fi_pingpong mpirun mpicc; do
	if ! command -v $t >/dev/null; then
		echo "1..0 # SKIP $t is not installed (tools/deps.sh)"
		exit "$KSFT_SKIP"
	fi
done
me=$((VM_INDEX + 1))
peer=$((2 - VM_INDEX))
PEER_IP=10.88.0.$peer
tap_plan 10
ip addr add 10.88.0.$me/24 dev eth0
ip link set eth0 up
up() {
	wait_for 120 ping -c 1 -W 1 $PEER_IP &&
		rdma link add m0 type metaroce netdev eth0 && wait_for 10 gid_index m0
}
ok_if "vm$VM_INDEX: the peer VM answers, MetaRoCE device m0 on eth0 has its GID" up
mkdir -p /dev/shm
mountpoint -q /dev/shm || mount -t tmpfs shm /dev/shm
# Data packets through m0, either way: UCT's puts only leave the client.
moved() {
	echo $(($(hw_counter m0 rx_data_packets) + $(hw_counter m0 tx_data_packets) +
		$(hw_counter m0 ud_rx_packets)))
}

# side NAME RESULT "SERVER CMD" "CLIENT CMD": VM 1 runs the server (at
# most 240 s), VM 0 the client with PEER_IP appended, again every 2 s
# while the server is not listening yet (connection refused), for up to
# 270 s: longer than a server waits, so that a case that failed does not
# leave the next client giving up before its server starts.  Both must
# succeed and print a line matching RESULT (fi_pingpong can exit 0 on an
# error), with data received by this VM's device.
side() {
	local result=$2 srv=$3 cli=$4 before rc=1 log=/tmp/eco-$1.log end
	[ -e /sys/class/infiniband/m0 ] || { echo "no device m0"; return 1; }
	before=$(moved)
	if ((VM_INDEX == 1)); then
		# shellcheck disable=SC2086
		timeout 240 $srv > "$log" 2>&1 && rc=0
	else
		end=$((SECONDS + 270))
		while ((SECONDS < end)); do
			# shellcheck disable=SC2086
			timeout 120 $cli $PEER_IP > "$log" 2>&1 && { rc=0; break; }
			grep -qiE 'refused|unreachable|no route|no server' "$log" || break
			sleep 2
		done
	fi
	if ((rc == 0)) && ! grep -qE "$result" "$log"; then
		echo "no result line (/$result/)"
		rc=1
	fi
	if (($(moved) == before)); then
		echo "no data through m0"
		rc=1
	fi
	grep -v "shared memory device" "$log" | tail -n $((rc ? 20 : 1))
	return $rc
}

# ucx_perftest's result line: the client's "Final:" (the server prints none).
PERF_RESULT=.
((VM_INDEX == 0)) && PERF_RESULT="^Final:"
ucx() {
	side "ucx-$1" "$PERF_RESULT" \
		"env UCX_NET_DEVICES=m0:1 UCX_TLS=rc_verbs,ud_verbs ucx_perftest -p $3 -t $1 -n 500 -s $2" \
		"env UCX_NET_DEVICES=m0:1 UCX_TLS=rc_verbs,ud_verbs ucx_perftest -p $3 -t $1 -n 500 -s $2"
}
ok_if "vm$VM_INDEX: UCX UCT put_bw 64 KiB zero-copy over rc_verbs between two kernels" \
	side uct-put "$PERF_RESULT" \
	"ucx_perftest -d m0:1 -x rc_verbs -p 13400 -t put_bw -D zcopy -n 500 -s 65536" \
	"ucx_perftest -d m0:1 -x rc_verbs -p 13400 -t put_bw -D zcopy -n 500 -s 65536"
ok_if "vm$VM_INDEX: UCX UCP tag_bw 64 KiB over rc_verbs,ud_verbs between two kernels" \
	ucx tag_bw 65536 13401
ok_if "vm$VM_INDEX: UCX UCP tag_lat 8 B over rc_verbs,ud_verbs between two kernels" \
	ucx tag_lat 8 13402
ok_if "vm$VM_INDEX: UCX UCP stream_bw 4 KiB over rc_verbs,ud_verbs between two kernels" \
	ucx stream_bw 4096 13403
ucp_chk() {
	build_ucp_check || return 1
	side "ucp-$1" "^ucp_check $1: ok" \
		"env UCX_NET_DEVICES=m0:1 UCX_TLS=rc_verbs,ud_verbs /tmp/ucp_check $1 -p $2" \
		"env UCX_NET_DEVICES=m0:1 UCX_TLS=rc_verbs,ud_verbs /tmp/ucp_check $1 -p $2"
}
ok_if "vm$VM_INDEX: UCX UCP tag API between two kernels: ping-pong 8 B-1 MiB, every byte checked" \
	ucp_chk tag 13404
ok_if "vm$VM_INDEX: UCX UCP stream API between two kernels: ping-pong 8 B-1 MiB, every byte checked" \
	ucp_chk stream 13405

fi_pp() {
	side "fi-$2" '#sent' "fi_pingpong -p $1 -e $2 -d m0 -B $3 -I 200 -S 65536 -c" \
		"fi_pingpong -p $1 -e $2 -d m0 -P $3 -I 200 -S 65536 -c"
}
ok_if "vm$VM_INDEX: libfabric verbs msg endpoints between two kernels: fi_pingpong 64 KiB, data checked" \
	fi_pp verbs msg 47601
ok_if "vm$VM_INDEX: libfabric verbs;ofi_rxm rdm endpoints between two kernels: fi_pingpong 64 KiB, data checked" \
	fi_pp "verbs;ofi_rxm" rdm 47602

# mpi_2vm: VM 1 serves vmrsh until VM 0 says quit, and needs the daemon
# mpirun started through it to end well; VM 0 runs mpirun and needs both
# ranks' "ok".  Each VM needs data through its own device.
RSH=$_lib_dir/progs/vmrsh.py
mpi_2vm() {
	local before rc=0 log=/tmp/eco-mpi.log end
	mpicc -O2 -Wall -Wextra -o /tmp/mpi_check "$_lib_dir/progs/mpi_check.c" || return 1
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	before=$(moved)
	if ((VM_INDEX == 1)); then
		timeout 280 "$RSH" serve 10.88.0.2 > $log 2>&1 || rc=1
		# The session that ran the daemon, and how it ended.
		awk '/ runs: .*orted/ { d = 1; next } d && /^vmrsh: exit/ { print; d = 0 }' \
			$log | grep -qx "vmrsh: exit 0" || { echo "no daemon session ended with 0"; rc=1; }
	else
		end=$((SECONDS + 270))
		until "$RSH" $PEER_IP true > /dev/null 2>&1; do
			((SECONDS < end)) || { echo "vm1's vmrsh never answered"; return 1; }
			sleep 2
		done
		timeout 240 mpirun -np 2 --host 10.88.0.1,10.88.0.2 \
			--mca plm_rsh_agent "$RSH" --mca oob_tcp_if_include eth0 \
			--mca pml ucx --mca btl ^vader,tcp,openib,uct \
			-x UCX_TLS=rc_verbs,ud_verbs,self -x UCX_NET_DEVICES=m0:1 \
			/tmp/mpi_check > $log 2>&1 || rc=1
		"$RSH" quit $PEER_IP > /dev/null
		[ "$(grep -c ': ok$' $log)" = 2 ] || rc=1
	fi
	(($(moved) > before)) || { echo "no data through m0"; rc=1; }
	grep -v 'shared memory device' $log | tail -n $((rc ? 20 : 2))
	return $rc
}
ok_if "vm$VM_INDEX: Open MPI (pml ucx) between two kernels: ping-pong 8 B-1 MiB and allreduce checked" \
	mpi_2vm

rdma link delete m0
modprobe -r metaroce
tap_done
