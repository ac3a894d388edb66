# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""MRC-TUN-001 against the spec's table (Documentation/metaroce/spec.md,
section 17): every tunable listed there exists with the default and range
given; a value just outside the range is refused with EINVAL (the tool
exits 1 and the value stays); both ends of the range are accepted.  Only
the `auth` tunable may be missing (no authentication mode).

    tunables_check.py SPEC_MD METAROCE_TOOL

Prints TAP lines ("ok N - ..." / "not ok N - ...") without a plan;
exit status 1 if any check failed.
"""
import re
import subprocess
import sys


def spec_table(path):
    """{name: (default, lo, hi)} of the rows settable at run time (T), and
    {name: default} of the module-parameter-only ones (M)."""
    text = open(path).read()
    sec = text[text.index("## 17. Tunables"):text.index("## 18. Counters")]
    rows, mod_only = {}, {}
    for m in re.finditer(r"^\| `(\w+)` \| (\d+) \| (\d+)-(\d+)\b[^|]*\|[^|]*\| (M/T|M) \|",
                         sec, re.M):
        if m.group(5) == "M":
            mod_only[m.group(1)] = int(m.group(2))
        else:
            rows[m.group(1)] = tuple(int(m.group(i)) for i in (2, 3, 4))
    return rows, mod_only


def tool(mr, *args):
    return subprocess.run([mr, *args], capture_output=True, text=True)


def driver_table(mr):
    out = tool(mr, "tunables").stdout
    got = {}
    for m in re.finditer(r"^(\w+)\s+(\d+)\s+\((\d+) to (\d+)\)", out, re.M):
        got[m.group(1)] = tuple(int(m.group(i)) for i in (2, 3, 4))
    return got


def main(argv):
    spec, mr = argv[1], argv[2]
    (want, mod_only), have = spec_table(spec), driver_table(mr)
    n = fails = 0

    def ok(cond, what):
        nonlocal n, fails
        n += 1
        fails += not cond
        print("%sok %d - %s" % ("" if cond else "not ", n, what))

    ok(len(want) >= 40 and mod_only, "the spec lists %d run-time tunables and %d "
       "module parameters" % (len(want), len(mod_only)))
    params = {}
    for k in mod_only:
        try:
            params[k] = int(open("/sys/module/metaroce/parameters/" + k).read())
        except OSError:
            params[k] = None
    ok(params == mod_only, "module parameters: %s, spec %s" % (params, mod_only))
    missing = sorted(set(want) - set(have) - {"auth"})
    ok(not missing, "every tunable of the spec exists (missing: %s)" % missing)
    wrong = ["%s: spec %s, driver %s" % (k, want[k], have[k])
             for k in sorted(set(want) & set(have)) if want[k] != have[k]]
    ok(not wrong, "defaults and ranges as in the spec (%s)" % "; ".join(wrong))
    refused, accepted = [], []
    for k in sorted(set(want) & set(have)):
        d, lo, hi = have[k]
        for bad in ([lo - 1] if lo > 0 else []) + [hi + 1]:
            r = tool(mr, "set", k, str(bad))
            now = tool(mr, "get", k).stdout.strip()
            if r.returncode != 1 or "range" not in r.stderr or now != str(d):
                refused.append("%s=%d: exit %d, now %s" % (k, bad, r.returncode, now))
        for good in (lo, hi, d):
            r = tool(mr, "set", k, str(good))
            now = tool(mr, "get", k).stdout.strip()
            if r.returncode or now != str(good):
                accepted.append("%s=%d: exit %d, now %s" % (k, good, r.returncode, now))
    ok(not refused, "values outside the range are refused and change nothing (%s)" %
       "; ".join(refused[:5]))
    ok(not accepted, "both ends of every range are accepted (%s)" % "; ".join(accepted[:5]))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
