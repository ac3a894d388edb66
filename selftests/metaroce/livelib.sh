#!/bin/bash
# Live traffic for the hostile-input tests (sourced after lib.sh; devices
# ra in host A and rb in host B, scratch directory $W): validated RC
# pingpongs of 4 KiB messages (lib.sh rc_pingpong), one after the other,
# each logged
# in $W/live.log as "ok N", or as "FAIL N" followed by both sides' output.
#
#   live_start ITERS  start them, ITERS iterations each, and wait for the
#                     first to pass
#   live_runs         how many have passed
#   live_more N [S]   wait, at most S seconds (120), for more than N passed
#   live_stop         stop after the current one

_live_loop() {
	local n=0 out
	all_counters ra rb > "$W/live-cnt.0"
	while [ ! -e "$W/stop" ]; do
		if out=$(rc_pingpong ra rb "$1" 4096); then
			echo "ok $n" >> "$W/live.log"
		else
			_live_failed "$n" "$out" >> "$W/live.log"
		fi
		all_counters ra rb > "$W/live-cnt.0"
		n=$((n + 1))
	done
}

# What a failed pingpong leaves for its diagnosis: its output (both sides',
# and the connections of both devices as they were then: state, paths,
# RTO, backoff) and the counters that moved during it (the fuzzing's among
# them) in place of the totals.
_live_failed() {
	echo "FAIL $1"
	sed '/^counters:/,/^connections:/{/^connections:/!d}' <<< "$2"
	echo "counters moved during it:"
	all_counters ra rb | join -j1 <(awk '{print $1"/"$2, $3}' \
		"$W/live-cnt.0" | sort) <(awk '{print $1"/"$2, $3}' | sort) |
		awk '$3 != $2 { print "  " $1 " +" $3 - $2 }'
}

live_start() {
	rm -f "$W/stop" "$W/live.log"
	((MROCE_SLOW > 1)) && { build_prog rc_pp || return 1; }
	_live_loop "$1" &
	live_pid=$!
	live_more 0
}

live_runs() {
	local n
	n=$(grep -c '^ok' "$W/live.log" 2>/dev/null)
	echo "${n:-0}"
}

_live_beyond() { [ "$(live_runs)" -gt "$1" ]; }
live_more() { wait_for "${2:-120}" _live_beyond "$1"; }

live_stop() {
	touch "$W/stop"
	# One pingpong runs at most 2 x 120 s (pingpong_pair).
	wait_or_dump 300 "$live_pid"
}
