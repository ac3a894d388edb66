#!/bin/bash
# Carried ACKs (spec 8.6): 8-byte latency (BENCH_CACK_OPS: READ, WRITE,
# SEND, ATOMIC; none in the smoke run) and the atomic rate between the two namespaces with ack_carry 0 (every ACK a
# packet of its own) and 1 (the default), each on devices made anew (the
# capability is offered when a connection opens), with the packets both
# devices sent per operation; rxe alongside.  Sourced by guest.sh (lib.sh
# and scen_perftest.sh loaded; BENCH_* set).

# cack_devices: the two namespaces' MetaRoCE devices again, so that their
# next connection takes the tunables as they are now.
cack_devices() {
	ip netns exec $NS_A rdma link delete ra
	ip netns exec $NS_B rdma link delete rb
	ip netns exec $NS_A rdma link add ra type metaroce netdev va
	ip netns exec $NS_B rdma link add rb type metaroce netdev vb
	wait_for 10 gid_index ra && wait_for 10 gid_index rb
}

# cack_pkts OP V K0 N0: the packets per operation of the case just run.
cack_pkts() {
	rec group=cack_pkts cack="$2" op="$1" status=ok \
		packets=$(($(mroce_cnt ra tx_packets) + $(mroce_cnt rb tx_packets) - $3)) \
		requests=$(($(mroce_cnt rb rx_data_packets) - $4)) \
		carried=$(($(mroce_cnt ra acks_carried) + $(mroce_cnt rb acks_carried)))
}

scen_cack() {
	local p=/sys/module/metaroce/parameters/ack_carry def v op k0 n0
	[ -n "$BENCH_CACK_OPS" ] ||
		{ rec group=cack status=not_measured error="not part of this run"; return; }
	[ -e $p ] || { rec group=cack status=not_measured error="no ack_carry tunable"; return; }
	def=$(cat $p)
	for v in 0 1; do
		echo "$v" > $p
		cack_devices
		for op in $BENCH_CACK_OPS; do
			log "cack: ack_carry $v, ib_${op}_lat"
			k0=$(($(mroce_cnt ra tx_packets) + $(mroce_cnt rb tx_packets)))
			n0=$(mroce_cnt rb rx_data_packets)
			LAT_GROUP=cack LAT_TAG=cack=$v lat_case mroce-2ns "$op"
			cack_pkts "${op}_lat" "$v" "$k0" "$n0"
		done
		log "cack: ack_carry $v, ib_atomic_bw"
		k0=$(($(mroce_cnt ra tx_packets) + $(mroce_cnt rb tx_packets)))
		n0=$(mroce_cnt rb rx_data_packets)
		AT_GROUP=cack LAT_TAG=cack=$v atomic_case mroce-2ns
		cack_pkts atomic_bw "$v" "$k0" "$n0"
	done
	echo "$def" > $p
	cack_devices
	for op in $BENCH_CACK_OPS; do
		LAT_GROUP=cack LAT_TAG=cack=rxe lat_case rxe-1ns "$op"
	done
	AT_GROUP=cack LAT_TAG=cack=rxe atomic_case rxe-1ns
}
