#!/bin/bash
# vm: -t 1500
# Unmodified perftest between the two namespaces: every RC test
# (ib_{send,write,read}_{bw,lat}, ib_atomic_{bw,lat}) with one QP and with
# four (-q 4, bandwidth tests: perftest's latency tests take one QP); the
# rdma_cm (-R) and UD runs are in test_perftest_cm.  Both
# sides must finish without errors and report sane figures: the expected
# iteration count, a positive bandwidth or a finite positive latency.  The
# server's device must have received at least one data packet per message
# and sent no NAK.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/perflib.sh"
tap_plan $((${#RC_TESTS[@]} + ${#RC_TESTS[@]} / 2 + 2))
perf_devices

for t in "${RC_TESTS[@]}"; do
	# shellcheck disable=SC2046
	ok_if "ib_$t" perf "ib_$t" 0 100 ib_$t $(size $t)
done
# perftest runs several QPs in its bandwidth tests only.
for t in "${RC_TESTS[@]}"; do
	[[ $t == *_bw ]] || continue
	# shellcheck disable=SC2046
	ok_if "ib_$t -q 4" perf "ib_$t -q 4" 0 50 ib_$t -q 4 $(size $t)
done
# ACK coalescing (spec 8.2): a bulk WRITE stream into rb is acknowledged
# with fewer ACKs than data packets.  Not far fewer: every message's LAST
# packet and every packet that fills a small window (AR, MRC-PATH-038) is
# acknowledged at once, and windows are small under emulation.
coalesced() {
	local a0 r0 acks rx
	a0=$(cnt rb acks_sent) r0=$(cnt rb rx_data_packets)
	perf "ib_write_bw 64 KiB" 0 200 ib_write_bw -s 65536 || return 1
	acks=$(($(cnt rb acks_sent) - a0)) rx=$(($(cnt rb rx_data_packets) - r0))
	echo "rb: $rx data packets, $acks ACKs"
	((rx > 0 && acks * 4 < rx * 3))
}
ok_if "ACK coalescing: a bulk WRITE takes under 3 ACKs per 4 packets" \
	coalesced
ok_if "no user objects left" user_objects_gone

rdma link delete ra
rdma link delete rb
modprobe -r metaroce
tap_done
