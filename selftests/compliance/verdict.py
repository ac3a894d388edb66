# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The verdicts of a conformance run: one per requirement ID, a failure
sticks.  Shared by conformance.py and its test groups (conf_*.py)."""

results = {}    # id -> (status, note)


class Failed(Exception):
    pass


def record(ids, ok, note=""):
    for i in ids.split():
        old = results.get(i)
        if old and old[0] == "fail":
            continue            # a failure sticks
        results[i] = ("pass" if ok else "fail", note if not ok else "")


def need(cond, msg):
    if not cond:
        raise Failed(msg)
