#!/bin/bash
# vm: -t 1500 -m 3072
# Many connections at once, and what an idle one costs (issue 20).  Each
# host has NADDR addresses; tools/bench/qpscale.c sets up NADDR^2 RC QP
# pairs, pair i between A's address i / NADDR and B's address i % NADDR,
# so that every pair is an address pair of its own: NADDR^2 connections
# on each device, each moving one verified RDMA WRITE.  The same QP pairs
# over one address pair (one connection) are the baseline: the kernel
# memory between the two runs, with every QP still open and the paths idle
# past win_idle_ms, is what NADDR^2 - 1 connections cost on each device.
#
# make check runs 16 addresses (256 connections, a few minutes); the full
# scale, 4096 connections per device (about 10 minutes under TCG):
#   tools/vm/run.sh -t 1500 -m 3072 -o .vm/conn-scale -- \
#	env CONN_SCALE_ADDRS=64 selftests/metaroce/test_conn_scale.sh
. "$(dirname "$0")/lib.sh"

NADDR=${CONN_SCALE_ADDRS:-16}
PAIRS=$((NADDR * NADDR))
LIMIT_KB=32

tap_plan 11
PROG=/tmp/qpscale
ok_if "build qpscale" gcc -O2 -Wall -Wextra -o $PROG tools/bench/qpscale.c -libverbs
setup_two_hosts
for ((i = 1; i <= NADDR; i++)); do
	ip -n $NS_A addr add 10.78.1.$i/16 dev va
	ip -n $NS_B addr add 10.78.2.$i/16 dev vb
done
cnt() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }
# gids DEV PREFIX: the GID indexes of DEV's addresses PREFIX*, comma-separated.
gids() {
	grep -l "^0000:0000:0000:0000:0000:ffff:$2" \
		/sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null |
		sed 's|.*/||' | sort -n | paste -sd, -
}
# has_gids DEV PREFIX: DEV has NADDR GIDs PREFIX* (read at each call:
# wait_for runs its command again, not the values expanded for it).
has_gids() { test "$(gids "$1" "$2" | tr ',' '\n' | grep -c .)" -eq $NADDR; }
chunks() { echo $(($(cnt ra tx_window_chunks) + $(cnt rb tx_window_chunks))); }
no_chunks() { test "$(chunks)" -eq 0; }
devices() {
	ip netns exec $NS_A rdma link add ra type metaroce netdev va &&
		ip netns exec $NS_B rdma link add rb type metaroce netdev vb &&
		wait_for 60 has_gids ra 0a4e:01 && wait_for 60 has_gids rb 0a4e:02
}
# kernel_kb LOG: unreclaimable slab plus vmalloc at idle, from qpscale.
kernel_kb() {
	awk -F= '/^mem_idle_(SUnreclaim|VmallocUsed)_kb=/ { s += $2 } END { print s }' "$1"
}
# run LOG GIDS_A GIDS_B [wait]: PAIRS verified WRITEs; counters read while
# idle; with wait, once the window pages are freed (at most 600 polls).
run() {
	local log=$1 rc
	$PROG -a ra -b rb -n $PAIRS -x "$2" -X "$3" -w 8 > "$log" 2>&1 &
	local pid=$!
	wait_for 900 grep -q '^mem_traffic' "$log"
	sleep 3
	local o0=$(($(cnt ra timer_overdue) + $(cnt rb timer_overdue)))
	sleep 2
	for d in ra rb; do
		echo "$d conn_active $(cnt $d conn_active)"
	done > "$log.idle"
	echo "timer_overdue_2s $(($(cnt ra timer_overdue) + $(cnt rb timer_overdue) - o0))" \
		>> "$log.idle"
	# Windows go win_idle_ms (1 s) after the last packet; the debug
	# kernel's timers can run seconds late (69 of 256 connections' pages
	# were still there 5 s after the traffic once), so wait for them.
	local t=$SECONDS c0
	c0=$(chunks)
	[ "${4:-}" = wait ] && wait_for 60 no_chunks
	echo "tx_window_chunks $(chunks) $((SECONDS - t + 5)) s after the traffic" \
		"($c0 at 5 s)" >> "$log.idle"
	wait $pid
	rc=$?
	((rc == 0)) || diag "$(grep -v '^mem_' "$log" | tr '\n' ' ')"
	return $rc
}

# 4096 CONNECTs arrive within seconds: the per-device handshake limits
# (1000 CONNECTs/s, 256 half-open) are raised, as an operator of such a
# cluster would.  Idle paths free their windows after 1 s.
modprobe metaroce
echo 100000 > /sys/module/metaroce/parameters/conn_rate_limit
echo 8192 > /sys/module/metaroce/parameters/max_half_open
echo 8192 > /sys/module/metaroce/parameters/max_conns
echo 1000 > /sys/module/metaroce/parameters/win_idle_ms
ok_if "devices with $NADDR IPv4 GIDs each" devices
A1=$(gids ra 0a4e:01 | cut -d, -f1) B1=$(gids rb 0a4e:02 | cut -d, -f1)
ok_if "baseline: $PAIRS QP pairs over one connection, every WRITE verified" \
	run /tmp/cs-one.log "$A1" "$B1"
diag "$(grep -E '^(setup_s|traffic_s|teardown_s)=' /tmp/cs-one.log | tr '\n' ' ')"
diag "idle: $(tr '\n' ' ' < /tmp/cs-one.log.idle)"
rdma link delete ra
rdma link delete rb

ok_if "devices again" devices
est0=$(($(cnt ra conn_established) + $(cnt rb conn_established)))
ok_if "$PAIRS QP pairs over $PAIRS address pairs, every WRITE verified" \
	run /tmp/cs-many.log "$(gids ra 0a4e:01)" "$(gids rb 0a4e:02)" wait
diag "$(grep -E '^(setup_s|traffic_s|teardown_s|addr_pairs)=' /tmp/cs-many.log | tr '\n' ' ')"
diag "idle: $(tr '\n' ' ' < /tmp/cs-many.log.idle)"
diag "$(dev_counters ra rb | grep -E 'conn_|path_failed|retransmits|drop_' | tr '\n' ' ')"
ok_if "$PAIRS connections open at once on each device" \
	test "$(grep -c "conn_active $PAIRS$" /tmp/cs-many.log.idle)" -eq 2
ok_if "no connection failed, no path failed" \
	test "$(($(cnt ra conn_failed) + $(cnt rb conn_failed) + \
		$(cnt ra path_failed) + $(cnt rb path_failed)))" -eq 0
ok_if "idle paths free their window pages ($(grep tx_window_chunks /tmp/cs-many.log.idle))" \
	grep -q '^tx_window_chunks 0 ' /tmp/cs-many.log.idle
# The timers of idle connections stay quiet: no deadline left due (a
# window trim that came back at once spun the timer once).
od=$(sed -n 's/^timer_overdue_2s //p' /tmp/cs-many.log.idle)
ok_if "idle connections' timers rest (timer_overdue +$od in 2 s)" test "$od" -lt 50
one=$(kernel_kb /tmp/cs-one.log) many=$(kernel_kb /tmp/cs-many.log)
per=$(((many - one) / (2 * (PAIRS - 1))))
diag "kernel memory at idle (SUnreclaim + VmallocUsed): $one kB with 1 connection," \
	"$many kB with $PAIRS: $per kB per connection end"
ok_if "an idle connection costs <= $LIMIT_KB KiB ($per)" test "$per" -le $LIMIT_KB
rdma link delete ra
rdma link delete rb
ok_if "module unloads" modprobe -r metaroce
tap_done
