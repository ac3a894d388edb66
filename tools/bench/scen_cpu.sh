#!/bin/bash
# CPU time per GiB moved, from the guest's own accounting (/proc/stat over
# the whole run: the tools, softirq, kworkers and the transport's threads).
# perftest sleeps on completion events (-e) so that polling does not count;
# perftest has no events mode for WRITE, so this is ib_send_bw.

# cpu_case STACK KIND: KIND is send (ib_send_bw 64 KiB, 1 QP) or tcp.
cpu_case() {
	local st=$1 kind=$2 c0 c1 t0 t1 bytes
	c0=$(cpu_snap)
	t0=$(date +%s.%N)
	if [ "$kind" = tcp ]; then
		iperf "$st" "$BENCH_DUR" 1 || { rec group=cpu stack="$st" status=failed error="$PT_ERR"; return; }
		bytes=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bytes"]))' \
			"$(ls -t "$BENCH_LOGS"/"$st"-iperf3-*.client | head -n 1)")
	else
		# Events need iteration mode (perftest: "Duration mode doesn't
		# work with events").
		perftest "$st" 300 ib_send_bw -s 65536 -n "$BENCH_CPU_ITERS" -e ||
			{ rec group=cpu stack="$st" status=failed error="$PT_ERR"; return; }
		bytes=$((PT_F[1] * 65536))
	fi
	c1=$(cpu_snap)
	t1=$(date +%s.%N)
	# /proc/stat fields: user nice system idle iowait irq softirq steal.
	read -r cs us sy si <<< "$(awk -v a="$c0" -v b="$c1" -v hz="$(getconf CLK_TCK)" 'BEGIN {
		split(a, x); split(b, y)
		u = (y[1] - x[1]) + (y[2] - x[2]); s = y[3] - x[3]; q = (y[6] - x[6]) + (y[7] - x[7])
		printf "%.3f %.3f %.3f %.3f", (u + s + q) / hz, u / hz, s / hz, q / hz }')"
	rec group=cpu stack="$st" kind="$kind" status=ok bytes="$bytes" cpu_s="$cs" user_s="$us" \
		sys_s="$sy" irq_s="$si" wall_s="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" \
		cpu_s_per_gib="$(awk -v c="$cs" -v b="$bytes" 'BEGIN { if (b > 0) printf "%.3f", c / (b / 1073741824); else print "-" }')"
}

scen_cpu() {
	local st
	for st in $BENCH_CPU_STACKS; do
		log "cpu: $st"
		case $st in tcp-*) cpu_case "$st" tcp ;; *) cpu_case "$st" send ;; esac
	done
}
