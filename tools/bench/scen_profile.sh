#!/bin/bash
# Where the time goes, per stack, during ib_write_bw 64 KiB, 1 QP, in two
# runs of BENCH_DUR * 4 seconds each:
#  1. counters only (tools/bench/sysprof.py): /proc/stat CPU shares,
#     /proc/softirqs and /proc/interrupts rates, softnet drops, and the
#     devices' hw_counters per data packet (ACKs, retransmissions, ...),
#     one "profile_sys" record;
#  2. bpftrace: calls of every function of the stack (kprobe:mroce_* or
#     kprobe:rxe_*) per data packet, calls-STACK.txt and one
#     "profile_calls" record (BENCH_PROFILE_BPF=1 and bpftrace installed);
#  3. perf record -a (cpu-clock; TCG has no PMU): the top symbols go to
#     profile-STACK.txt, one "profile" record.  Under TCG perf samples
#     little and resolves only part of it, so runs 1 and 2 are the ones to
#     read.

# profile_sys STACK: run 1.
profile_sys() {
	local st=$1 a=/tmp/sysprof-$1-a.json b=/tmp/sysprof-$1-b.json line
	stack "$st" || return
	# rxe sometimes ends a long run with a completion error (status 9,
	# remote invalid request): one more try.
	local try
	for try in 1 2; do
		python3 "$BENCH_HERE/sysprof.py" snap "$a" "$DC" "$DS"
		perftest "$st" $((BENCH_DUR * 4 + 60)) ib_write_bw -s 65536 -D $((BENCH_DUR * 4)) && break
		if ((try == 2)); then
			rec group=profile_sys stack="$st" status=failed error="traffic failed (2 tries): $PT_ERR"
			return
		fi
	done
	python3 "$BENCH_HERE/sysprof.py" snap "$b" "$DC" "$DS"
	if line=$(python3 "$BENCH_HERE/sysprof.py" diff "$a" "$b" "$st" mbps="$PT_MBPS" \
		iters="${PT_F[1]}" msg_size=65536 tool=ib_write_bw); then
		printf '%s\n' "$line" >> "$BENCH_REC"
	else
		rec group=profile_sys stack="$st" status=failed error="sysprof.py diff failed"
	fi
	rm -f "$a" "$b"
}

# data_packets STACK: the data packets the server device took in so far.
data_packets() {
	stack "$1" || return
	case $1 in
	rxe-*) mroce_cnt "$DS" rcvd_pkts ;;
	*) mroce_cnt "$DS" rx_data_packets ;;
	esac
}

# profile_bpf STACK: run 2.
profile_bpf() {
	local st=$1 pre=mroce_ out=$BENCH_OUT/calls-$1.txt raw bpid p0 p1 total
	[[ $st == rxe-* ]] && pre=rxe_
	raw=$BENCH_LOGS/bpftrace-$st.out
	bpftrace -e "kprobe:$pre* { @[func] = count(); }" > "$raw" 2>&1 &
	bpid=$!
	# Attaching a few hundred probes takes about 10 s under TCG.
	if ! wait_for 120 grep -q Attaching "$raw"; then
		kill -INT $bpid 2>/dev/null
		wait $bpid
		rec group=profile_calls stack="$st" status=failed error="bpftrace did not start: $(tail -n 2 "$raw" | tr '\n' ' ')"
		return
	fi
	sleep 10
	p0=$(data_packets "$st")
	if ! perftest "$st" $((BENCH_DUR * 4 + 60)) ib_write_bw -s 65536 -D $((BENCH_DUR * 4)); then
		kill -INT $bpid 2>/dev/null
		wait $bpid
		rec group=profile_calls stack="$st" status=failed error="traffic failed: $PT_ERR"
		return
	fi
	p1=$(data_packets "$st")
	kill -INT $bpid 2>/dev/null
	wait $bpid
	# "@[mroce_foo]: 123" -> "123 mroce_foo", busiest first.
	sed -n 's/^@\[\([A-Za-z0-9_.]*\)\]: \([0-9]*\)$/\2 \1/p' "$raw" | sort -rn > "$out"
	total=$(awk '{ s += $1 } END { print s + 0 }' "$out")
	if [ ! -s "$out" ]; then
		rec group=profile_calls stack="$st" status=failed error="bpftrace counted no calls: $(tail -n 2 "$raw" | tr '\n' ' ')"
		return
	fi
	rec group=profile_calls stack="$st" status=ok file="calls-$st.txt" data_packets=$((p1 - p0)) \
		calls="$total" functions="$(wc -l < "$out")" mbps="$PT_MBPS" \
		probes="$(sed -n 's/^Attaching \([0-9]*\) probe.*/\1/p' "$raw" | head -n 1)"
}

# profile_perf STACK: run 3.
profile_perf() {
	local st=$1 data out ppid rc ns
	data=/tmp/perf-$st.data
	out=$BENCH_OUT/profile-$st.txt
	# perf runs until the traffic is over, then gets SIGINT to write
	# its data; the timeout is only a backstop.
	# -B: no build-id pass at exit (it reads every DSO over 9p and took
	# longer than the kill grace under TCG, leaving no data).
	timeout -s INT -k 240 $((BENCH_DUR + 400)) perf record -a -B -e cpu-clock -F 499 \
		-o "$data" > "$BENCH_LOGS/perf-$st.log" 2>&1 &
	ppid=$!
	# perf takes a while to start under TCG; then a longer run than
	# the other cases so that most samples fall into the traffic.
	sleep 15
	perftest "$st" $((BENCH_DUR * 4 + 60)) ib_write_bw -s 65536 -D $((BENCH_DUR * 4))
	rc=$?
	kill -INT $ppid 2>/dev/null
	wait $ppid
	if ((rc)); then
		rec group=profile stack="$st" status=failed error="traffic failed: $PT_ERR"
		return
	fi
	if ! timeout 300 perf report -i "$data" --stdio --no-children --sort dso,sym \
		--kallsyms=/proc/kallsyms \
		--percent-limit 0.5 > "$out.raw" 2>> "$BENCH_LOGS/perf-$st.log"; then
		rec group=profile stack="$st" status=failed \
			error="perf report failed: $(tail -n 2 "$BENCH_LOGS/perf-$st.log" | tr '\n' ' ')"
		return
	fi
	grep -E '^ +[0-9.]+%' "$out.raw" | head -n "$BENCH_PROFILE_TOP" > "$out"
	# "# Samples: 4K of event 'cpu-clock'"
	ns=$(sed -n 's/^# Samples: \([0-9.]*[KMG]\{0,1\}\) .*/\1/p' "$out.raw" | head -n 1)
	rm -f "$out.raw" "$data"
	rec group=profile stack="$st" status=ok mbps="$PT_MBPS" file="profile-$st.txt" \
		lines="$(wc -l < "$out")" perf_samples="${ns:--}"
}

scen_profile() {
	local st
	for st in $BENCH_PROFILE_STACKS; do
		log "profile: $st (counters)"
		profile_sys "$st"
	done
	if ((${BENCH_PROFILE_BPF:-0})) && command -v bpftrace > /dev/null; then
		for st in $BENCH_PROFILE_STACKS; do
			log "profile: $st (bpftrace)"
			profile_bpf "$st"
		done
	elif ((${BENCH_PROFILE_BPF:-0})); then
		rec group=profile_calls stack=all status=failed error="bpftrace not installed (tools/deps.sh)"
	fi
	if ! perf --version > /dev/null 2>&1; then
		rec group=profile stack=all status=failed error="perf not installed (linux-perf)"
		return
	fi
	sysctl -qw kernel.perf_event_paranoid=-1 kernel.kptr_restrict=0
	for st in $BENCH_PROFILE_STACKS; do
		log "profile: $st (perf)"
		profile_perf "$st"
	done
}
