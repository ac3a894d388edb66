#!/bin/bash
# vm: -t 1500
# Stateful fuzzing (issue 18): tools/mrsfuzz plays the peer of a live
# connection to device ra (from 10.77.0.3 in host B) and sends packets that
# are valid in every field but one relation between packets and state
# (Seg Shift, Offset, Message Length, SSN, MSN, PSN, PLW, SACK bits,
# extension lengths, epochs, tokens, CIDs, QPNs, responses to requests
# never sent or after destroy: the classes are listed in mrsfuzz.c and
# usage.md).  The target holds state they can hit: the target agent
# (compliance/target.py) posts READs to the fuzzer's peer, which answers
# them only in part until the end, so forged responses land on open WQEs;
# the fuzzer keeps valid WRITEs of its own in progress; one READ-holding
# QP is destroyed while the fuzzing runs.  Meanwhile ra and rb carry
# verified legitimate traffic: user RC pingpongs (livelib: progs/rc_pp)
# and the kernel verbs module's SEND/WRITE/READ (every byte checked).
#
# Each round: fresh QPs (sfuzzprep.py prep), the fuzzer learns the READs
# the target posts, fuzzes, completes the READs; then every READ's data,
# every completed WRITE and the absence of poison (the payload byte of all
# mutated packets) in all target memory are checked (sfuzzprep.py check).
# The last round ends with the lifecycle classes (a CONNECT with another
# epoch from the same peer, then packets of the dead connection).
#
#   SFUZZ_SECONDS  fuzzing time over all rounds (default 90; scaled for a
#                  slow kernel by the caller, not packets per second)
#   SFUZZ_COUNT    stop each round after COUNT/ROUNDS packets instead
#                  (the full run: 1000000; then SFUZZ_SECONDS=0 lifts the
#                  time bound)
#   SFUZZ_ROUNDS   rounds (default 3)
#   SFUZZ_CLASSES  only these classes (comma separated), for a bisect
#   SFUZZ_SKIP     not these classes (comma separated)
#   SFUZZ_VERBOSE  1: progress on /dev/console (the VM's console log)
#
# The full million-packet run (make stateful-fuzz, about an hour in TCG):
#   tools/vm/run.sh -t 7200 -- env SFUZZ_COUNT=1000000 SFUZZ_SECONDS=0 \
#       SFUZZ_ROUNDS=10 selftests/metaroce/test_stateful_fuzz.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"

here=$(cd "$(dirname "$0")" && pwd)
COMP=$here/../compliance
FUZZ=$here/../../tools/mrsfuzz
TOTAL_S=${SFUZZ_SECONDS:-90}
COUNT=${SFUZZ_COUNT:-0}
ROUNDS=${SFUZZ_ROUNDS:-3}
FUZZ_IP=10.77.0.3
CNT=/sys/class/infiniband/ra/ports/1/hw_counters
W=/tmp/mroce-sfuzz
export KV_A=ra
export KV_B=rb
rm -rf $W
mkdir -p $W

tap_plan 12
[ -x "$FUZZ" ] || make -s -C "$here/../.." tools/mrsfuzz
ok_if "mrsfuzz is built" test -x "$FUZZ"
setup_two_hosts
ip -n "$NS_B" addr add $FUZZ_IP/24 dev vb
add_devices ra rb
# The fuzzer's packet socket sees what ra sends to it; rb must not (it
# would answer with stateless RESETs, ending the fuzzer's connection).
ip netns exec "$NS_B" nft -f - <<NFT || diag "nft: the fuzzer's replies are not kept from rb"
table ip fuzz {
	chain in {
		type filter hook input priority 0;
		ip daddr $FUZZ_IP udp dport 4793 drop
	}
}
NFT
# The fuzzer's valid packets must not be lost on the veth: it checks the
# data they carry (a lost segment is resent, a lost ACK is not).
sysctl -qw net.core.netdev_max_backlog=20000
# Under TCG the guest stalls for many milliseconds: no spurious RTOs on
# the legitimate connection (as test_rc_loss).
echo 20000 > /sys/module/metaroce/parameters/rto_min_us
# The fuzzer's connection is made by Python (slow under TCG): it must not
# be freed as half-open before its first packet confirms it.
echo 60000 > /sys/module/metaroce/parameters/half_open_timeout_ms
# The debug kernel runs the guest at a few dozen fuzzed packets a second:
# a restart check's PROBEs (rto_max_us) and the kernel verbs QPs' retry
# budget (0.5 s at timeout 14) are too short for the fuzzer's and the
# legitimate peers' answers (seen: 15 checks failed, READs of 1 MiB
# failed RETRY_EXC_ERR).
live_iters=100
if debug_kernel; then
	echo 3000000 > /sys/module/metaroce/parameters/rto_max_us
	# The kernel verbs' and the user pingpongs' (livelib: rc_pp) QPs.
	export MROCE_QP_TIMEOUT=19
	# A pingpong of 100 took longer than the whole fuzzing.
	live_iters=20
fi
backlog0=$(backlog_dropped)

snap() { (cd $CNT && grep -H . drop_* ud_drop_* rx_packets duplicates path_duplicates late_arrivals nak_*_sent conn_* resets_* stream_closes_*) | sort > "$1"; }
# delta COUNTER: how much COUNTER of ra moved during the fuzzing.
delta() {
	echo $(($(sed -n "s/^$1://p" $W/after) - $(sed -n "s/^$1://p" $W/before)))
}

# Legitimate traffic, verified: user RC pingpongs (livelib) and kernel
# verbs SEND/WRITE/READ of 64 KiB, one module load after the other.
live_start $live_iters
kv_loop() {
	local n=0
	while [ ! -e $W/stop ]; do
		if kverbs rc_send,rc_write,rc_read size=65536 iters=16 \
			>/dev/null 2>&1; then
			echo "ok $n" >> $W/kv.log
		else
			echo "FAIL $n" >> $W/kv.log
			dmesg | grep mroce_kverbs | tail -n 20 >> $W/kv.log
			rmmod mroce_kverbs 2>/dev/null
		fi
		n=$((n + 1))
	done
}
kv_loop &
kv_pid=$!
kv_runs() { local n; n=$(grep -c '^ok' $W/kv.log 2>/dev/null); echo "${n:-0}"; }

ip netns exec "$NS_A" /usr/bin/python3 "$COMP"/target.py ra 4794 > $W/agent.log 2>&1 &
agent=$!
wait_for 60 grep -q listening $W/agent.log

sfp() { ip netns exec "$NS_B" /usr/bin/python3 "$COMP"/sfuzzprep.py "$@"; }
progress() {
	[ "${SFUZZ_VERBOSE:-0}" = 1 ] && echo "sfuzz: $*" > /dev/console
	return 0
}

snap $W/before
runs0=$(live_runs)
kv0=$(kv_runs)
per_s=0
((TOTAL_S > 0)) && per_s=$(((TOTAL_S + ROUNDS - 1) / ROUNDS))
per_c=0
((COUNT > 0)) && per_c=$((COUNT / ROUNDS))
: > $W/rounds.log
: > $W/check.log
# round R: prepare, fuzz, check; everything logged.
round() {
	local r=$1 next=$2 rc=0 args=() fz
	progress "round $r: prep"
	sfp prep $FUZZ_IP "$IP_A" 4794 $W/state "$r" 2 2 3 "$next" >> $W/rounds.log 2>&1 ||
		{ echo "round $r: prep failed"; return 1; }
	rm -f $W/stopfuzz $W/state.destroyed
	args=(-f "$W/state" -s "$RANDOM" -w 180 -r 8 -o "$W/report" -K "$W/stopfuzz"
		-D "$W/state.destroyed")
	((per_s > 0)) && args+=(-d "$per_s")
	if ((per_c > 0)); then
		((r == ROUNDS - 1)) && per_c=$((COUNT - per_c * (ROUNDS - 1)))
		args+=(-c "$per_c")
	else
		args+=(-c 1000000000)
	fi
	[ -n "${SFUZZ_CLASSES:-}" ] && args+=(-C "$SFUZZ_CLASSES")
	[ -n "${SFUZZ_SKIP:-}" ] && args+=(-X "$SFUZZ_SKIP")
	((r == ROUNDS - 1)) && args+=(-L)
	ip netns exec "$NS_B" "$FUZZ" "${args[@]}" > $W/fuzz."$r".log 2>&1 &
	fz=$!
	wait_for 60 grep -q '^ready' $W/fuzz."$r".log || rc=1
	sfp post "$IP_A" 4794 $W/state >> $W/rounds.log 2>&1 || rc=1
	# A READ-holding QP goes while the fuzzing runs, its READs open.
	wait_for 240 grep -q '^learnt' $W/fuzz."$r".log
	# (soon: the agent, Python, takes seconds under TCG)
	sleep $(((per_s > 0 ? per_s : 20) / 10))
	progress "round $r: $(grep '^learnt' $W/fuzz."$r".log); destroy"
	sfp destroy "$IP_A" 4794 $W/state >> $W/rounds.log 2>&1 || rc=1
	# The fuzzer keeps the connection while the target is checked.
	while ! grep -q '^done' $W/fuzz."$r".log && kill -0 $fz 2>/dev/null; do
		sleep 1
	done
	progress "round $r: $(grep '^mutated' $W/fuzz."$r".log); check"
	echo "round $r:" >> $W/check.log
	sfp check "$IP_A" 4794 $W/state $W/report >> $W/check.log 2>&1 || rc=1
	touch $W/stopfuzz
	wait $fz || rc=1
	cat $W/fuzz."$r".log >> $W/rounds.log
	progress "round $r: $(tail -n 3 $W/check.log | tr '\n' ' ')"
	return $rc
}
fuzz() {
	local r next="" rc=0
	for ((r = 0; r < ROUNDS; r++)); do
		round $r "$next" || rc=1
		next=$(sed -n 's/^next own PSN //p' $W/fuzz."$r".log)
		# After the lifecycle classes the connection is gone: a new one.
		grep -q '^class epoch_restart [1-9]' $W/fuzz."$r".log && rm -f $W/state.json
	done
	return $rc
}
ok_if "$ROUNDS rounds of stateful fuzzing ran" fuzz
diag "$(grep -E '^(connection|mutated|received|learnt|destroyed)' $W/rounds.log)"
sleep 2
snap $W/after

# Classes and counts, summed over the rounds.
awk '/^class / { n[$2] += $3 } END { for (c in n) print c, n[c] }' \
	$W/fuzz.*.log | sort > $W/classes
total=$(awk '{ s += $2 } END { print s + 0 }' $W/classes)
diag "packets per class: $(tr '\n' ' ' < $W/classes)"
diag "mutated packets in all: $total"
classes_ok() {
	local hit
	hit=$(awk '$2 > 0' $W/classes | wc -l)
	echo "$hit classes with packets"
	if [ -n "${SFUZZ_CLASSES:-}" ]; then
		[ "$hit" -ge 1 ]
	else
		# Every class not skipped (SFUZZ_SKIP) sent packets.
		[ "$hit" -ge 20 ] && awk -v skip=",${SFUZZ_SKIP:-}," \
			'$2 == 0 && !index(skip, "," $1 ",") { print "no packets:", $1; bad = 1 }
			 END { exit bad }' $W/classes
	fi
}
ok_if "every mutation class sent packets (at least 20 classes)" classes_ok
if ((COUNT > 0)); then
	ok_if "$COUNT mutated packets sent" test "$total" -ge "$COUNT"
else
	ok_if "mutated packets sent ($total)" test "$total" -gt 0
fi
diag "$(cat $W/check.log)"
ok_if "READ data, completed WRITEs verified; no poison in any target memory" \
	bash -c "! grep -q '^FAIL' $W/check.log && grep -q '^checked' $W/check.log"
diag "backlog drops during the run: $(($(backlog_dropped) - backlog0))"

diag "counters of ra that moved:"
diag "$(join -t: $W/before $W/after | awk -F: '$3 != $2 { print $1 ": +" $3 - $2 }')"
# Each counter has classes that move it: with SFUZZ_CLASSES, some may not
# run, and one that moved is enough.
moved() {
	local c n=0
	for c in drop_bad_header drop_out_of_window drop_bad_token drop_no_conn \
		drop_no_stream drop_seg_window duplicates nak_seq_sent nak_inv_req_sent; do
		if [ "$(delta $c)" -gt 0 ]; then
			n=$((n + 1))
		elif [ -z "${SFUZZ_CLASSES:-}" ]; then
			echo "$c did not move"
			return 1
		fi
	done
	[ $n -gt 0 ]
}
ok_if "drops and NAKs counted by reason (bad_header, out_of_window, bad_token, no_conn, no_stream, seg_window, duplicates, NAK SEQUENCE, INVALID_REQUEST)" moved

ok_if "legitimate pingpongs completed during the fuzzing" test "$(live_runs)" -gt "$runs0"
ok_if "legitimate kernel verbs runs completed during the fuzzing" test "$(kv_runs)" -gt "$kv0"
runs1=$(live_runs)
ok_if "legitimate traffic completes after the fuzzing" live_more "$runs1" 180
touch $W/stop
stuck=""
live_stop || stuck="the pingpong loop"
wait_or_dump 300 $kv_pid || stuck="$stuck the kernel verbs loop"
ok_if "the legitimate traffic stops: nothing stuck" test -z "$stuck"
diag "pingpongs: $(live_runs), kernel verbs runs: $(kv_runs)"
ok_if "every legitimate transfer passed its data check" \
	bash -c "! grep -A30 FAIL $W/live.log && ! grep -A20 FAIL $W/kv.log"

kill $agent 2>/dev/null
wait $agent 2>/dev/null
unload() {
	timeout 60 rdma link delete ra && timeout 60 rdma link delete rb &&
		modprobe -r metaroce
}
ok_if "devices delete and the module unloads: no object left behind" unload
tap_done
