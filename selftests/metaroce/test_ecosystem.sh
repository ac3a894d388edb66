#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# vm: -t 1500
#
# What AI and HPC software runs on verbs, between two MetaRoCE devices in
# two network namespaces (issue 22):
#  - UCX's one-sided puts: ucx_perftest ucp_put_bw over rc_verbs.
#  - UCX's UCP layer with rc_verbs and ud_verbs (its default for a RoCE
#    device) and the GID it picks itself (the IPv4-mapped one):
#    ucx_perftest tag_bw, tag_lat and stream_bw, and progs/ucp_check.c,
#    which ping-pongs 8 B to 1 MiB through UCP's tag and stream APIs with
#    every byte checked (ucx_perftest never looks at the data).  UCX's UD
#    transport reads
#    the destination address out of the GRH by the packet type in wc.sl
#    (MRC-DGM-010); without it every datagram was dropped and the run
#    aborted with "UD endpoint ...: unhandled timeout error".
#  - libfabric's verbs provider, msg endpoints and rdm ones through
#    ofi_rxm (which asks for a CQ of 196608 entries: max_cqe), fi_pingpong
#    with its data checks (-c).
#  - Open MPI with the UCX PML: progs/mpi_check.c ping-pongs 8 B to 1 MiB
#    and runs an allreduce, every byte and sum checked, rank 0 in host A
#    and rank 1 in host B, each with its device (UCX_NET_DEVICES).
# Every case must also have moved its data through the devices (counters).
. "$(dirname "$0")/lib.sh"

for t in ucx_perftest fi_pingpong mpirun mpicc; do
	if ! command -v $t >/dev/null; then
		echo "1..0 # SKIP $t is not installed (tools/deps.sh)"
		exit "$KSFT_SKIP"
	fi
done
tap_plan 9
setup_two_hosts
add_devices ua ub
# UCX probes /dev/shm even when its transports are limited to verbs.
mkdir -p /dev/shm
mountpoint -q /dev/shm || mount -t tmpfs shm /dev/shm
cnt() { hw_counter "$1" "$2"; }
moved() { echo $(($(cnt ub rx_data_packets) + $(cnt ub ud_rx_packets))); }

# pair PORT "SERVER CMD" "CLIENT CMD": the server in host B, the client in
# host A once the server listens on TCP PORT (its out-of-band exchange);
# both must succeed and data must have reached ub.
pair() {
	local port=$1 srv=$2 cli=$3 pid rc=0 before
	before=$(moved)
	# shellcheck disable=SC2086
	# The server's bound covers its start and the client's run.
	ip netns exec $NS_B timeout 200 $srv > /tmp/eco-srv.log 2>&1 &
	pid=$!
	listening() { kill -0 $pid 2>/dev/null && ip netns exec $NS_B ss -ltnH | grep -q ":$port "; }
	wait_for 60 listening || { echo "server not listening on $port after 60 s"; rc=1; }
	# shellcheck disable=SC2086
	((rc)) || ip netns exec $NS_A timeout 120 $cli > /tmp/eco-cli.log 2>&1 || rc=1
	((rc)) && kill $pid 2>/dev/null
	wait $pid || rc=1
	if (($(moved) == before)); then
		echo "no data reached ub"
		rc=1
	fi
	if ((rc)); then
		echo "client:"; grep -v 'shared memory device' /tmp/eco-cli.log | tail -n 20
		echo "server:"; grep -v 'shared memory device' /tmp/eco-srv.log | tail -n 20
		dev_counters ua ub
		return 1
	fi
	grep -v 'shared memory device' /tmp/eco-cli.log | tail -n 1
	# fi_pingpong can exit 0 on an error: its results must be there.
	case $cli in
	fi_pingpong*) grep -q '#sent' /tmp/eco-cli.log || { echo "no results line"; return 1; } ;;
	esac
}

# UCX's one-sided puts over rc_verbs.  Not through UCT directly here:
# ucx_perftest hands its client's parameters, the -d device among them, to
# its server, and one kernel shows every device to both namespaces, so a
# UCT run here is a loopback on the client's device (counted: ua sent to
# itself, ub saw nothing).  test_ecosystem_2vm runs UCT put_bw between two
# kernels, where both devices are m0; here the puts go through UCP.
ok_if "UCX put_bw 64 KiB over rc_verbs (ucx_perftest ucp_put_bw; UCT itself between two VMs)" \
	pair 13337 "env UCX_NET_DEVICES=ub:1 UCX_TLS=rc_verbs,ud_verbs ucx_perftest -t ucp_put_bw -n 500 -s 65536" \
		"env UCX_NET_DEVICES=ua:1 UCX_TLS=rc_verbs,ud_verbs ucx_perftest -t ucp_put_bw -n 500 -s 65536 $IP_B"

# UCX: UCP over rc_verbs + ud_verbs, GID chosen by UCX.
ucx() {
	pair 13337 "env UCX_NET_DEVICES=ub:1 UCX_TLS=rc_verbs,ud_verbs ucx_perftest -t $1 -n 500 -s $2" \
		"env UCX_NET_DEVICES=ua:1 UCX_TLS=rc_verbs,ud_verbs ucx_perftest -t $1 -n 500 -s $2 $IP_B"
}
ok_if "UCX UCP tag_bw 64 KiB over rc_verbs,ud_verbs (ucx_perftest)" ucx tag_bw 65536
ok_if "UCX UCP tag_lat 8 B over rc_verbs,ud_verbs (ucx_perftest)" ucx tag_lat 8
ok_if "UCX UCP stream_bw 4 KiB over rc_verbs,ud_verbs (ucx_perftest)" ucx stream_bw 4096
ucp_chk() {
	build_ucp_check || return 1
	pair 13500 "env UCX_NET_DEVICES=ub:1 UCX_TLS=rc_verbs,ud_verbs /tmp/ucp_check $1" \
		"env UCX_NET_DEVICES=ua:1 UCX_TLS=rc_verbs,ud_verbs /tmp/ucp_check $1 $IP_B"
}
ok_if "UCX UCP tag API over rc_verbs,ud_verbs: ping-pong 8 B-1 MiB, every byte checked (ucp_check)" \
	ucp_chk tag
ok_if "UCX UCP stream API over rc_verbs,ud_verbs: ping-pong 8 B-1 MiB, every byte checked (ucp_check)" \
	ucp_chk stream

# libfabric: the verbs provider; -c checks every byte.
fi_pp() {
	pair 47592 "fi_pingpong -p $1 -e $2 -d ub -I 200 -S 65536 -c" \
		"fi_pingpong -p $1 -e $2 -d ua -I 200 -S 65536 -c $IP_B"
}
ok_if "libfabric verbs msg endpoints: fi_pingpong 64 KiB, data checked" fi_pp verbs msg
ok_if "libfabric verbs;ofi_rxm rdm endpoints: fi_pingpong 64 KiB, data checked" \
	fi_pp "verbs;ofi_rxm" rdm

# Open MPI, UCX PML: one rank in each host.  PMIx (the launcher's channel
# to its ranks) is TCP: a bridge in the root namespace reaches both hosts.
ip link add mpibr type bridge
ip addr add 10.99.0.254/24 dev mpibr
ip link set mpibr up
i=1
for ns in $NS_A $NS_B; do
	ip link add mpi$i type veth peer name mpictl netns "$ns"
	ip link set mpi$i master mpibr
	ip link set mpi$i up
	ip -n "$ns" addr add 10.99.0.$i/24 dev mpictl
	ip -n "$ns" link set mpictl up
	i=$((i + 1))
done
cat > /tmp/mpi-rank.sh <<EOF
#!/bin/bash
# Rank 0 in host A on ua, rank 1 in host B on ub.
if [ "\$OMPI_COMM_WORLD_RANK" = 0 ]; then ns=$NS_A dev=ua; else ns=$NS_B dev=ub; fi
exec ip netns exec \$ns env UCX_NET_DEVICES=\$dev:1 "\$@"
EOF
chmod +x /tmp/mpi-rank.sh
mpi_job() {
	local before rc=0
	mpicc -O2 -Wall -Wextra -o /tmp/mpi_check "$(dirname "$0")/progs/mpi_check.c" || return 1
	before=$(moved)
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	PMIX_MCA_ptl_tcp_if_include=mpibr PMIX_MCA_ptl_tcp_disable_ipv6_family=1 \
		timeout 300 mpirun -np 2 --oversubscribe --mca pml ucx \
		--mca btl ^vader,tcp,openib,uct -x UCX_TLS=rc_verbs,ud_verbs,self \
		/tmp/mpi-rank.sh /tmp/mpi_check > /tmp/eco-mpi.log 2>&1 || rc=1
	grep -v 'shared memory device' /tmp/eco-mpi.log | tail -n 20
	[ "$(grep -c ': ok$' /tmp/eco-mpi.log)" = 2 ] || rc=1
	(($(moved) > before)) || { echo "no data reached ub"; rc=1; }
	return $rc
}
ok_if "Open MPI (pml ucx), ranks in two namespaces: ping-pong 8 B-1 MiB and allreduce checked" \
	mpi_job

rdma link delete ua
rdma link delete ub
modprobe -r metaroce
tap_done
