#!/bin/bash
# vm: -t 1500
# The Wireshark dissector (tools/wireshark/metaroce.lua) on real traffic:
# tcpdump captures UD pingpong, RC pingpong and kernel RDMA WRITE/READ/ATOMIC
# traffic between the two namespaces, then tshark with the dissector must
# decode every packet (CRC32C good, lengths per spec 4.4) and the decoded
# fields must match what was sent: QPNs, Q_Key, lengths, SSNs and segment
# offsets, PSNs rising per path, ACKs only for sent PSNs, the CONNECT
# handshake's CIDs and tokens used by every later packet.
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
CHECK="/usr/bin/python3 $here/../compliance/capcheck.py"
KO=$here/kverbs/mroce_kverbs.ko
CAP=/tmp/mroce-dissector.pcap

tap_plan 14
if ! command -v tshark >/dev/null; then
	echo "1..0 # SKIP tshark is not installed (tools/deps.sh)"
	exit $KSFT_SKIP
fi
setup_two_hosts
ip netns exec $NS_A rdma link add ra type metaroce netdev va
ip netns exec $NS_B rdma link add rb type metaroce netdev vb
wait_for 10 gid_index ra
wait_for 10 gid_index rb
# The captures show the datagrams a wire carries: without UDP segmentation
# offload on va and vb the stack cuts each GSO batch (spec 4.8) before the
# sending end, so the capture on va sees datagrams both ways.
uso() {
	ip netns exec $NS_A ethtool -K va tx-udp-segmentation "$1" >/dev/null &&
		ip netns exec $NS_B ethtool -K vb tx-udp-segmentation "$1" >/dev/null
}
uso off

# capture CMD...: run CMD with tcpdump capturing va's MetaRoCE packets in
# $CAP; fails if CMD does or the capture lost packets.
capture() {
	local rc
	rm -f $CAP.fields
	pcap_start $NS_A va $CAP udp port 4793
	"$@"
	rc=$?
	pcap_stop || return 1
	return $rc
}

# qpns LOG: "local remote" QPNs that an ibv_*_pingpong printed in LOG.
qpns() {
	local l r
	l=$(sed -n 's/.*local address:.*QPN \(0x[0-9a-f]*\).*/\1/p' "$1")
	r=$(sed -n 's/.*remote address:.*QPN \(0x[0-9a-f]*\).*/\1/p' "$1")
	echo "$l $r"
}

# UD: 50 iterations of 512 bytes.
capture pingpong_pair ibv_ud_pingpong ra rb -s 512 -n 50 >/dev/null
ud_rc=$?
read -r cq sq <<<"$(qpns /tmp/pp-client.log)"
ok_if "UD pingpong captured" [ $ud_rc = 0 -a -s $CAP ]
ok_if "UD: every packet decodes, CRC32C good" $CHECK $CAP all
ok_if "UD: DATAGRAM QPNs, Q_Key, Payload Length match the pingpong" \
	$CHECK $CAP ud $IP_A "$cq" $IP_B "$sq" 512 50

# RC: 20 messages of 4096 bytes each way, validated by the pingpong.
capture pingpong_pair ibv_rc_pingpong ra rb -c -s 4096 -n 20 >/dev/null
rc_rc=$?
read -r cq sq <<<"$(qpns /tmp/pp-client.log)"
ok_if "RC pingpong captured" [ $rc_rc = 0 -a -s $CAP ]
ok_if "RC: every packet decodes, CRC32C good" $CHECK $CAP all
ok_if "RC: SEND QPNs, SSNs, offsets, LAST match the 4096-byte messages" \
	$CHECK $CAP rc $IP_A "$cq" $IP_B "$sq" 4096 20
ok_if "RC: PSNs rise per path, PLW window, ACKs cover only sent PSNs" \
	$CHECK $CAP psn
ok_if "RC: CONNECT/CONNECT_ACK decoded, CIDs and tokens used afterwards" \
	$CHECK $CAP connect $IP_A $IP_B

# Kernel verbs: WRITE, READ and ATOMIC (the kverbs module checks the bytes).
kv() {
	local t
	for t in rc_write rc_read rc_atomic; do
		insmod "$KO" dev_a=ra dev_b=rb ip_a=$IP_A ip_b=$IP_B tests=$t \
			size=4096 iters=8 || return 1
		rmmod mroce_kverbs
	done
}
capture kv
ok_if "kverbs rc_write, rc_read, rc_atomic captured" [ $? = 0 -a -s $CAP ]
ok_if "kverbs: every packet decodes, CRC32C good" $CHECK $CAP all
ok_if "kverbs: WRITE, READ_REQ/RESP, ATOMIC_CS/FA/RESP, ACK decoded" \
	$CHECK $CAP ops WRITE READ_REQ READ_RESP ATOMIC_CS ATOMIC_FA ATOMIC_RESP ACK
ok_if "kverbs: each response matches its request (SSN, QPNs, length)" \
	$CHECK $CAP rdma
ok_if "kverbs: responses carry their request's ACK (flag AKX, spec 8.6) decoded" \
	$CHECK $CAP carried

# With the offload on, the tap sees each batch whole, as one datagram: the
# dissector shows its packets, each with a good CRC32C.
uso on
echo 32 > /sys/module/metaroce/parameters/tx_batch_pkts
capture insmod "$KO" dev_a=ra dev_b=rb ip_a=$IP_A ip_b=$IP_B tests=rc_write \
	size=262144 iters=4
rmmod mroce_kverbs
# One tshark pass (tens of seconds under TCG): each frame's CRC statuses,
# comma separated for a frame of several packets.
tshark -n -X lua_script:"$here/../../tools/wireshark/metaroce.lua" -r $CAP \
	-Y metaroce -T fields -e metaroce.crc.status > $CAP.batches 2>/dev/null
diag "frames of several packets: $(grep -c , $CAP.batches), of $(wc -l < $CAP.batches)"
ok_if "a GSO batch captured whole decodes as its packets, CRC32C good" \
	eval '[ "$(grep -c , $CAP.batches)" -gt 0 ] && ! tr , "\n" < $CAP.batches | grep -qv "^1$"'

rdma link delete ra
rdma link delete rb
modprobe -r metaroce
tap_done
