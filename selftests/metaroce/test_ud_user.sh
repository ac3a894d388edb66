#!/bin/bash
# vm: -t 900
# UD through the userspace provider (mapped rings): ibv_ud_pingpong between
# two namespaces, sizes up to the active MTU, with and without completion
# events; then pyverbs checks every byte and work completion field, CQ
# overflow, completion events (armed through the ring and by command),
# posting errors, CQ resize, flushes; and two UD QPs on one SRQ receiving
# from two senders (pyverbs/ud_srq.py two; test_srq_user runs the rest).
. "$(dirname "$0")/lib.sh"

PP_TESTS=7
PY_TESTS=(data mix overflow events errors ah_from_wc resize flush)
tap_plan $((PP_TESTS + ${#PY_TESTS[@]} + 3))
setup_two_hosts
add_devices mra0 mrb0
GA=$(gid_index mra0)
GB=$(gid_index mrb0)
diag "GID index: mra0 $GA, mrb0 $GB"

# pingpong ARGS...: server in mrb, client in mra, both with ARGS.
pingpong() { pingpong_pair ibv_ud_pingpong mra0 mrb0 "$@"; }

ok_if "ibv_ud_pingpong (defaults: 1024 bytes, 1000 iterations)" pingpong
for s in 1 64 512 1000; do
	ok_if "ibv_ud_pingpong -s $s -n 300" pingpong -s $s -n 300
done
ok_if "ibv_ud_pingpong -e (completion events) -s 1024 -n 300" pingpong -e -n 300
ok_if "ibv_ud_pingpong -e -s 8 -r 16 -n 500" pingpong -e -s 8 -r 16 -n 500

for t in "${PY_TESTS[@]}"; do
	ok_if "pyverbs: $t" timeout 240 /usr/bin/python3 \
		selftests/metaroce/pyverbs/ud_user.py "$t" mra0 mrb0
done

ok_if "pyverbs: two UD QPs on one SRQ, two senders, every byte" \
	timeout 240 /usr/bin/python3 selftests/metaroce/pyverbs/ud_srq.py \
	two mra0 mrb0

events() { build_prog ud_stream && timeout 60 /tmp/ud_stream -E mra0 mrb0; }
ok_if "completion events: CQ armed by the REQ_NOTIFY_CQ command and by the ring" \
	events

ok_if "no user objects left" bash -c \
	'! rdma res show qp | grep -v "\[ib_core\]" | grep -q . &&
	 rdma res show | grep -q "mra0: pd 1 cq 1 qp 1 cm_id 0 mr 0 ctx 0"'

rdma link delete mra0
rdma link delete mrb0
modprobe -r metaroce
tap_done
