#!/bin/bash
# Shared helpers for MetaRoCE selftests (sourced).  TAP 13 output in the
# kselftest style: exit 0 when every test passed, 1 on any failure, 4 when
# the whole file was skipped.
set -u

_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

_tap_n=0
_tap_fail=0

tap_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

# ok_if DESCRIPTION COMMAND...: one test point, passing when COMMAND succeeds.
# Every point's wall time, and the test's time so far, follow it as a
# diagnostic (to find slow points, and slow stretches between points).
ok_if() {
	local desc=$1 out start=$SECONDS
	shift
	_tap_n=$((_tap_n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $_tap_n - $desc"
	else
		echo "not ok $_tap_n - $desc"
		_tap_fail=$((_tap_fail + 1))
		[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/# /'
	fi
	echo "# time: $((SECONDS - start)) s (at $SECONDS s)"
}

# fails_with DESCRIPTION ERRTEXT COMMAND...: COMMAND must fail and print ERRTEXT.
fails_with() {
	local desc=$1 want=$2 out
	shift 2
	_tap_n=$((_tap_n + 1))
	if out=$("$@" 2>&1); then
		echo "not ok $_tap_n - $desc"
		echo "# command succeeded but should have failed: $*"
		_tap_fail=$((_tap_fail + 1))
	elif ! grep -qi -- "$want" <<<"$out"; then
		echo "not ok $_tap_n - $desc"
		echo "# expected '$want' in: $out"
		_tap_fail=$((_tap_fail + 1))
	else
		echo "ok $_tap_n - $desc"
	fi
}

skip_test() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1 # SKIP $2"
}

tap_done() {
	if ((_tap_fail)); then
		echo "# $_tap_fail of $_tap_n failed"
		exit $KSFT_FAIL
	fi
	exit $KSFT_PASS
}

diag() {
	printf '%s\n' "$*" | sed 's/^/# /'
}

# wait_for SECONDS COMMAND...: poll until COMMAND succeeds.
wait_for() {
	local t=$1 i
	shift
	for ((i = 0; i < t * 10; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# pcap_start NS DEV FILE FILTER...: tcpdump in namespace NS writes DEV's
# packets that match FILTER to FILE, in the background; returns once it
# listens.  Not --immediate-mode: that takes libpcap's ring of fixed
# 256 KiB frames, 8 in the default buffer, and under TCG it dropped most of
# a kernel verbs transfer.  The 64 MiB ring of variable-length blocks keeps
# up; pcap_stop waits out the block timeout before it stops tcpdump.
pcap_start() {
	local ns=$1 dev=$2 file=$3
	shift 3
	rm -f "$file" /tmp/tcpdump.log
	ip netns exec "$ns" tcpdump -i "$dev" -s 0 -B 65536 -U -w "$file" "$@" \
		2>/tmp/tcpdump.log &
	_pcap_pid=$!
	wait_for 20 grep -q 'listening on' /tmp/tcpdump.log
}

# pcap_stop: stop pcap_start's tcpdump once its last block is written (the
# kernel retires a block at a 1 s timer tick that finds it still current:
# up to two ticks, and one more for margin).  Fails, saying why, if the
# kernel dropped packets (a capture with holes cannot be compared with what
# was sent) or tcpdump did not run to its end.
pcap_stop() {
	local dropped
	sleep 3
	kill -INT "$_pcap_pid"
	wait "$_pcap_pid"
	if ! grep -q 'packets\? captured' /tmp/tcpdump.log; then
		echo "# tcpdump did not run: $(tail -n 2 /tmp/tcpdump.log)" >&2
		return 1
	fi
	dropped=$(sed -n 's/^\([0-9]*\) packets\? dropped by kernel.*/\1/p' /tmp/tcpdump.log)
	if [ "${dropped:-0}" != 0 ]; then
		echo "# tcpdump: $dropped packets dropped by kernel" >&2
		return 1
	fi
}

# wait_or_dump S PID...: wait at most S seconds for the PIDs (children of
# this shell) to end.  If one still runs then, it is stuck: log the
# kernel's blocked tasks (sysrq w, into dmesg) and the stuck processes'
# kernel stacks as TAP comments, kill them, and return 1.
_pids_gone() {
	local p
	for p; do kill -0 "$p" 2>/dev/null && return 1; done
	return 0
}
wait_or_dump() {
	local s=$1 p c
	shift
	if wait_for "$s" _pids_gone "$@"; then
		for p; do wait "$p" 2>/dev/null; done
		return 0
	fi
	echo w > /proc/sysrq-trigger 2>/dev/null
	for p in "$@"; do
		for c in $p $(pgrep -P "$p" 2>/dev/null); do
			[ -r /proc/$c/stack ] || continue
			echo "# stuck: $c $(tr '\0' ' ' < /proc/$c/cmdline)"
			sed 's/^/#   /' /proc/$c/stack
		done
	done
	for p; do pkill -P "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
	return 1
}

# Two hosts: namespaces mra (10.77.0.1, fd77::1 on veth va) and mrb
# (10.77.0.2, fd77::2 on veth vb).
NS_A=mra
NS_B=mrb
IP_A=10.77.0.1
IP_B=10.77.0.2
IP6_A=fd77::1
IP6_B=fd77::2

setup_two_hosts() {
	ip netns add $NS_A
	ip netns add $NS_B
	ip link add va netns $NS_A type veth peer name vb netns $NS_B
	ip -n $NS_A addr add $IP_A/24 dev va
	ip -n $NS_B addr add $IP_B/24 dev vb
	ip -n $NS_A addr add $IP6_A/64 dev va nodad
	ip -n $NS_B addr add $IP6_B/64 dev vb nodad
	ip -n $NS_A link set lo up
	ip -n $NS_B link set lo up
	ip -n $NS_A link set va up
	ip -n $NS_B link set vb up
}

# add_second_pair ADDR_A ADDR_B: a second veth pair between the hosts, va2
# in host A with ADDR_A and vb2 in host B with ADDR_B (each "address/len
# [flags]"), left down: the link of a second plane.
add_second_pair() {
	ip link add va2 netns $NS_A type veth peer name vb2 netns $NS_B
	# shellcheck disable=SC2086
	ip -n $NS_A addr add $1 dev va2
	# shellcheck disable=SC2086
	ip -n $NS_B addr add $2 dev vb2
}

# The metaroce tool (tools/metaroce), in host A (mra) and host B (mrb);
# need_mr_tool skips the whole test when it is not built.
MR=tools/metaroce/metaroce
mra() { ip netns exec $NS_A $MR "$@"; }
mrb() { ip netns exec $NS_B $MR "$@"; }
need_mr_tool() {
	[ -x $MR ] || { echo "1..0 # SKIP $MR not built"; exit $KSFT_SKIP; }
}
# tracefs_on: tracefs mounted at $T (/sys/kernel/tracing), comm recording
# off.  Comm recording hooks sched_switch when an event is enabled, which
# patches __schedule's text while the other vCPU runs it; under TCG that
# once ended in an int3 Oops in __schedule (test_rc_loss, 2026-12-05).
T=/sys/kernel/tracing
tracefs_on() {
	[ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null
	echo 0 > $T/options/record-cmd
}
# conns_show DEV_A DEV_B: the connections and paths of DEV_A (host A) and
# DEV_B (host B) as the metaroce tool shows them, for the diagnostics of a
# failed transfer (at most 400 lines).
conns_show() {
	{ mra show "$1"; mrb show "$2"; } 2>&1 | head -n 400
}
# paths_on NS DEV PLANE [STATE [CONN]]: how many paths of DEV (in
# namespace NS) are on PLANE (a grep pattern) and, if STATE is not empty,
# in STATE; only those of connection CONN ("LOCAL -> PEER") if given.
paths_on() {
	ip netns exec "$1" $MR show "$2" |
		if [ -n "${5:-}" ]; then sed -n "/^  conn $5:/,/^  conn /p"; else cat; fi |
		grep -c "^    path [0-9]* plane $3 ${4:+$4 }"
}
# plane_all NS DEV PLANE STATE [CONN]: DEV has paths on PLANE (of CONN if
# given), all in STATE.
plane_all() {
	local n
	n=$(paths_on "$1" "$2" "$3" "" "${5:-}")
	[ "$n" -ge 1 ] && [ "$n" -eq "$(paths_on "$1" "$2" "$3" "$4" "${5:-}")" ]
}

# add_devices DEV_A DEV_B: MetaRoCE devices DEV_A on va in host A and DEV_B
# on vb in host B (setup_two_hosts first), waiting for their IPv4 GIDs.
add_devices() {
	ip netns exec $NS_A rdma link add "$1" type metaroce netdev va
	ip netns exec $NS_B rdma link add "$2" type metaroce netdev vb
	wait_for 10 gid_index "$1"
	wait_for 10 gid_index "$2"
}

# user_objects_gone: no QP but the kernel's own (ib_core's), no CM ID.
user_objects_gone() {
	! rdma res show qp | grep -v "\[ib_core\]" | grep -q . &&
		! rdma res show cm_id | grep -q .
}

# txp NS NETDEV: the packets NETDEV in namespace NS has sent.
txp() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/tx_packets"; }
# qdisc_dropped NS DEV: packets the root qdisc of DEV in NS dropped (netem).
qdisc_dropped() {
	ip netns exec "$1" tc -s qdisc show dev "$2" |
		sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -1
}
# backlog_dropped: packets the kernel dropped for a full per-CPU input
# backlog (netdev_max_backlog), summed over CPUs: a veth's only loss.
backlog_dropped() {
	local d sum=0

	for d in $(awk '{ print $2 }' /proc/net/softnet_stat); do
		sum=$((sum + 16#$d))
	done
	echo $sum
}

# kverbs TESTS [PARAMS...]: one run of the in-kernel verbs tests TESTS
# (kverbs/mroce_kverbs.ko, test_kverbs.sh) between the devices $KV_A and
# $KV_B at $KV_IP_A and $KV_IP_B, with the module's PARAMS; succeeds when
# every test passed.
KV_KO=$_lib_dir/kverbs/mroce_kverbs.ko
KV_A=la
KV_B=lb
KV_IP_A=$IP_A
KV_IP_B=$IP_B
# debug_kernel: true under the debug kernel of make check-debug (KASAN,
# lockdep, kmemleak under TCG: several times slower), for tests whose
# timers must grow with it.
debug_kernel() {
	case $(uname -r) in *-mroce-debug) return 0 ;; esac
	return 1
}
# MROCE_SLOW: how many times slower than the stock kernel this one is, for
# the Python checks whose packets must come within a kernel timer's span
# (the compliance suite, pyverbs/conn_life.py): 4 under the debug kernel.
MROCE_SLOW=1
debug_kernel && MROCE_SLOW=4
export MROCE_SLOW
# The RC QPs' timeout of the C test programs (progs/dev.c) and, on a slow
# kernel, of the kernel verbs (kverbs()): 14 (67 ms a try, 7 tries) on the
# stock kernel, 16 (0.27 s) on a slow one; a test that raises rto_max_us
# exports a larger one (test_stateful_fuzz, the soak).
MROCE_QP_TIMEOUT=14
((MROCE_SLOW > 1)) && MROCE_QP_TIMEOUT=16
export MROCE_QP_TIMEOUT
# Under a slow kernel (MROCE_SLOW > 1) the QPs' retry budget is
# MROCE_QP_TIMEOUT's (16: four times the default) and the wait for
# each completion (wc_timeout_ms: 10 s on the stock kernel; a 256 KiB
# WRITE took up to 29 s in the debug soak's faults); a qp_timeout=N or
# wc_timeout_ms=N among the caller's parameters comes later and wins.
kverbs() {
	local tests=$1
	shift
	((MROCE_SLOW > 1)) &&
		set -- qp_timeout="$MROCE_QP_TIMEOUT" \
			wc_timeout_ms=$((10000 * MROCE_SLOW)) "$@"
	insmod "$KV_KO" dev_a="$KV_A" dev_b="$KV_B" ip_a="$KV_IP_A" \
		ip_b="$KV_IP_B" tests="$tests" "$@" && rmmod mroce_kverbs
}
# kverbs_rounds N TESTS [PARAMS...]: N runs of kverbs TESTS PARAMS; stops
# at the first that fails.
kverbs_rounds() {
	local i n=$1
	shift
	for ((i = 0; i < n; i++)); do
		kverbs "$@" || return 1
	done
}

# build_ucp_check: progs/ucp_check.c (UCX's UCP, no verbs) as
# /tmp/ucp_check, once per VM.
build_ucp_check() {
	[ -x /tmp/ucp_check ] ||
		gcc -O2 -Wall -Wextra -o /tmp/ucp_check "$_lib_dir/progs/ucp_check.c" \
			-lucp -lucs
}
# build_prog NAME: compile progs/NAME.c with the programs' shared dev.c
# into /tmp/NAME.
build_prog() {
	gcc -O2 -Wall -Wextra -o /tmp/"$1" "$_lib_dir/progs/$1.c" \
		"$_lib_dir/progs/dev.c" -libverbs
}

# hw_counter DEV NAME: the value of port 1's counter NAME (rdma statistic).
hw_counter() {
	cat /sys/class/infiniband/"$1"/ports/1/hw_counters/"$2"
}

# The GID table entries (sysfs) of ibdev port 1, non-zero ones only.
ibdev_gids() {
	cat /sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null |
		grep -v '^0000:0000:0000:0000:0000:0000:0000:0000$'
}

# all_counters DEV...: every port counter of each DEV as "DEV name value"
# (one grep per device: a process per counter costs seconds under TCG).
all_counters() {
	local d
	for d in "$@"; do
		grep -H . /sys/class/infiniband/"$d"/ports/1/hw_counters/* |
			sed "s|^.*/\([^/]*\):|$d \1 |"
	done 2>/dev/null
}

# dev_counters DEV...: every non-zero port counter of each DEV, for the
# diagnostics of a failed test.
dev_counters() { all_counters "$@" | awk '$3 != "0"'; }

port_state() {
	rdma link show "$1/1" 2>/dev/null | sed -n 's/.* state \([A-Z_]*\) .*/\1/p'
}

# gid_index DEV: the index of DEV's IPv4-mapped GID (::ffff:a.b.c.d).
gid_index() {
	local f
	f=$(grep -l '^0000:0000:0000:0000:0000:ffff:' \
		/sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null | head -n 1)
	[ -n "$f" ] && basename "$f"
}

# pingpong_pair TOOL DEV_A DEV_B ARGS...: an ibv_*_pingpong TOOL, server on
# DEV_B in host B, client on DEV_A in host A, each with its IPv4-mapped GID
# and ARGS.  Both sides must finish; prints the client's result line, or
# on failure both sides' output, the counters and the connections.
# PP_PORT: its TCP port (default 18515, the tools' own); PP_LOG: where the
# logs go, PP_LOG-server.log and PP_LOG-client.log (default /tmp/pp).
pingpong_pair() {
	local tool=$1 da=$2 db=$3 rc=0 pid port=${PP_PORT:-18515}
	local srv=${PP_LOG:-/tmp/pp}-server.log cli=${PP_LOG:-/tmp/pp}-client.log
	shift 3
	ip netns exec $NS_B timeout 120 "$tool" -d "$db" -g "$(gid_index "$db")" \
		-p "$port" "$@" > $srv 2>&1 &
	pid=$!
	# A debug kernel (KASAN, lockdep) under TCG takes seconds to open
	# the device and start listening.
	wait_for 60 bash -c "ip netns exec $NS_B ss -ltnH | grep -q ':$port '" ||
		{ rc=1; echo "server not listening after 60 s" > $cli; }
	if ((rc == 0)); then
		ip netns exec $NS_A timeout 120 "$tool" -d "$da" \
			-g "$(gid_index "$da")" -p "$port" "$@" $IP_B > $cli 2>&1 || rc=1
	fi
	wait $pid || rc=1
	if ((rc)) || ! grep -q 'iters in' $cli || ! grep -q 'iters in' $srv; then
		echo "client:"; cat $cli; echo "server:"; cat $srv
		echo "counters:"; dev_counters "$da" "$db"
		echo "connections:"; conns_show "$da" "$db"
		return 1
	fi
	grep 'iters in' $cli
}

# rc_pingpong DEV_A DEV_B ITERS SIZE: a verified RC pingpong of ITERS
# messages of SIZE bytes between DEV_A (host A) and DEV_B (host B):
# ibv_rc_pingpong -c (pingpong_pair), or on a slow kernel (MROCE_SLOW > 1)
# progs/rc_pp (build_prog rc_pp first), whose QPs take MROCE_QP_TIMEOUT:
# ibv_rc_pingpong's is fixed at 14, about 0.5 s without progress, less
# than one RTT of the debug kernel under load.
rc_pingpong() {
	if ((MROCE_SLOW > 1)); then
		/tmp/rc_pp "$1" "$2" "$3" "$4" 2>&1 && return 0
		echo "connections:"; conns_show "$1" "$2"
		return 1
	fi
	pingpong_pair ibv_rc_pingpong "$1" "$2" -c -s "$4" -n "$3"
}
