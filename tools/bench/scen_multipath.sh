#!/bin/bash
# Multipath over ECMP (the driver sprays a connection over paths_per_plane
# UDP source ports; the routers hash them onto links): hosts mpa/mpb joined
# by BENCH_MP_LINKS veth links, each rate-limited to BENCH_LINK_MBIT (under
# TCG the CPU, not a veth, would be the bottleneck otherwise), each host's
# address on a dummy device and an ECMP route with the L4 hash.
# Throughput of ib_write_bw 64 KiB, 8 QPs over 1, 2 and 4 links, and the
# throughput series when one of two links silently drops everything.

MP_A=10.80.0.1 MP_B=10.80.0.2

setup_ecmp() {
	local h i
	ip netns add mpa
	ip netns add mpb
	for h in mpa mpb; do
		ip -n $h link set lo up
		ip netns exec $h sysctl -qw net.ipv4.fib_multipath_hash_policy=1 \
			net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
	done
	for i in 1 2 3 4; do
		ip link add a$i netns mpa type veth peer name b$i netns mpb
		ip -n mpa addr add 10.81.$i.1/24 dev a$i
		ip -n mpb addr add 10.81.$i.2/24 dev b$i
		ip -n mpa link set a$i up
		ip -n mpb link set b$i up
		tc -n mpa qdisc add dev a$i root tbf rate "${BENCH_LINK_MBIT}mbit" burst 32k latency 20ms
		tc -n mpb qdisc add dev b$i root tbf rate "${BENCH_LINK_MBIT}mbit" burst 32k latency 20ms
	done
	ip -n mpa link add da type dummy
	ip -n mpb link add db type dummy
	ip -n mpa addr add $MP_A/32 dev da
	ip -n mpb addr add $MP_B/32 dev db
	ip -n mpa link set da up
	ip -n mpb link set db up
	ecmp_links 1
	ip netns exec mpa rdma link add ma type metaroce netdev da
	ip netns exec mpb rdma link add mb type metaroce netdev db
	wait_for 10 gid_index ma && wait_for 10 gid_index mb
}

# ecmp_links K: both hosts route to each other over links 1..K.
ecmp_links() {
	local i na=() nb=()
	for ((i = 1; i <= $1; i++)); do
		na+=(nexthop via "10.81.$i.2" dev "a$i")
		nb+=(nexthop via "10.81.$i.1" dev "b$i")
	done
	ip -n mpa route replace $MP_B/32 src $MP_A "${na[@]}"
	ip -n mpb route replace $MP_A/32 src $MP_B "${nb[@]}"
}

# Bytes links 1..4 of host A sent, as "n1 n2 n3 n4".
link_tx() {
	local i
	for i in 1 2 3 4; do
		printf '%s ' "$(ip netns exec mpa cat /sys/class/net/a$i/statistics/tx_bytes)"
	done
}

scen_multipath() {
	local k t0 t1 ppp
	if ! mroce_feature multipath; then
		rec group=multipath stack=mroce-ecmp status=not_measured error="$(mroce_feature_why multipath)"
		return
	fi
	if ! setup_ecmp; then
		rec group=multipath stack=mroce-ecmp status=failed error="ECMP topology setup failed"
		return
	fi
	# More paths than links, so that the hash spreads a connection over all
	# of them (usage.md: "more paths spread load over more ECMP routes").
	ppp=$(cat /sys/module/metaroce/parameters/paths_per_plane)
	echo "$BENCH_MP_PATHS" > /sys/module/metaroce/parameters/paths_per_plane
	for k in $BENCH_MP_LINKS; do
		log "multipath: $k links"
		ecmp_links "$k"
		t0=$(link_tx)
		if perftest mroce-ecmp $((BENCH_DUR + 60)) ib_write_bw -s 65536 -q 8 -D "$BENCH_DUR"; then
			t1=$(link_tx)
			rec group=multipath stack=mroce-ecmp links="$k" link_mbit="$BENCH_LINK_MBIT" status=ok \
				mbps="$PT_MBPS" mbps_perftest="${PT_F[3]}" perftest_clock="$PT_CLOCK" link_tx_bytes="$(awk -v a="$t0" -v b="$t1" 'BEGIN {
					n = split(a, x, " "); split(b, y, " ")
					for (i = 1; i <= n; i++) printf "%s%d", (i > 1 ? "," : ""), y[i] - x[i] }')" \
				paths_per_plane="$(cat /sys/module/metaroce/parameters/paths_per_plane)"
		else
			rec group=multipath stack=mroce-ecmp links="$k" link_mbit="$BENCH_LINK_MBIT" status=failed \
				error="$PT_ERR"
		fi
	done
	log "multipath: outage of link 2 of 2"
	ecmp_links 2
	# The links are shaped: the outage's end restores the shaping.
	PLANE_SHAPE=1
	OUTAGE_PLANES="2 ECMP links" series mroce-ecmp mpa a2 mpb b2
	PLANE_SHAPE=0
	echo "$ppp" > /sys/module/metaroce/parameters/paths_per_plane
}
