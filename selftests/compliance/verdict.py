# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The verdicts of a conformance run: one per requirement ID, a failure
sticks.  Shared by conformance.py, hostile.py and their test groups."""
import time
import traceback

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


def run_groups(tests):
    """Run each test group in turn; a group that raises is reported and
    the next one runs.  Returns the aborted groups, with their reasons."""
    crashed = []
    for t in tests:
        t0 = time.monotonic()
        try:
            t()
            print("# %s done (%.1f s)" % (t.__name__, time.monotonic() - t0))
        except Failed as ex:
            crashed.append("%s: %s" % (t.__name__, ex))
            print("# %s: %s" % (t.__name__, ex))
        except Exception:  # noqa: BLE001
            crashed.append(t.__name__)
            traceback.print_exc()
    return crashed
