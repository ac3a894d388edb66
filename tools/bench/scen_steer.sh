#!/bin/bash
# Receive steering (spec 20.1): ib_write_bw 64 KiB with 1 and 8 QPs between
# the two namespaces with rx_steer 1 (the default) and 0, back to back,
# rxe (1 ns) alongside, each with the packets steered (both devices'
# rx_steered) and where the CPU went, per vCPU, from /proc/stat over the
# run: busy, of it softirq (NET_RX and the BH workqueue that takes steered
# packets) and system.  QP counts: BENCH_STEER_QPS; then BENCH_STEER_PEERS
# peers (addresses of rb) with 2 QPs each at once, steering on and off.  Sourced by guest.sh
# (lib.sh and scen_perftest.sh loaded; BENCH_* set).

# percpu_snap: "cpuN user nice system idle iowait irq softirq steal" per
# vCPU, one line each.
percpu_snap() { awk '/^cpu[0-9]/ { print $1, $2, $3, $4, $5, $6, $7, $8, $9 }' /proc/stat; }

# percpu_diff A B: "busy/softirq/system" in per cent per vCPU between two
# percpu_snap outputs, joined with spaces ("cpu0=93/71/12 cpu1=...").
percpu_diff() {
	awk 'NR == FNR { for (i = 2; i <= 9; i++) a[$1, i] = $i; next }
	{
		t = 0
		for (i = 2; i <= 9; i++) { d[i] = $i - a[$1, i]; t += d[i] }
		if (t <= 0) t = 1
		printf "%s%s=%.0f/%.0f/%.0f", sep, $1, 100 * (t - d[5] - d[6]) / t,
			100 * d[8] / t, 100 * d[4] / t
		sep = " "
	}' <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

# steer_case STACK QPS TAG: one ib_write_bw 64 KiB run and its record pair
# (group steer from bw_case, group steer_cpu with the CPU split).
steer_case() {
	local st=$1 qps=$2 tag=$3 c0 c1 s0 s1
	s0=$(($(mroce_cnt ra rx_steered) + $(mroce_cnt rb rx_steered)))
	c0=$(percpu_snap)
	BW_GROUP=steer BW_TAG=steer=$tag bw_case "$st" write 65536 "$qps"
	c1=$(percpu_snap)
	s1=$(($(mroce_cnt ra rx_steered) + $(mroce_cnt rb rx_steered)))
	rec group=steer_cpu steer="$tag" qps="$qps" status=ok steered=$((s1 - s0)) \
		cpus="$(percpu_diff "$c0" "$c1")"
}

# steer_peers TAG: BENCH_STEER_PEERS ib_write_bw 64 KiB runs of 2 QPs at
# once, from device ra to as many addresses of device rb (a connection
# each), one record (group steer_peers) with their summed rate, the packets
# steered and the CPU split.
steer_peers() {
	local tag=$1 n=$BENCH_STEER_PEERS i port ip g name err="" tot=0 r c0 c1 s0 s1
	local -a spids=() cpids=() names=()
	for ((i = 1; i <= n; i++)); do
		ip -n $NS_B addr add 10.77.0.$((200 + i))/24 dev vb
	done
	for ((i = 1; i <= n; i++)); do
		wait_for 10 gid_of rb 10.77.0.$((200 + i)) || err="address $i of vb got no GID"
	done
	s0=$(($(mroce_cnt ra rx_steered) + $(mroce_cnt rb rx_steered)))
	c0=$(percpu_snap)
	for ((i = 1; i <= n && ${#err} == 0; i++)); do
		BENCH_PORT=$((BENCH_PORT + 1))
		port=$BENCH_PORT ip=10.77.0.$((200 + i)) g=$(gid_of rb 10.77.0.$((200 + i)))
		name=$BENCH_LOGS/steer-peers-$tag-$i
		names+=("$name")
		in_ns $NS_B timeout -k 5 $((BENCH_DUR + 60)) ib_write_bw -d rb -x "$g" -p "$port" -F \
			-s 65536 -q 2 -D "$BENCH_DUR" > "$name.server" 2>&1 &
		spids+=($!)
		wait_for 60 listening $NS_B "$port" || err="server $i did not listen"
	done
	for ((i = 1; i <= ${#names[@]} && ${#err} == 0; i++)); do
		in_ns $NS_A timeout -k 5 $((BENCH_DUR + 60)) ib_write_bw -d ra -x "$(gid_index ra)" \
			-p $((BENCH_PORT - n + i)) -F -s 65536 -q 2 -D "$BENCH_DUR" \
			10.77.0.$((200 + i)) > "${names[i - 1]}.client" 2>&1 &
		cpids+=($!)
	done
	[ -n "$err" ] && kill "${spids[@]}" 2>/dev/null
	for i in "${!cpids[@]}"; do
		wait "${cpids[i]}" || err="client $((i + 1)) failed: $(grep -iE 'fail|error' "${names[i]}.client" | head -n 2 | tr '\n' ' ')"
	done
	for i in "${!spids[@]}"; do
		wait "${spids[i]}" || [ -n "$err" ] || err="server $((i + 1)) failed"
	done
	c1=$(percpu_snap)
	s1=$(($(mroce_cnt ra rx_steered) + $(mroce_cnt rb rx_steered)))
	for name in "${names[@]}"; do
		[ -n "$err" ] && break
		read -r -a r <<< "$(pt_result "$name.client")"
		[ -n "${r[1]:-}" ] || { err="no result line in $name.client"; break; }
		tot=$((tot + r[1]))
	done
	for ((i = 1; i <= n; i++)); do
		ip -n $NS_B addr del 10.77.0.$((200 + i))/24 dev vb
	done
	if [ -n "$err" ]; then
		rec group=steer_peers steer="$tag" peers="$n" qps=2 status=failed error="$err"
		return
	fi
	read -r r c <<< "$(bw_from_iters "$tot" 65536 "$BENCH_DUR")"
	rec group=steer_peers steer="$tag" peers="$n" qps=2 status=ok mbps="$r" iters="$tot" \
		steered=$((s1 - s0)) cpus="$(percpu_diff "$c0" "$c1")"
}

scen_steer() {
	local p=/sys/module/metaroce/parameters/rx_steer def n qps
	if [ ! -w $p ]; then
		rec group=steer stack=mroce-2ns status=failed error="no rx_steer tunable"
		return
	fi
	def=$(cat $p)
	for qps in $BENCH_STEER_QPS; do
		for n in 1 0; do
			echo "$n" > $p
			log "steer: rx_steer $n, $qps QP"
			steer_case mroce-2ns "$qps" "$n"
		done
		echo "$def" > $p
		log "steer: rxe, $qps QP"
		steer_case rxe-1ns "$qps" rxe
	done
	((BENCH_STEER_PEERS)) || return
	for n in 1 0; do
		echo "$n" > $p
		log "steer: rx_steer $n, $BENCH_STEER_PEERS peers x 2 QPs"
		steer_peers "$n"
	done
	echo "$def" > $p
}
