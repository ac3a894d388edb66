#!/bin/bash
# vm: -t 900
# The compliance suite against our own driver: host B has no MetaRoCE
# device and plays the peer (selftests/compliance/conformance.py, the same
# runner as `make compliance TARGET=<ip>`) of device ra in host A, whose
# verbs side is driven by the target agent (selftests/compliance/target.py).
# One TAP point per requirement ID the runner checked (untested IDs are
# listed as diagnostics only), plus one for the run itself.
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
COMP=$here/../compliance
OUT=/tmp/mroce-compliance.txt

setup_two_hosts
ip netns exec $NS_A rdma link add ra type metaroce netdev va
# The peer is Python under TCG: it answers within ~100 ms, not within the
# microseconds the default loss timers expect of a fabric.  Slower timers
# keep the target from declaring its paths dead between our answers.
P=/sys/module/metaroce/parameters
echo 2000000 > $P/rto_max_us
echo 200000 > $P/rto_min_us
echo 200000 > $P/rto_initial_us
wait_for 10 gid_index ra
ip netns exec $NS_A /usr/bin/python3 $COMP/target.py ra 4794 > /tmp/agent.log 2>&1 &
agent=$!
wait_for 60 grep -q listening /tmp/agent.log
# Two more addresses of host B that host A has no connection with: a
# target QP towards one makes the target the initiator (conf_init.py).
EXTRA="10.77.0.3 10.77.0.4"
for ip in $EXTRA; do
	ip -n $NS_B addr add $ip/24 dev vb
done
ip netns exec $NS_B timeout 600 /usr/bin/python3 -u $COMP/conformance.py $IP_B $IP_A 4794 \
	$EXTRA > $OUT 2>&1
rc=$?

checked=$(grep -cE '^MRC-[A-Z]+-[0-9]+ +(pass|fail)' $OUT)
tap_plan $((checked + 1))
grep -E '^MRC-[A-Z]+-[0-9]+ +(pass|fail)' $OUT > $OUT.checked
while read -r id st note; do
	case $st in
	pass) ok_if "$id" true ;;
	fail) ok_if "$id $note" false ;;
	esac
done < $OUT.checked
ok_if "conformance run completed (exit $rc)" bash -c "! grep -q '^aborted' $OUT && grep -q '^summary' $OUT"
diag "$(grep -vE '^MRC-' $OUT)"
diag "untested: $(grep -E '^MRC-[A-Z]+-[0-9]+ +untested' $OUT | awk '{print $1}' | tr '\n' ' ')"
kill $agent 2>/dev/null
wait $agent 2>/dev/null
rdma link delete ra
modprobe -r metaroce
tap_done
