#!/bin/bash
# vm: -t 1500
# Smoke run of the benchmark harness (tools/bench, `make bench`): tiny
# sizes and one or two cases per scenario, then the report.  Checks that
# the harness produces valid records, results.json, BENCHMARKS.md and PNG
# plots, and that MetaRoCE and rxe perftest cases produced numbers.
. "$(dirname "$0")/lib.sh"

SMOKE=/tmp/bench-smoke
rm -rf $SMOKE
mkdir -p $SMOKE
tap_plan 5

smoke_run() {
	env BENCH_OUT=$SMOKE/raw BENCH_QPSCALE=/tmp/qpscale timeout 1100 \
		tools/bench/guest.sh smoke > $SMOKE/guest.log 2>&1
	local rc=$?
	((rc == 0)) || tail -n 30 $SMOKE/guest.log
	return $rc
}
ok_if "guest harness (tools/bench/guest.sh smoke) completes" smoke_run
# Where the time went: the harness's timestamped steps (make check's
# budget).
diag "$(grep '^\[[0-9:]*\]' $SMOKE/guest.log)"

check_records() {
	/usr/bin/python3 - "$SMOKE/raw/records.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
groups = {r["group"] for r in recs}
want = {"meta", "lat", "bw", "steer", "steer_cpu", "crc", "crc_impl", "loss", "scale", "cpu", "profile", "outage", "planes", "incast", "meta_end"}
missing = want - groups
assert not missing, "groups missing: %s" % sorted(missing)
for r in recs:
    assert r["status"] in ("ok", "failed", "not_measured"), r
    if r["status"] != "ok":
        assert r.get("error"), "no error text: %r" % r
        print("# %s %s: %s: %s" % (r["group"], r.get("stack"), r["status"], r["error"]))
PY
}
ok_if "records.jsonl: valid JSON, every scenario present, every non-ok record says why" check_records

# numbers_ok GROUP STACK KEY: an ok record with a positive KEY.
numbers_ok() {
	/usr/bin/python3 - "$SMOKE/raw/records.jsonl" "$@" <<'PY'
import json, sys
f, g, st, k = sys.argv[1:]
recs = [json.loads(l) for l in open(f) if l.strip()]
hit = [r for r in recs if r["group"] == g and r.get("stack") == st]
assert hit, "no %s record for %s" % (g, st)
for r in hit:
    assert r["status"] == "ok" and r.get(k, 0) > 0, r
PY
}
numbers_all() {
	numbers_ok lat mroce-2ns median_us && numbers_ok lat rxe-1ns median_us &&
		numbers_ok bw mroce-2ns mbps && numbers_ok bw rxe-1ns mbps
}
ok_if "MetaRoCE and rxe latency and bandwidth cases produced numbers" numbers_all

ok_if "report.py writes results.json, BENCHMARKS.md and plots" \
	/usr/bin/python3 tools/bench/report.py --out-json $SMOKE/results.json --out-md $SMOKE/BENCHMARKS.md \
	--plots $SMOKE/plots --profiles $SMOKE/raw --note smoke $SMOKE/raw/records.jsonl

check_report() {
	/usr/bin/python3 - "$SMOKE" <<'PY'
import json, os, sys
d = sys.argv[1]
res = json.load(open(os.path.join(d, "results.json")))
assert res["records"] and res["targets"] and res["meta"]["mode"] == "smoke", "results.json incomplete"
md = open(os.path.join(d, "BENCHMARKS.md")).read()
for h in ("## Targets", "## Latency", "## Bandwidth", "## Loss", "## Scale", "## CPU time",
          "## Multipath", "## Profile", "## Failed cases", "## Plots"):
    assert h in md, "BENCHMARKS.md lacks " + h
assert "not measured" in md, "unmeasured scenarios are not reported as such"
assert res["plots"], "no plots"
for p in res["plots"]:
    with open(os.path.join(d, "plots", p), "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n", p + " is not a PNG"
PY
}
ok_if "results.json, BENCHMARKS.md sections and PNG files are valid" check_report
tap_done
