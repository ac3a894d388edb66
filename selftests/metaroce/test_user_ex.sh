#!/bin/bash
# vm: -t 900
# Extended verbs through the userspace provider: pyverbs checks
# ibv_create_cq_ex (start/next/end_poll, every read_*, completion
# timestamps against the device clock and the wall clock), ibv_create_qp_ex
# with the ibv_wr_* builders for every opcode on RC and UD (data and
# completions checked), their error rules, ibv_query_device_ex,
# ibv_query_rt_values_ex and ibv_rereg_mr; then the unmodified
# ibv_rc_pingpong with the new send API (-N) and completion timestamps (-t),
# buffers validated (-c).
. "$(dirname "$0")/lib.sh"

PY_TESTS=(device cqex cqex_batch qpex_rc qpex_ud qpex_errors rereg)
tap_plan $((${#PY_TESTS[@]} + 5))
setup_two_hosts
add_devices mra0 mrb0

for t in "${PY_TESTS[@]}"; do
	ok_if "pyverbs: $t" timeout 240 /usr/bin/python3 \
		selftests/metaroce/pyverbs/ex_user.py "$t" mra0 mrb0
done

pingpong() { pingpong_pair ibv_rc_pingpong mra0 mrb0 "$@"; }

# -t prints the spread of receive completion timestamps (device clock, ns):
# they must be positive and ordered, and the average below the run time.
ts_ok() {
	local out max min avg
	out=$(pingpong "$@") || { echo "$out"; return 1; }
	max=$(sed -n 's/^Max receive completion clock cycles = //p' /tmp/pp-client.log)
	min=$(sed -n 's/^Min receive completion clock cycles = //p' /tmp/pp-client.log)
	avg=$(sed -n 's/^Average receive completion clock cycles = //p' /tmp/pp-client.log)
	echo "$out; ts max $max min $min avg $avg"
	[ -n "$max" ] && [ -n "$min" ] && [ -n "$avg" ] || return 1
	awk -v max="$max" -v min="$min" -v avg="$avg" \
		'BEGIN { exit !(min > 0 && min <= avg && avg <= max && max < 60e9) }'
}

ok_if "ibv_rc_pingpong -N (new send API, validated)" pingpong -N -c -n 200
ok_if "ibv_rc_pingpong -N -s 65536 -e" pingpong -N -c -e -s 65536 -n 20
ok_if "ibv_rc_pingpong -t (completion timestamps)" ts_ok -t -c -n 100
# (Not with -e: after an event, rc_pingpong -t fails on an empty CQ, which
# happens whenever a second completion arrives between re-arming and polling.)
ok_if "ibv_rc_pingpong -t -N" ts_ok -t -N -c -n 100

ok_if "no user objects left" bash -c \
	'! rdma res show qp | grep -v "\[ib_core\]" | grep -q . &&
	 ! rdma res show mr | grep -q .'

rdma link delete mra0
rdma link delete mrb0
modprobe -r metaroce
tap_done
