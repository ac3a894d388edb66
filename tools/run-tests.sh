#!/bin/bash
# Run every MetaRoCE selftest, each in a fresh VM (tools/vm/run.sh), and
# print one summary line: "N passed, N failed, N skipped".
#
# Usage: tools/run-tests.sh [NAME_FILTER...]
#   Tests are the executables selftests/metaroce/test_*; a filter keeps those
#   whose name contains any of the given words.
#   MROCE_RESULTS: where the results go (default .vm/results); the variables
#   of tools/vm/run.sh (MROCE_KERNEL_DIR, ...) pass through to it.
#   MROCE_JOBS: how many tests run at once, each in its own VM (default 2).
#   A VM with 2 vCPUs keeps about one host CPU busy under TCG (its vCPUs
#   wait for timers, the other VM and the 9p host); on a 2-CPU host two at
#   a time took 42 min where one at a time took 50 (each test runs slower
#   beside another).  A test that boots two VMs itself ("# vm: -n 2") runs
#   alone.
# A test prints TAP; every "ok"/"not ok" line counts.  A test whose VM
# crashes, times out or logs a kernel error report counts one failure more.
# Each test's line is printed as it ends, with its wall time.
set -uo pipefail
tree=$(dirname "$(readlink -f "$0")")/..
tree=$(readlink -f "$tree")
cd "$tree" || exit 2
results=${MROCE_RESULTS:-$tree/.vm/results}
jobs=${MROCE_JOBS:-2}
case $jobs in *[!0-9]* | "" | 0) echo "run-tests.sh: MROCE_JOBS takes a positive integer" >&2; exit 2 ;; esac
mkdir -p "$results"

tests=()
for t in selftests/metaroce/test_*; do
	[ -x "$t" ] || continue
	if [ $# -gt 0 ]; then
		keep=0
		for f in "$@"; do [[ $(basename "$t") == *"$f"* ]] && keep=1; done
		((keep)) || continue
	fi
	tests+=("$t")
done

# test_name TEST: the test's name, its file name without the extension.
test_name() {
	local n
	n=$(basename "$1")
	echo "${n%.*}"
}

# vm_opts TEST: its per-test VM options, "# vm: -n 2 -t 600" in its first
# lines.
vm_opts() { sed -n '1,10s/^# vm: //p' "$1"; }

# run_one TEST: run it; leave its summary line (and, if it failed, its
# failed points with their first diagnostics) in $out.line and
# "PASSED FAILED SKIPPED STATUS" in $out.counts.
run_one() {
	local t=$1 name out opts start rc p=0 f=0 s=0 so status=PASS
	name=$(test_name "$t")
	out=$results/$name
	rm -rf "$out" "$out.line" "$out.counts"
	opts=$(vm_opts "$t")
	start=$SECONDS
	# shellcheck disable=SC2086
	tools/vm/run.sh -q -t 300 $opts -o "$out" -- "$t" > "$out.log" 2>&1
	rc=$?
	for so in "$out"/vm*/stdout.txt; do
		[ -f "$so" ] || continue
		s=$((s + $(grep -cE '^ok .*# *SKIP' "$so")))
		p=$((p + $(grep -E '^ok ' "$so" | grep -cvE '# *SKIP')))
		f=$((f + $(grep -cE '^not ok ' "$so")))
	done
	{
		if ((rc == 4 && f == 0)); then
			status=SKIP
			((p + s == 0)) && s=1
		elif ((rc != 0)); then
			status=FAIL
			# The VM or the kernel log failed the test beyond its own TAP.
			((f == 0)) && f=1
			grep -h '^run.sh:' "$out.log" | head -n 3
		elif ((f > 0)); then
			status=FAIL
		fi
		printf '%-40s %s  (%d ok, %d not ok, %d skip, %ds)\n' "$name" "$status" "$p" "$f" "$s" \
			$((SECONDS - start))
		if [ "$status" = FAIL ]; then
			# Each failed point with the first diagnostics under it, so a
			# CI summary alone says why.
			awk '/^not ok/ { n = 8; print; next }
			     /^#/ && n > 0 { n--; print; next }
			     { n = 0 }' "$out"/vm*/stdout.txt 2>/dev/null | sed 's/^/    /'
		fi
	} > "$out.line.tmp"
	mv "$out.line.tmp" "$out.line"
	echo "$p $f $s $status" > "$out.counts"
}

# The tests run by a pool of MROCE_JOBS workers; a two-VM test waits until
# the pool is empty and runs alone.  Lines print in the order tests end.
declare -A running=()
reap() {
	local pid t
	wait -n -p pid "${!running[@]}"
	t=${running[$pid]}
	unset "running[$pid]"
	cat "$results/$(test_name "$t").line" 2>/dev/null
}
for t in "${tests[@]}"; do
	alone=0
	[[ " $(vm_opts "$t") " == *" -n 2 "* ]] && alone=1
	while ((${#running[@]} >= (alone ? 1 : jobs))); do reap; done
	run_one "$t" &
	running[$!]=$t
	((alone)) && reap
done
while ((${#running[@]})); do reap; done

pass=0 fail=0 skip=0
failed_tests=()
for t in "${tests[@]}"; do
	name=$(test_name "$t")
	read -r p f s status < "$results/$name.counts" 2>/dev/null || { p=0 f=1 s=0 status=FAIL; }
	[ "$status" = FAIL ] && failed_tests+=("$name")
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
done

if ((${#failed_tests[@]})); then
	echo "failed: ${failed_tests[*]} (logs in $results/)"
fi
echo "$pass passed, $fail failed, $skip skipped"
((fail == 0 && ${#tests[@]} > 0))
