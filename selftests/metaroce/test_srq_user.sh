#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# vm: -t 900
#
# Shared receive queues through the userspace provider: ibv_srq_pingpong
# (RC QPs that all receive from one SRQ, posted to without system calls)
# between the two namespaces, with buffer validation (-c), an SRQ with just
# one receive per QP (receivers not ready: RNR), completion events, and
# the SRQ verbs without traffic (pyverbs: ibv_create_srq_ex, the limit,
# a full ring, and oversized or refused requests); then UD QPs on an SRQ
# between the two namespaces (pyverbs/ud_srq.py): the limit event, an
# empty SRQ dropping and counting, the verbs of such a QP (test_ud_user
# runs its data test), and (progs/ud_srq_busy.c) ibv_destroy_srq of an
# SRQ that a UD QP uses.
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
UD_TESTS=(limit empty verbs)
tap_plan $((6 + ${#UD_TESTS[@]}))
setup_two_hosts
add_devices sa sb

# pingpong ARGS...: server in B, client in A; both must finish.
pingpong() { pingpong_pair ibv_srq_pingpong sa sb "$@"; }

ok_if "ibv_srq_pingpong -c (16 QPs on one SRQ, 4096 bytes, validated)" \
	pingpong -c -n 50
ok_if "ibv_srq_pingpong -c -q 4 -s 1 (1-byte messages)" pingpong -c -q 4 -s 1 -n 100
ok_if "ibv_srq_pingpong -c -q 8 -r 8 (one receive per QP: RNR when short)" \
	pingpong -c -q 8 -r 8 -n 50
ok_if "ibv_srq_pingpong -e -c (completion events)" pingpong -e -c -q 4 -n 50
ok_if "pyverbs: ibv_create_srq_ex, limit, full ring, refused requests" \
	ip netns exec $NS_B /usr/bin/python3 "$here/pyverbs/srq_user.py" sb
for t in "${UD_TESTS[@]}"; do
	ok_if "pyverbs: UD QPs on an SRQ: $t" timeout 240 /usr/bin/python3 \
		"$here/pyverbs/ud_srq.py" "$t" sa sb
done
ud_srq_busy() { build_prog ud_srq_busy && /tmp/ud_srq_busy sa sb; }
ok_if "ibv_destroy_srq of an SRQ a UD QP uses: EBUSY, the SRQ still works" \
	ud_srq_busy

rdma link delete sa
rdma link delete sb
modprobe -r metaroce
tap_done
