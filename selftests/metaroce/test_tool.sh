#!/bin/bash
# vm: -t 900
# The metaroce tool (tools/metaroce) against the module's generic netlink
# family: show and --json after RC traffic, tunables get/set round trips
# that take effect, input errors with their messages and exit codes, the
# admin check, and a dump of many connections with many paths.
. "$(dirname "$0")/lib.sh"

tap_plan 24

need_mr_tool

setup_two_hosts
add_devices la lb
# Every connection made here stays for the dump at the end: no idle
# reclaim (60 s by default), however slow the host.
$MR set conn_idle_timeout_s 3600

# code WANT CMD...: CMD exits with status WANT.
code() {
	local want=$1 rc=0
	shift
	"$@" || rc=$?
	[ $rc -eq "$want" ] || { echo "exit status $rc, expected $want"; return 1; }
}
# fails_code DESC CODE TEXT CMD...: CMD exits CODE and prints TEXT.
fails_code() {
	local desc=$1 want=$2 text=$3 out rc=0
	shift 3
	out=$("$@" 2>&1) || rc=$?
	if [ $rc -eq "$want" ] && grep -qi -- "$text" <<<"$out"; then
		ok_if "$desc" true
	else
		ok_if "$desc" bash -c "echo 'exit $rc (want $want), output: $out'; false"
	fi
}

ok_if "RC traffic la -> lb: SEND/WRITE/READ 256 KiB, every byte" \
	kverbs rc_send,rc_write,rc_read size=262144

show=$(mra show la)
diag "$show"
# paths of the connection to IP_B in state S
npaths() { mra show la | grep -A70 "conn $IP_A -> $IP_B" | grep -c "^    path .* $1 "; }
ok_if "show lists the connection to lb, ESTABLISHED" \
	grep -q "conn $IP_A -> $IP_B: .*ESTABLISHED" <<<"$show"
ok_if "the connection has 4 ACTIVE paths" test "$(npaths ACTIVE)" -eq 4
# paths_ok SHOW: every path line has a nonzero srtt and tx.
paths_ok() {
	grep '^    path ' <<<"$1" | awk '{
		s = t = 0
		for (i = 1; i < NF; i++) {
			if ($i == "srtt") s = $(i + 1) + 0
			if ($i == "tx") t = $(i + 1) + 0
		}
		n++
		if (!s || !t) bad = 1
	} END { exit bad || !n }'
}
ok_if "every path has a nonzero srtt and sent packets" paths_ok "$show"
ok_if "show lists plane 0 (va) and the link speed" \
	bash -c "grep -q '^device la: port ACTIVE' <<<'$show' && grep -q 'plane 0: va ' <<<'$show'"

json=$(mra show --json)
ok_if "show --json parses, with the same connection and paths (per-path values, MRC-CNT-004)" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
la = [x for x in d["devices"] if x["name"] == "la"][0]
c = [c for c in la["connections"] if c["peer"] == sys.argv[2]][0]
assert c["state"] == "ESTABLISHED", c
assert len(c["paths"]) == c["npaths"] == 4, c
assert all(p["state"] == "ACTIVE" and p["srtt_us"] > 0 and p["tx_pkts"] > 0 for p in c["paths"]), c
assert la["num_conns"] >= 1 and la["planes"][0]["ifname"] == "va"
' "$json" "$IP_B"

# Tunables: the table, get/set round trip, same as the module parameter.
ok_if "tunables lists every module parameter with its range" \
	bash -c "[ \$($MR tunables | wc -l) -ge 20 ] && $MR tunables | grep -q '^paths_per_plane .*(1 to 64)'"
ok_if "get paths_per_plane: 4 (the default)" test "$($MR get paths_per_plane)" = 4
ok_if "set two tunables, get and sysfs agree" bash -c "
	$MR set paths_per_plane 2 reorder_thresh 3 &&
	[ \$($MR get paths_per_plane) = 2 ] && [ \$($MR get reorder_thresh) = 3 ] &&
	[ \$(cat /sys/module/metaroce/parameters/paths_per_plane) = 2 ]"
two_paths() {
	ip -n $NS_B addr add 10.77.0.3/24 dev vb &&
		KV_IP_B=10.77.0.3 kverbs rc_send size=4096 &&
		mra show la | grep -A3 "conn $IP_A -> 10.77.0.3:" | grep -q ', 2 paths'
}
ok_if "paths_per_plane=2 takes effect: a new connection has 2 paths" two_paths

# Input errors: messages and exit codes.
fails_code "set out of range: EINVAL naming the range, exit 1" 1 \
	"out of range 1 to 64" $MR set paths_per_plane 65
ok_if "a failed set changes nothing (all or none)" bash -c "
	! $MR set reorder_thresh 5 paths_per_plane 0 2>/dev/null &&
	[ \$($MR get reorder_thresh) = 3 ]"
fails_code "unknown tunable, exit 1" 1 "unknown tunable nosuch" $MR get nosuch
fails_code "non-numeric value, exit 2" 2 "not a non-negative decimal" $MR set ecn yes
fails_code "value without a name, exit 2" 2 "no value for" $MR set ecn
fails_code "unknown command, exit 2" 2 "unknown command 'frob'" $MR frob
fails_code "show of a missing device, exit 1" 1 "no MetaRoCE device nodev" $MR show nodev
fails_code "plane with a missing netdev, exit 1" 1 "no network device nonet" \
	ip netns exec $NS_A $MR plane add la nonet
ok_if "help exits 0" code 0 $MR help
fails_code "non-root cannot set (EPERM), exit 1" 1 "Operation not permitted" \
	setpriv --reuid=65534 --regid=65534 --clear-groups $MR set ecn 1
ok_if "non-root can show and get" \
	setpriv --reuid=65534 --regid=65534 --clear-groups $MR get ecn

# Many connections of 64 paths: the dump spans several messages and skbs.
# They must all still be there for the dump: no idle reclaim meanwhile.
# Two busy loops load the guest the way a busy CI host does: replies come
# later than the RTT estimates, the case that once made every path of the
# answering side re-probe each RTO and a QP's destroy wait behind it.
$MR set paths_per_plane 64 reorder_thresh 1 conn_idle_timeout_s 3600
hogs=""
for i in 1 2; do
	(while :; do :; done) &
	hogs="$hogs $!"
done
probes0=$(hw_counter lb probes_sent)
t0=$(date +%s)
kvfail=0
for i in 4 5 6 7 8 9; do
	ip -n $NS_B addr add 10.77.0.$i/24 dev vb
	if ! KV_IP_B=10.77.0.$i kverbs rc_send size=4096 > /tmp/tool-kv.log 2>&1; then
		kvfail=$((kvfail + 1))
		diag "kverbs to 10.77.0.$i failed:"
		diag "$(cat /tmp/tool-kv.log)"
		diag "$(dmesg | tail -n 20)"
		rmmod mroce_kverbs 2>/dev/null
	fi
done
probes=$(($(hw_counter lb probes_sent) - probes0))
secs=$(($(date +%s) - t0 + 1))
kill $hogs
wait $hogs 2>/dev/null
$MR set paths_per_plane 4
ok_if "RC SEND to 6 more peers, 64 paths each, every byte (guest loaded)" \
	test $kvfail -eq 0
diag "lb sent $probes probes in ${secs}s: $(cd /sys/class/infiniband/lb/ports/1/hw_counters && grep -H . path_reroutes path_failed probe_replies_rcvd | tr '\n' ' ')"
ok_if "the answering side probes at a bounded rate (< 100/s)" \
	test $((probes / secs)) -lt 100
ok_if "many connections: the dump returns every connection with all its paths" python3 -c '
import json, subprocess, sys
d = json.loads(subprocess.check_output(["ip", "netns", "exec", "mra", sys.argv[1], "show", "--json"]))
la = [x for x in d["devices"] if x["name"] == "la"][0]
cs = la["connections"]
assert len(cs) == la["num_conns"] >= 8, (len(cs), la["num_conns"])
big = [c for c in cs if c["npaths"] == 64]
assert len(big) >= 6, [c["npaths"] for c in cs]
for c in cs:
    assert len(c["paths"]) == c["npaths"], (c["peer"], len(c["paths"]), c["npaths"])
    assert [p["id"] for p in c["paths"]] == sorted(set(p["id"] for p in c["paths"])), c["peer"]
print("connections", len(cs), "paths", sum(len(c["paths"]) for c in cs))
' $MR

ip netns exec $NS_A rdma link delete la
ip netns exec $NS_B rdma link delete lb
tap_done
