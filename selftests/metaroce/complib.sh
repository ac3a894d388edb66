# shellcheck shell=bash
# The compliance suite against our own driver, shared by test_compliance
# (IPv4) and test_compliance_v6: host B has no MetaRoCE device and plays
# the peer (selftests/compliance/conformance.py, the same runner as
# `make compliance TARGET=<ip>`) of device ra in host A, whose verbs side
# is driven by the target agent (selftests/compliance/target.py).
# One TAP point per requirement ID the runner checked (untested IDs are
# listed as diagnostics only), plus one for the run itself.
# Source lib.sh first.

COMP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../compliance" && pwd)

# target_up: device ra in host A with the target agent (port 4794) driving
# it; $agent is the agent's PID.
target_up() {
	ip netns exec $NS_A rdma link add ra type metaroce netdev va
	# The peer is Python under TCG: it answers within ~100 ms, not within
	# the microseconds the default loss timers expect of a fabric.  Slower
	# timers keep the target from declaring its paths dead between our
	# answers.
	P=/sys/module/metaroce/parameters
	echo 2000000 > $P/rto_max_us
	echo 200000 > $P/rto_min_us
	echo 200000 > $P/rto_initial_us
	wait_for 10 gid_index ra
	ip netns exec $NS_A /usr/bin/python3 $COMP/target.py ra 4794 > /tmp/agent.log 2>&1 &
	agent=$!
	wait_for 60 grep -q listening /tmp/agent.log
}

# run_compliance 4|6: the whole run over IPv4 or IPv6 addresses.
run_compliance() {
	local out=/tmp/mroce-compliance.txt local_ip target_ip extra rc ip
	local pfx=24

	setup_two_hosts
	if [ "$1" = 6 ]; then
		local_ip=$IP6_B target_ip=$IP6_A extra="fd77::3 fd77::4 fd77::5 fd77::6 fd77::7" pfx=64
	else
		local_ip=$IP_B target_ip=$IP_A extra="10.77.0.3 10.77.0.4 10.77.0.5 10.77.0.6 10.77.0.7"
	fi
	target_up
	# Five more addresses of host B that host A has no connection with: a
	# target QP towards one makes the target the initiator (conf_init.py,
	# conf_cack.py).
	for ip in $extra; do
		ip -n $NS_B addr add $ip/$pfx dev vb nodad
	done
	# Under the debug kernel the target's timers in timed checks run
	# longer (conformance.py, MROCE_SLOW from lib.sh).
	# shellcheck disable=SC2086
	ip netns exec $NS_B timeout 600 /usr/bin/python3 -u \
		$COMP/conformance.py $local_ip $target_ip 4794 $extra > $out 2>&1
	rc=$?

	grep -E '^MRC-[A-Z]+-[0-9]+ +(pass|fail)' $out > $out.checked
	tap_plan $(($(wc -l < $out.checked) + 1))
	while read -r id st note; do
		case $st in
		pass) ok_if "$id" true ;;
		fail) ok_if "$id $note" false ;;
		esac
	done < $out.checked
	ok_if "conformance run completed (exit $rc)" \
		bash -c "! grep -q '^aborted' $out && grep -q '^summary' $out"
	diag "$(grep -vE '^MRC-' $out)"
	diag "untested: $(grep -E '^MRC-[A-Z]+-[0-9]+ +untested' $out | awk '{print $1}' | tr '\n' ' ')"
	kill $agent 2>/dev/null
	wait $agent 2>/dev/null
	rdma link delete ra
	modprobe -r metaroce
	tap_done
}
