#!/bin/bash
# Benchmark helpers, sourced inside the guest (tools/bench/guest*.sh).
#
# Every measurement is one JSON object on one line of $BENCH_OUT/records.jsonl
# (rec); tools/bench/report.py turns them into results.json, BENCHMARKS.md and
# plots.  Every command that talks to the network runs under timeout(1): a
# hung perftest ends as a "failed" record with its error, never as a hung
# bench.
# The PT_*, IP_MBPS, BG_PID and SAMPLER_PID results are read by the
# scripts that source this one:
# shellcheck disable=SC2034
set -u

BENCH_OUT=${BENCH_OUT:-/mnt/vmout/bench}
BENCH_HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
BENCH_LOGS=$BENCH_OUT/logs
BENCH_REC=$BENCH_OUT/records.jsonl
mkdir -p "$BENCH_LOGS"

# Topologies (see setup_*).
NS_A=mra NS_B=mrb IP_A=10.77.0.1 IP_B=10.77.0.2
IP_0=10.99.0.1 IP_1=10.99.0.2

log() { printf '[%s] %s\n' "$(date +%T)" "$*"; }

# json_str STRING: STRING as a JSON string literal.
json_str() {
	local s=$1
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\n'/\\n}
	s=${s//$'\t'/ }
	s=${s//$'\r'/}
	printf '"%s"' "$(printf '%s' "$s" | tr -d '\000-\037')"
}

# rec KEY=VALUE...: append one record.  Numbers stay numbers; "-" is null.
rec() {
	local kv k v out="" sep=""
	for kv in "$@"; do
		k=${kv%%=*}
		v=${kv#*=}
		if [[ $v =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; then
			out+="$sep\"$k\": $v"
		elif [ "$v" = "-" ]; then
			out+="$sep\"$k\": null"
		else
			out+="$sep\"$k\": $(json_str "$v")"
		fi
		sep=", "
	done
	printf '{%s}\n' "$out" >> "$BENCH_REC"
}

# in_ns NS CMD...: CMD in network namespace NS ("" = the initial one).
in_ns() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then ip netns exec "$ns" "$@"; else "$@"; fi
}

# bg_ns NS CMD...: CMD in the background in namespace NS, BG_PID its pid:
# the command itself (ip netns exec execs it), not a subshell, so that
# killing BG_PID stops it.
bg_ns() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@" &
	else
		"$@" &
	fi
	BG_PID=$!
}

# wait_for SECONDS COMMAND...: poll COMMAND until it succeeds, by the clock
# (each poll may itself take a while under TCG).
wait_for() {
	local end=$((SECONDS + $1))
	shift
	while ((SECONDS < end)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	"$@" >/dev/null 2>&1
}

listening() { in_ns "$1" ss -ltnH "sport = :$2" | grep -q .; }

# gid_index DEV: index of DEV's IPv4-mapped GID.
gid_index() {
	local f
	f=$(grep -l '^0000:0000:0000:0000:0000:ffff:' \
		/sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null | head -n 1)
	[ -n "$f" ] && basename "$f"
}

# Two hosts: namespaces mra/mrb joined by veth va/vb, a MetaRoCE device each.
setup_two_ns() {
	ip netns add $NS_A
	ip netns add $NS_B
	ip link add va netns $NS_A type veth peer name vb netns $NS_B
	ip -n $NS_A addr add $IP_A/24 dev va
	ip -n $NS_B addr add $IP_B/24 dev vb
	ip -n $NS_A link set lo up
	ip -n $NS_B link set lo up
	ip -n $NS_A link set va up
	ip -n $NS_B link set vb up
	ip netns exec $NS_A rdma link add ra type metaroce netdev va
	ip netns exec $NS_B rdma link add rb type metaroce netdev vb
	wait_for 10 gid_index ra && wait_for 10 gid_index rb
}

# Both ends of veth v0/v1 in the initial namespace (rxe works only there).
# Policy routing sends locally generated traffic for the other end's
# address out of the veth instead of through lo; accept_local and rp_filter
# let the other end take it (../shared/notes/vm-testing.md).  A MetaRoCE
# device (m0, m1) and an rxe device (rxe0, rxe1) on each end.
setup_one_ns() {
	local i
	ip link add v0 type veth peer name v1
	ip addr add $IP_0/24 dev v0
	ip addr add $IP_1/24 dev v1
	for i in all default v0 v1; do
		sysctl -qw net.ipv4.conf.$i.accept_local=1 net.ipv4.conf.$i.rp_filter=0
	done
	ip rule add pref 10 iif lo to $IP_1 lookup 100
	ip rule add pref 11 iif lo to $IP_0 lookup 101
	ip rule add pref 100 lookup local
	ip rule del pref 0
	ip link set v0 up
	ip link set v1 up
	ip route add $IP_1 dev v0 src $IP_0 table 100
	ip route add $IP_0 dev v1 src $IP_1 table 101
	rdma link add m0 type metaroce netdev v0
	rdma link add m1 type metaroce netdev v1
	modprobe rdma_rxe
	rdma link add rxe0 type rxe netdev v0
	rdma link add rxe1 type rxe netdev v1
	wait_for 10 gid_index m0 && wait_for 10 gid_index m1 &&
		wait_for 10 gid_index rxe0 && wait_for 10 gid_index rxe1
}

# stack STACK: sets SNS CNS (server/client namespace), DS DC (devices) and
# SIP (server address) for one of the compared stacks.
stack() {
	case $1 in
	mroce-2ns) SNS=$NS_B CNS=$NS_A DS=rb DC=ra SIP=$IP_B CIP=$IP_A ;;
	mroce-1ns) SNS="" CNS="" DS=m1 DC=m0 SIP=$IP_1 CIP=$IP_0 ;;
	rxe-1ns) SNS="" CNS="" DS=rxe1 DC=rxe0 SIP=$IP_1 CIP=$IP_0 ;;
	tcp-2ns) SNS=$NS_B CNS=$NS_A DS="" DC="" SIP=$IP_B CIP=$IP_A ;;
	tcp-1ns) SNS="" CNS="" DS="" DC="" SIP=$IP_1 CIP=$IP_0 ;;
	mroce-ecmp) SNS=mpb CNS=mpa DS=mb DC=ma SIP=10.80.0.2 CIP=10.80.0.1 ;;
	*) echo "unknown stack $1" >&2; return 1 ;;
	esac
}

# Bytes sent on the wire devices of a stack (to prove traffic crossed it).
wire_bytes() {
	case $1 in
	*-2ns) cat "/sys/class/net/va/statistics/tx_bytes" 2>/dev/null ||
		ip netns exec $NS_A cat /sys/class/net/va/statistics/tx_bytes ;;
	*) echo $(( $(cat /sys/class/net/v0/statistics/tx_bytes) +
		$(cat /sys/class/net/v1/statistics/tx_bytes) )) ;;
	esac
}

BENCH_PORT=${BENCH_PORT:-21000}

# perftest STACK TIMEOUT TOOL ARGS...: one server/client perftest run on
# STACK.  Sets PT_LINE (the client's result line, fields split in PT_F),
# PT_SLINE (the server's) or PT_ERR (why it failed); returns 0 on success.
# perftest converts cycles to time with a CPU clock it calibrates at start;
# on a loaded TCG host the calibration sometimes fails ("Correlation
# coefficient r^2 < 0.9") and every figure comes out 0 or inf: such a run is
# repeated, up to 3 times.
# Bandwidth tests do not need that clock: perftest counts the messages
# completed in its sample window, and that window is timed by alarm(2) on
# the wall clock, so PT_MBPS (MiB/s) and PT_RATE (messages/s) come from the
# iteration count (bw_from_iters) and a failed calibration (PT_CLOCK=failed,
# perftest's own figures read 0.00) is no reason to run again.
perftest() {
	local try
	for try in 1 2 3; do
		perftest_once "$@"
		[ "$PT_CLOCK" = failed ] || break
		case $3 in
		*_bw) break ;;
		esac
		PT_ERR="perftest could not calibrate its clock (3 tries)"
	done
	[ -z "$PT_ERR" ]
}

# bw_from_iters ITERS SIZE DURATION: "MiB/s messages/s" of a -D DURATION
# run.  perftest counts completions (all QPs) only between its margins,
# duration/4 s at either end (perftest_parameters.c: margin = duration / 4
# unless -f is given), i.e. over DURATION - 2 * int(DURATION / 4) seconds.
# Small messages complete in batches of cq_mod (100 up to 8 KiB by
# perftest's default), so ITERS is a multiple of 100 there: +-100 messages.
bw_from_iters() {
	awk -v n="$1" -v s="$2" -v d="$3" 'BEGIN {
		w = d - 2 * int(d / 4)
		if (w <= 0 || n !~ /^[0-9]+$/) { print "- -"; exit }
		printf "%.3f %.1f\n", n * s / w / 1048576, n / w }'
}

# server_client NAME NS PORT: the server command SC_SERVER (an array) in
# the background, output NAME.server, then once something listens on TCP
# PORT in namespace NS (60 s at most) the client command SC_CLIENT, output
# NAME.client.  Sets SC_CRC and SC_SRC (exit codes), or SC_ERR if the
# server never listened.  The commands bring their own namespace and time
# limit.
server_client() {
	local name=$1 ns=$2 port=$3 spid
	SC_CRC="" SC_SRC="" SC_ERR=""
	"${SC_SERVER[@]}" > "$name.server" 2>&1 &
	spid=$!
	if ! wait_for 60 listening "$ns" "$port"; then
		kill $spid 2>/dev/null
		wait $spid
		: > "$name.client"
		SC_ERR="server did not listen: $(tail -n 3 "$name.server" | tr '\n' ' ')"
		return 1
	fi
	"${SC_CLIENT[@]}" > "$name.client" 2>&1
	SC_CRC=$?
	wait $spid
	SC_SRC=$?
}

perftest_once() {
	local st=$1 t=$2 tool=$3 port crc src name a prev="" dur=""
	shift 3
	for a in "$@"; do
		[ "$prev" = -D ] && dur=$a
		prev=$a
	done
	stack "$st" || return 1
	BENCH_PORT=$((BENCH_PORT + 1))
	port=$BENCH_PORT
	name=$BENCH_LOGS/$st-$tool-$port
	PT_NAME=$name
	PT_LINE="" PT_SLINE="" PT_ERR="" PT_F=() PT_CLOCK=ok PT_MBPS="" PT_RATE=""
	SC_SERVER=(in_ns "$SNS" timeout -k 5 "$t" "$tool" -d "$DS"
		   -x "$(gid_index "$DS")" -p "$port" -F "$@")
	SC_CLIENT=(in_ns "$CNS" timeout -k 5 "$t" "$tool" -d "$DC"
		   -x "$(gid_index "$DC")" -p "$port" -F "$@" "$SIP")
	server_client "$name" "$SNS" "$port" || { PT_ERR=$SC_ERR; return 1; }
	crc=$SC_CRC src=$SC_SRC
	if ((crc == 124 || crc == 137)); then
		PT_ERR="client timed out after ${t}s: $(grep -v '^ *$' "$name.client" | tail -n 2 | tr '\n' ' ')"
	elif ((crc != 0)); then
		PT_ERR="client exit $crc: $(grep -iE 'fail|error|unable|couldn|wrong' "$name.client" | head -n 3 | tr '\n' ' ')"
	elif ((src != 0)); then
		PT_ERR="server exit $src: $(grep -iE 'fail|error|unable|couldn|wrong' "$name.server" | head -n 3 | tr '\n' ' ')"
	fi
	# The result line: first field is the message size.
	PT_LINE=$(pt_result "$name.client")
	PT_SLINE=$(pt_result "$name.server")
	if [ -z "$PT_ERR" ] && [ -z "$PT_LINE" ]; then
		PT_ERR="no result line in client output: $(tail -n 2 "$name.client" | tr '\n' ' ')"
	fi
	read -r -a PT_F <<< "$PT_LINE"
	PT_CLOCK=ok PT_MBPS="" PT_RATE=""
	grep -q 'Correlation coefficient' "$name.client" && PT_CLOCK=failed
	if [[ $tool == *_bw ]] && [ -n "$dur" ] && [ -n "$PT_LINE" ]; then
		read -r PT_MBPS PT_RATE <<< "$(bw_from_iters "${PT_F[1]}" "${PT_F[0]}" "$dur")"
	fi
	[ -z "$PT_ERR" ]
}

# iperf STACK SECONDS STREAMS: TCP through iperf3; sets IP_MBPS (MiB/s, as
# perftest's MB/sec) or PT_ERR.
iperf() {
	local st=$1 secs=$2 par=$3 port spid name
	stack "$st" || return 1
	BENCH_PORT=$((BENCH_PORT + 1))
	port=$BENCH_PORT
	name=$BENCH_LOGS/$st-iperf3-$port
	IP_MBPS="" PT_ERR=""
	in_ns "$SNS" timeout -k 5 $((secs + 30)) iperf3 -s -1 -B "$SIP" -p "$port" \
		> "$name.server" 2>&1 &
	spid=$!
	if ! wait_for 20 listening "$SNS" "$port"; then
		PT_ERR="iperf3 server did not listen"
		wait $spid
		return 1
	fi
	if ! in_ns "$CNS" timeout -k 5 $((secs + 30)) iperf3 -c "$SIP" -B "$CIP" \
		-p "$port" -t "$secs" -P "$par" -J > "$name.client" 2>&1; then
		PT_ERR="iperf3 client failed: $(grep -m1 error "$name.client")"
	fi
	wait $spid
	[ -z "$PT_ERR" ] || return 1
	IP_MBPS=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.2f" % (d["end"]["sum_received"]["bits_per_second"] / 8 / 1048576))' "$name.client") ||
		PT_ERR="iperf3 output unreadable"
	[ -z "$PT_ERR" ]
}

# CPU accounting of the whole guest from /proc/stat, in clock ticks.
cpu_snap() { awk '/^cpu / { print $2, $3, $4, $5, $6, $7, $8, $9 }' /proc/stat; }

# pt_result FILE: the result line of a perftest output file.
pt_result() {
	awk '/^ *#bytes/ { hdr = 1; next } hdr && $1 ~ /^[0-9]+$/ { print; exit }' "$1"
}

# mroce_cnt DEV NAME: a port counter of a MetaRoCE device (0 for others).
mroce_cnt() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo 0
}

# sampler_start FILE [NS] PATH...: every BENCH_SAMPLE_S seconds append
# "EPOCH v1 v2 ..." to FILE, the values of the counter files PATH... (read
# in network namespace NS when NS is not a path), by the wall clock.
# tools/bench/rates.py turns FILE into rates.  Sets SAMPLER_PID.
sampler_start() {
	local f=$1 ns=""
	shift
	[[ $1 == /* ]] || { ns=$1; shift; }
	# Started directly (not through in_ns, a function: its subshell
	# would be the pid, and killing it would leave the sampler running).
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$BENCH_HERE/sample.sh" "$f" "${BENCH_SAMPLE_S:-0.5}" "$@" &
	else
		"$BENCH_HERE/sample.sh" "$f" "${BENCH_SAMPLE_S:-0.5}" "$@" &
	fi
	SAMPLER_PID=$!
}

sampler_stop() {
	kill "$SAMPLER_PID" 2>/dev/null
	wait "$SAMPLER_PID" 2>/dev/null
}

# Features the transport has (or not yet): a scenario that needs a missing
# one reports "not measured" with the reason instead of a number.
#   multipath: several paths (UDP source ports) per connection
#   planes:    several netdevs per device (the metaroce tool adds them)
#   cc:        congestion control (ECN reaction)
mroce_feature() {
	case $1 in
	multipath) [ -e /sys/module/metaroce/parameters/paths_per_plane ] ;;
	planes) "$MROCE_TOOL" help 2>&1 | grep -q "plane add" ;;
	cc) [ -e /sys/module/metaroce/parameters/loss_is_congestion ] ;;
	*) return 1 ;;
	esac
}

mroce_feature_why() {
	case $1 in
	multipath) echo "multipath is not implemented yet (no paths_per_plane module parameter); every connection uses one path" ;;
	planes) echo "the metaroce tool ($MROCE_TOOL) is not built or has no plane command" ;;
	cc) echo "congestion control is not implemented yet (no loss_is_congestion parameter); senders do not react to ECN" ;;
	esac
}
