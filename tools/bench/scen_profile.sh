#!/bin/bash
# Where the time goes: perf record -a (cpu-clock; TCG has no PMU) during
# ib_write_bw 64 KiB, the top symbols per stack go to profile-STACK.txt.

scen_profile() {
	local st data out ppid rc
	if ! perf --version > /dev/null 2>&1; then
		rec group=profile stack=all status=failed error="perf not installed (linux-perf)"
		return
	fi
	sysctl -qw kernel.perf_event_paranoid=-1 kernel.kptr_restrict=0
	for st in $BENCH_PROFILE_STACKS; do
		log "profile: $st"
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
			continue
		fi
		if ! timeout 300 perf report -i "$data" --stdio --no-children --sort dso,sym \
			--kallsyms=/proc/kallsyms \
			--percent-limit 0.5 > "$out.raw" 2>> "$BENCH_LOGS/perf-$st.log"; then
			rec group=profile stack="$st" status=failed \
				error="perf report failed: $(tail -n 2 "$BENCH_LOGS/perf-$st.log" | tr '\n' ' ')"
			continue
		fi
		grep -E '^ +[0-9.]+%' "$out.raw" | head -n "$BENCH_PROFILE_TOP" > "$out"
		rm -f "$out.raw" "$data"
		rec group=profile stack="$st" status=ok mbps="${PT_F[3]}" file="profile-$st.txt" \
			samples="$(wc -l < "$out")"
	done
}
