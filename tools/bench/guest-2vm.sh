#!/bin/bash
# The two-VM part of the benchmark (tools/vm/run.sh -n 2): ib_write_bw
# 64 KiB between two kernels joined by a virtual link, MetaRoCE and rxe,
# with netem loss on both VMs' eth0 (so both directions); then NVMe over
# Fabrics, 4 KiB random reads at queue depth 1 and 32 (nvme2vm.sh).  VM 1
# serves, VM 0 runs the clients and writes the records.
#
# Usage: guest-2vm.sh full|short|smoke
here=$(dirname "$(readlink -f "$0")")
mode=${1:-full}
. "$here/lib.sh"

# shellcheck disable=SC2034 # NVME_*: read by nvme2vm.sh
case $mode in
full) DUR=6 LOSSES="0 0.1 1 5 10" NVME_MIB=32 ;;
short) DUR=3 LOSSES="0 1 10" NVME_MIB=32 ;;
*) DUR=1 LOSSES="0 1" NVME_MIB=8 ;;
esac
# shellcheck disable=SC2034
NVME_QDS="1 32"
me=$((VM_INDEX + 1))
peer=$((2 - VM_INDEX))
PEER_IP=10.88.0.2
rm -f "$BENCH_REC"

ip addr add 10.88.0.$me/24 dev eth0
ip link set eth0 up
if ! wait_for 120 ping -c 1 -W 1 10.88.0.$peer; then
	((VM_INDEX == 0)) && rec group=loss where=two-vm stack=mroce-2vm loss_pct=0 status=failed \
		error="the peer VM never answered ping"
	exit 1
fi
rdma link add m0 type metaroce netdev eth0
BATCH=/sys/module/metaroce/parameters/tx_batch_pkts
BATCH_DEF=$(cat $BATCH)
modprobe rdma_rxe
rdma link add rxe0 type rxe netdev eth0
wait_for 10 gid_index m0 && wait_for 10 gid_index rxe0

# Ports advance in lockstep on both VMs: case k uses 22000 + k.
k=0
for st in mroce-2vm rxe-2vm; do
	dev=m0
	[ "$st" = rxe-2vm ] && dev=rxe0
	for loss in $LOSSES; do
		k=$((k + 1))
		port=$((22000 + k))
		# netem drops a UDP GSO batch whole: packet by packet while it
		# drops, so that the loss is per datagram (scen_loss.sh).
		if [ "$loss" = 0 ]; then
			tc qdisc del dev eth0 root 2>/dev/null
			echo "$BATCH_DEF" > $BATCH
		else
			tc qdisc replace dev eth0 root netem loss "$loss%"
			echo 1 > $BATCH
		fi
		name=$BENCH_LOGS/$st-$loss
		if ((VM_INDEX == 1)); then
			timeout -k 5 $((DUR + 90)) ib_write_bw -d $dev -x "$(gid_index $dev)" -p $port -F \
				-s 65536 -D $DUR > "$name.server" 2>&1
			continue
		fi
		# The server may not be up yet: retry while no QP info was exchanged.
		end=$((SECONDS + 60))
		while :; do
			timeout -k 5 $((DUR + 60)) ib_write_bw -d $dev -x "$(gid_index $dev)" -p $port -F \
				-s 65536 -D $DUR $PEER_IP > "$name.client" 2>&1
			rc=$?
			grep -q 'remote address' "$name.client" || ((SECONDS >= end)) || { sleep 1; continue; }
			break
		done
		line=$(pt_result "$name.client")
		read -r -a f <<< "$line"
		if ((rc == 0)) && [ -n "$line" ]; then
			rec group=loss where=two-vm stack=$st loss_pct="$loss" status=ok \
				mbps="$(bw_from_iters "${f[1]}" "${f[0]}" "$DUR" | cut -d' ' -f1)" iters="${f[1]}" \
				mbps_perftest="${f[3]}"
		else
			err="exit $rc"
			((rc == 124 || rc == 137)) && err="timed out after $((DUR + 60))s"
			rec group=loss where=two-vm stack=$st loss_pct="$loss" status=failed \
				error="$err: $(grep -iE 'fail|error|couldn' "$name.client" | head -n 2 | tr '\n' ' ')"
		fi
		# Let the server finish before the next case's netem change.
		sleep 2
	done
done
tc qdisc del dev eth0 root 2>/dev/null
echo "$BATCH_DEF" > $BATCH
. "$here/nvme2vm.sh"
nvme_cases
exit 0
