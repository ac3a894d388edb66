#!/bin/bash
# Scale: how many RC QP pairs between two devices can be set up and carry
# an RDMA WRITE each (tools/bench/qpscale.c), and kernel memory per QP
# (/proc/meminfo Slab + VmallocUsed + PageTables deltas); for MetaRoCE also
# per connection (QPs spread over several peer addresses, one connection
# per address pair).

# gid_of DEV IPV4: index of DEV's GID for that address.
gid_of() {
	local hex f
	hex=$(printf '%02x%02x:%02x%02x' ${2//./ })
	f=$(grep -l "^0000:0000:0000:0000:0000:ffff:$hex$" \
		/sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null | head -n 1)
	[ -n "$f" ] && basename "$f"
}

# scale_case STACK DEV_A DEV_B N GID_A GIDS_B [QPSCALE_ARGS...]
scale_case() {
	local st=$1 da=$2 db=$3 n=$4 ga=$5 gb=$6 log kv k v args=() rc
	shift 6
	log=$BENCH_LOGS/scale-$st-$n-$(tr ',' '_' <<< "$gb" | cut -c1-20).log
	timeout -k 5 "$BENCH_SCALE_TIMEOUT" "$BENCH_QPSCALE" -a "$da" -b "$db" -n "$n" \
		-x "$ga" -X "$gb" "$@" > "$log" 2>&1
	rc=$?
	while IFS='=' read -r k v; do
		[[ $k =~ ^[a-z_A-Z]+$ ]] && args+=("$k=$v")
	done < "$log"
	if ((rc == 0)); then
		rec group=scale stack="$st" status=ok "${args[@]}"
	else
		local why
		((rc == 124 || rc == 137)) && why="timed out after ${BENCH_SCALE_TIMEOUT}s"
		[ -n "${why:-}" ] || why="exit $rc: $(grep -E 'error|cannot' "$log" | head -n 3 | tr '\n' ' ')"
		rec group=scale stack="$st" status=failed requested="$n" error="$why" "${args[@]}"
	fi
	return $rc
}

scen_scale() {
	local n i gids="" ok
	[ -x "$BENCH_QPSCALE" ] || {
		rec group=scale stack=mroce-2ns status=failed error="qpscale not built ($BENCH_QPSCALE)"
		return
	}
	for n in $BENCH_SCALE_N; do
		log "scale: mroce-2ns $n QP pairs"
		scale_case mroce-2ns ra rb "$n" "$(gid_index ra)" "$(gid_index rb)" || break
	done
	for n in $BENCH_SCALE_N; do
		log "scale: rxe-1ns $n QP pairs"
		scale_case rxe-1ns rxe0 rxe1 "$n" "$(gid_index rxe0)" "$(gid_index rxe1)" || break
	done
	# Connections: the same QP count over 1 and over BENCH_PEERS addresses of B.
	for ((i = 1; i <= BENCH_PEERS; i++)); do
		ip -n $NS_B addr add 10.77.0.$((100 + i))/24 dev vb
	done
	ok=1
	for ((i = 1; i <= BENCH_PEERS; i++)); do
		wait_for 10 gid_of rb 10.77.0.$((100 + i)) || ok=0
		gids+=${gids:+,}$(gid_of rb 10.77.0.$((100 + i)))
	done
	if ((ok)); then
		log "scale: mroce-2ns $BENCH_PEERS peers"
		# -w 3: memory again once the paths idled past win_idle_ms.
		scale_case mroce-2ns-peers ra rb "$BENCH_PEERS" "$(gid_index ra)" \
			"$(gid_of rb 10.77.0.101)" -w 3
		scale_case mroce-2ns-peers ra rb "$BENCH_PEERS" "$(gid_index ra)" "$gids" -w 3
	else
		rec group=scale stack=mroce-2ns-peers status=failed error="extra addresses of vb got no GIDs"
	fi
	for ((i = 1; i <= BENCH_PEERS; i++)); do
		ip -n $NS_B addr del 10.77.0.$((100 + i))/24 dev vb
	done
}
