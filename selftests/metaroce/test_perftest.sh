#!/bin/bash
# vm: -t 1500
# Unmodified perftest between the two namespaces: every RC test
# (ib_{send,write,read}_{bw,lat}, ib_atomic_{bw,lat}) and UD ib_send_{bw,lat},
# with one QP, with four (-q 4, bandwidth tests: perftest's latency tests
# take one QP) and connected through rdma_cm (-R).  Both
# sides must finish without errors and report sane figures: the expected
# iteration count, a positive bandwidth or a finite positive latency.  The
# server's device must have received at least one data packet per message
# and sent no NAK.
#
# perftest measures time in TSC cycles and refuses to report when its
# frequency estimate is noisy (TCG: "Correlation coefficient r^2 < 0.9");
# such a run is repeated (at most twice), never counted as a pass.
. "$(dirname "$0")/lib.sh"

RC_TESTS=(send_bw send_lat write_bw write_lat read_bw read_lat atomic_bw
	  atomic_lat)
tap_plan $((${#RC_TESTS[@]} * 2 + ${#RC_TESTS[@]} / 2 + 4 + 1))
setup_two_hosts
modprobe rdma_ucm
ip netns exec $NS_A rdma link add ra type metaroce netdev va
ip netns exec $NS_B rdma link add rb type metaroce netdev vb
wait_for 10 gid_index ra
wait_for 10 gid_index rb
GA=$(gid_index ra)
GB=$(gid_index rb)
SRV=/tmp/perf-server.log
CLI=/tmp/perf-client.log

cnt() { cat /sys/class/infiniband/"$1"/ports/1/hw_counters/"$2"; }
naks() {
	local f n=0
	for f in /sys/class/infiniband/"$1"/ports/1/hw_counters/nak_*_sent; do
		n=$((n + $(cat "$f")))
	done
	echo $n
}

# result_ok LOG ITERS: the line after the "#bytes" header has ITERS
# iterations and positive, finite figures.
result_ok() {
	awk -v iters="$2" '
		/#bytes/ { hdr = 1; lat = /t_min/; next }
		hdr && NF >= 4 {
			hdr = 0; found = 1
			if ($2 != iters) { print "iterations " $2 " != " iters; bad = 1 }
			# bw: BW average ($4) > 0; lat: t_min, t_typical > 0, finite
			if (lat) { if (!($3 > 0) || !($5 > 0) || $5 ~ /inf|nan/) bad = 1 }
			else if (!($4 > 0)) bad = 1
			if (bad) print "bad figures: " $0
		}
		END { exit !(found && !bad) }' "$1"
}

# run1 RDMA_CM TOOL ARGS...: one server/client run; 0 ok, 1 fail, 2 retry.
run1() {
	local cm=$1 tool=$2 pid rc=0 sa ca
	shift 2
	if ((cm)); then
		sa=(-R) ca=(-R)
	else
		sa=(-x "$GB") ca=(-x "$GA")
	fi
	ip netns exec $NS_B timeout 150 "$tool" -d rb "${sa[@]}" "$@" \
		> $SRV 2>&1 &
	pid=$!
	if ((cm)); then
		wait_for 20 bash -c "rdma res show cm_id | grep -q 'state LISTEN'"
	else
		wait_for 20 bash -c "ip netns exec $NS_B ss -ltnH | grep -q ':18515 '"
	fi || rc=1
	if ((rc == 0)); then
		ip netns exec $NS_A timeout 150 "$tool" -d ra "${ca[@]}" "$@" \
			$IP_B > $CLI 2>&1 || rc=1
	fi
	wait $pid || rc=1
	if grep -q "Correlation coefficient\|Can't produce a report" $CLI $SRV
	then
		return 2
	fi
	return $rc
}

# perf NAME RDMA_CM ITERS TOOL ARGS...
perf() {
	local name=$1 cm=$2 iters=$3 tool=$4 try rc=1 qps=1 before nb
	local rx=rx_data_packets
	shift 4
	[[ " $* " == *" -q 4 "* ]] && qps=4
	[[ " $* " == *" -c UD "* ]] && rx=ud_rx_packets
	before=$(cnt rb $rx)
	nb=$(naks rb)
	for try in 1 2 3; do
		run1 "$cm" "$tool" -n "$iters" "$@"
		rc=$?
		((rc == 2)) || break
		diag "$name: perftest could not calibrate the TSC, run again"
	done
	if ((rc == 0)) && ! result_ok $CLI $((iters * qps)); then
		rc=1
	fi
	if ((rc == 0)) && grep -qi "error\|failed\|unable" $CLI $SRV; then
		rc=1
	fi
	if ((rc == 0)) &&
	   (($(cnt rb $rx) - before < iters * qps)); then
		echo "rb received $(($(cnt rb $rx) - before)) data packets ($rx)"
		rc=1
	fi
	if ((rc == 0)) && (($(naks rb) != nb)); then
		echo "rb sent NAKs"
		rc=1
	fi
	if ((rc)); then
		echo "client:"; cat $CLI; echo "server:"; cat $SRV
		return 1
	fi
	diag "$name: $(awk '/#bytes/ { getline; print; exit }' $CLI)"
}

size() { [[ $1 == atomic* ]] || echo "-s 4096"; }
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
for t in "${RC_TESTS[@]}"; do
	# shellcheck disable=SC2046
	ok_if "ib_$t -R (rdma_cm)" perf "ib_$t -R" 1 100 ib_$t $(size $t)
done
ok_if "ib_send_bw -c UD" perf "ib_send_bw -c UD" 0 200 ib_send_bw -c UD -s 1024
ok_if "ib_send_lat -c UD" perf "ib_send_lat -c UD" 0 200 ib_send_lat -c UD -s 1024
ok_if "ib_send_bw -c UD -q 4 -R" perf "ib_send_bw -c UD -q 4 -R" 1 100 \
	ib_send_bw -c UD -q 4 -s 512
ok_if "ib_send_lat -c UD -R" perf "ib_send_lat -c UD -R" 1 100 \
	ib_send_lat -c UD -s 512

ok_if "no user objects left" bash -c \
	'! rdma res show qp | grep -v "\[ib_core\]" | grep -q . &&
	 ! rdma res show cm_id | grep -q .'

rdma link delete ra
rdma link delete rb
modprobe -r metaroce
tap_done
