#!/bin/bash
# UCX and libfabric over MetaRoCE between the two namespaces (issue 22),
# each beside the same library over TCP on the same veth pair: rxe runs
# neither in this VM (usage guide, section 3), so TCP is the baseline.
#  - ucx_perftest (UCP): tag_bw 64 KiB and tag_lat 8 B, UCX_TLS
#    rc_verbs,ud_verbs on the MetaRoCE devices against UCX_TLS tcp on the
#    veths;
#  - fi_pingpong, 8 B and 64 KiB, every byte checked (-c): verbs msg
#    endpoints, verbs;ofi_rxm rdm endpoints, and the tcp provider's msg
#    endpoints.
# Sourced by guest.sh (lib.sh loaded; BENCH_* set); BENCH_ECO=1 runs it.

# eco_run NAME PORT "SERVER CMD" "CLIENT CMD": the server in $NS_B, then
# the client in $NS_A once the server listens on PORT (server_client).
# Sets ECO_OUT (the client's output file) or ECO_ERR.
eco_run() {
	local name=$BENCH_LOGS/eco-$1 port=$2
	ECO_OUT=$name.client ECO_ERR=""
	# shellcheck disable=SC2206
	SC_SERVER=(ip netns exec "$NS_B" timeout -k 5 150 $3)
	# shellcheck disable=SC2206
	SC_CLIENT=(ip netns exec "$NS_A" timeout -k 5 120 $4)
	server_client "$name" "$NS_B" "$port" || { ECO_ERR=$SC_ERR; return 1; }
	if ((SC_CRC || SC_SRC)); then
		ECO_ERR="client exit $SC_CRC, server exit $SC_SRC: $(grep -v 'shared memory' "$ECO_OUT" | tail -n 2 | tr '\n' ' ')"
		return 1
	fi
}

# eco_ucx TEST SIZE ITERS TRANSPORT: one ucx_perftest case, one record.
# Its "Final:" line: iterations, latency 50%/average/overall (us),
# bandwidth average/overall (MB/s), message rate average/overall.  The
# median is the latency reported (lat_us): on a loaded host a few stalls
# of a vCPU make the average (lat_avg_us) many times the median.
eco_ucx() {
	local t=$1 size=$2 n=$3 tr=$4 env_s env_c f
	if [ "$tr" = mroce ]; then
		env_s="UCX_TLS=rc_verbs,ud_verbs UCX_NET_DEVICES=rb:1"
		env_c="UCX_TLS=rc_verbs,ud_verbs UCX_NET_DEVICES=ra:1"
	else
		env_s="UCX_TLS=tcp UCX_NET_DEVICES=vb"
		env_c="UCX_TLS=tcp UCX_NET_DEVICES=va"
	fi
	BENCH_PORT=$((BENCH_PORT + 1))
	if ! eco_run "ucx-$t-$tr" $BENCH_PORT \
		"env $env_s ucx_perftest -p $BENCH_PORT -t $t -s $size -n $n" \
		"env $env_c ucx_perftest -p $BENCH_PORT -t $t -s $size -n $n $IP_B"; then
		rec group=eco lib=ucx case="$t" size="$size" transport="$tr" status=failed error="$ECO_ERR"
		return
	fi
	read -r -a f <<< "$(grep '^Final:' "$ECO_OUT" | tail -n 1)"
	if ((${#f[@]} < 9)); then
		rec group=eco lib=ucx case="$t" size="$size" transport="$tr" status=failed \
			error="no Final: line: $(tail -n 2 "$ECO_OUT" | tr '\n' ' ')"
		return
	fi
	rec group=eco lib=ucx case="$t" size="$size" transport="$tr" status=ok \
		lat_us="${f[2]}" lat_avg_us="${f[3]}" mbps="${f[6]}" rate="${f[8]}"
}

# eco_fi PROVIDER EP SIZE TRANSPORT: one fi_pingpong case, one record.
# Its results line: bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec.
eco_fi() {
	local prov=$1 ep=$2 size=$3 tr=$4 dev_s="" dev_c="" f
	[ "$tr" = mroce ] && dev_s="-d rb" dev_c="-d ra"
	BENCH_PORT=$((BENCH_PORT + 1))
	if ! eco_run "fi-$ep-$size-$tr" $BENCH_PORT \
		"fi_pingpong -p $prov -e $ep $dev_s -B $BENCH_PORT -I 500 -S $size -c" \
		"fi_pingpong -p $prov -e $ep $dev_c -P $BENCH_PORT -I 500 -S $size -c $IP_B"; then
		rec group=eco lib=fi case="$ep" prov="$prov" size="$size" transport="$tr" \
			status=failed error="$ECO_ERR"
		return
	fi
	# fi_pingpong can exit 0 on an error: the line after "#sent" is the result.
	read -r -a f <<< "$(grep -A1 '#sent' "$ECO_OUT" | tail -n 1)"
	if ((${#f[@]} < 8)); then
		rec group=eco lib=fi case="$ep" prov="$prov" size="$size" transport="$tr" \
			status=failed error="no results line: $(tail -n 2 "$ECO_OUT" | tr '\n' ' ')"
		return
	fi
	rec group=eco lib=fi case="$ep" prov="$prov" size="$size" transport="$tr" status=ok \
		mbps="${f[5]}" lat_us="${f[6]}"
}

scen_eco() {
	local t size
	if [ "${BENCH_ECO:-0}" != 1 ]; then
		rec group=eco status=not_measured error="not part of this run"
		return
	fi
	for t in ucx_perftest fi_pingpong; do
		command -v $t > /dev/null ||
			{ rec group=eco status=not_measured error="$t not installed"; return; }
	done
	mkdir -p /dev/shm
	mountpoint -q /dev/shm || mount -t tmpfs shm /dev/shm
	for t in mroce tcp; do
		log "eco: ucx_perftest over $t"
		eco_ucx tag_bw 65536 500 $t
		eco_ucx tag_lat 8 1000 $t
	done
	for size in 8 65536; do
		log "eco: fi_pingpong $size B"
		eco_fi verbs msg $size mroce
		eco_fi "verbs;ofi_rxm" rdm $size mroce
		eco_fi tcp msg $size tcp
	done
}
