#!/bin/bash
# make bench: run the benchmark in the VM bench and write BENCHMARKS.md,
# bench/results.json and bench/plots/*.png.
#
# Usage: tools/bench/bench.sh [-s] [-m full|short] [-p] [-o DIR] [-r DIR]
#   -s   smoke run (tiny sizes, a few cases) into DIR (default .vm/bench-smoke)
#        instead of the full run into the tree
#   -m   short: fewer sizes, loss levels and iterations (a loaded host)
#   -p   run the one-VM and the two-VM parts at the same time
#   -2   run only the two-VM part (loss between two kernels, NVMe-oF)
#   -t   timeout of the one-VM part in seconds (default 3000); a run cut
#        short keeps the records it has, the rest reads "not run"
#   -o   where the VM logs go (default .vm/bench-run)
#   -r   write BENCHMARKS.md, results.json and plots/ into DIR instead of
#        the tree (a smoke run always writes them next to its logs)
# BENCH_ONLY="paths incast ..." in the environment runs only those
# scenarios of the one-VM part (guest.sh) and skips the two-VM part.
# The full run takes about 30 minutes under TCG: one VM (2 vCPUs) for
# everything but the two-kernel loss runs, then two VMs (-n 2).
set -uo pipefail
tree=$(readlink -f "$(dirname "$0")/../..")
cd "$tree" || exit 2
mode=full work="" par=0 only2=0 vm_timeout=3000 repdir=""
while getopts "sm:p2o:t:r:" opt; do
	case $opt in
	s) mode=smoke ;;
	m) mode=$OPTARG ;;
	p) par=1 ;;
	2) only2=1 ;;
	t) vm_timeout=$OPTARG ;;
	o) work=$OPTARG ;;
	r) repdir=$OPTARG ;;
	*) exit 2 ;;
	esac
done
[ -n "$work" ] || work=$tree/.vm/bench-run
[ "$mode" = smoke ] && [ "$work" = "$tree/.vm/bench-run" ] && work=$tree/.vm/bench-smoke
rm -rf "$work"
mkdir -p "$work"
work=$(readlink -f "$work")

qpscale=$work/qpscale
gcc -O2 -Wall -Wextra -Werror -o "$qpscale" tools/bench/qpscale.c -libverbs || exit 2
commit=$(git -C "$tree" rev-parse --short HEAD 2>/dev/null || echo unknown)
# Failures of the VM runs themselves (crash, timeout, kernel error report).
vmrec=$work/vmrun.jsonl
: > "$vmrec"

start=$SECONDS
# The host's load (other VMs, builds) during the run: /proc/loadavg at the
# start, every 30 s and at the end, into the "host" record.
hostrec=$work/host.jsonl
loadlog=$work/loadavg.txt
read -r load0 _ < /proc/loadavg
( while :; do read -r l _ < /proc/loadavg; echo "$l" >> "$loadlog"; sleep 30; done ) &
loadpid=$!
one_vm() {
	echo "bench: one VM ($mode), logs in $work/one"
	tools/vm/run.sh -q -t "$vm_timeout" -o "$work/one" -- \
		env BENCH_QPSCALE="$qpscale" BENCH_COMMIT="$commit" BENCH_ONLY="${BENCH_ONLY:-}" \
		tools/bench/guest.sh "$mode"
	local rc=$?
	echo "bench: one VM done after $((SECONDS - start)) s (exit $rc)"
	((rc == 0)) ||
		printf '{"group": "vm_run", "stack": "one-vm", "status": "failed", "error": "tools/vm/run.sh exit %d (a crash, a timeout or a kernel error report; logs in %s)"}\n' \
			"$rc" "$work/one" >> "$vmrec"
}
two_vm() {
	echo "bench: two VMs, logs in $work/two"
	tools/vm/run.sh -q -n 2 -t 1200 -o "$work/two" -- tools/bench/guest-2vm.sh "$mode"
	local rc=$?
	echo "bench: two VMs done after $((SECONDS - start)) s (exit $rc)"
	((rc == 0)) ||
		printf '{"group": "vm_run", "stack": "two-vm", "status": "failed", "error": "tools/vm/run.sh -n 2 exit %d (logs in %s)"}\n' \
			"$rc" "$work/two" >> "$vmrec"
}
records=("$work/one/vm0/bench/records.jsonl")
if ((only2)); then
	two_vm
	records=("$work/two/vm0/bench/records.jsonl")
elif [ "$mode" = smoke ] || [ -n "${BENCH_ONLY:-}" ]; then
	one_vm
elif ((par)); then
	# The two-VM part starts once the first VM has booted, so the module
	# staging in tools/vm/run.sh is done once, not twice at a time.
	one_vm &
	for ((i = 0; i < 600; i++)); do
		[ -s "$work/one/vm0/console.log" ] && break
		sleep 1
	done
	two_vm
	wait
	records+=("$work/two/vm0/bench/records.jsonl")
else
	one_vm
	two_vm
	records+=("$work/two/vm0/bench/records.jsonl")
fi
kill $loadpid 2>/dev/null
wait $loadpid 2>/dev/null
read -r load1 _ < /proc/loadavg
echo "$load1" >> "$loadlog"
printf '{"group": "host", "status": "ok", "host_cpus": %d, "loadavg1_start": %s, "loadavg1_end": %s, %s, "wall_s": %d}\n' \
	"$(nproc)" "$load0" "$load1" \
	"$(awk '{ s += $1; n++; if ($1 > m) m = $1 } END { printf "\"loadavg1_max\": %.2f, \"loadavg1_mean\": %.2f, \"load_samples\": %d", m, s / n, n }' "$loadlog")" \
	"$((SECONDS - start))" > "$hostrec"
records+=("$vmrec" "$hostrec")
present=()
for r in "${records[@]}"; do [ -f "$r" ] && present+=("$r"); done

if [ -n "$repdir" ]; then
	mkdir -p "$repdir"
	repdir=$(readlink -f "$repdir")
fi
if [ "$mode" != smoke ]; then
	md=$tree/BENCHMARKS.md json=$tree/bench/results.json plots=$tree/bench/plots
	[ -n "$repdir" ] && md=$repdir/BENCHMARKS.md json=$repdir/results.json plots=$repdir/plots
	note=""
	[ -n "${BENCH_ONLY:-}" ] && note="Only the scenarios \"$BENCH_ONLY\" ran (BENCH_ONLY); the rest reads \"not run\". "
	((only2)) && note="Only the two-VM part ran (tools/bench/bench.sh -2); the rest reads \"not run\". "
	[ "$mode" = short ] && note+="This is a short run (tools/bench/bench.sh -m short): fewer sizes, loss levels and iterations; cases it did not reach read \"not run\"."
else
	md=$work/BENCHMARKS.md json=$work/results.json plots=$work/plots
	note="Smoke run: tiny sizes, a few cases; checks the harness, not the transport."
	[ -n "$repdir" ] && md=$repdir/BENCHMARKS.md json=$repdir/results.json plots=$repdir/plots
fi
mkdir -p "$plots"
/usr/bin/python3 tools/bench/report.py --out-json "$json" --out-md "$md" --plots "$plots" \
	--previous "$tree/bench/results.json" \
	--profiles "$work/one/vm0/bench" --note "$note" "${present[@]}" || exit 1
echo "bench: wrote $md, $json, $plots/ in $((SECONDS - start)) s"
