#!/bin/bash
# Run every MetaRoCE selftest, each in a fresh VM (tools/vm/run.sh), and
# print one summary line: "N passed, N failed, N skipped".
#
# Usage: tools/run-tests.sh [NAME_FILTER...]
#   Tests are the executables selftests/metaroce/test_*; a filter keeps those
#   whose name contains any of the given words.
#   MROCE_RESULTS: where the results go (default .vm/results); the variables
#   of tools/vm/run.sh (MROCE_KERNEL_DIR, ...) pass through to it.
# A test prints TAP; every "ok"/"not ok" line counts.  A test whose VM
# crashes, times out or logs a kernel error report counts one failure more.
set -uo pipefail
tree=$(dirname "$(readlink -f "$0")")/..
tree=$(readlink -f "$tree")
cd "$tree" || exit 2
results=${MROCE_RESULTS:-$tree/.vm/results}
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

pass=0 fail=0 skip=0
failed_tests=()
for t in "${tests[@]}"; do
	name=$(basename "$t")
	name=${name%.*}
	out=$results/$name
	rm -rf "$out"
	# Per-test VM options: "# vm: -n 2 -t 600" in the test's first lines.
	opts=$(sed -n '1,10s/^# vm: //p' "$t")
	start=$SECONDS
	# shellcheck disable=SC2086
	tools/vm/run.sh -q -t 300 $opts -o "$out" -- "$t" > "$out.log" 2>&1
	rc=$?
	p=0 f=0 s=0
	for so in "$out"/vm*/stdout.txt; do
		[ -f "$so" ] || continue
		s=$((s + $(grep -cE '^ok .*# *SKIP' "$so")))
		p=$((p + $(grep -E '^ok ' "$so" | grep -cvE '# *SKIP')))
		f=$((f + $(grep -cE '^not ok ' "$so")))
	done
	status=PASS
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
	[ "$status" = FAIL ] && failed_tests+=("$name")
	printf '%-40s %s  (%d ok, %d not ok, %d skip, %ds)\n' "$name" "$status" "$p" "$f" "$s" $((SECONDS - start))
	if [ "$status" = FAIL ]; then
		# Each failed point with the first diagnostics under it, so a CI
		# summary alone says why.
		awk '/^not ok/ { n = 8; print; next }
		     /^#/ && n > 0 { n--; print; next }
		     { n = 0 }' "$out"/vm*/stdout.txt 2>/dev/null | sed 's/^/    /'
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
done

if ((${#failed_tests[@]})); then
	echo "failed: ${failed_tests[*]} (logs in .vm/results/)"
fi
echo "$pass passed, $fail failed, $skip skipped"
((fail == 0 && ${#tests[@]} > 0))
