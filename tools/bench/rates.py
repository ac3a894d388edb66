#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Rates from a counter sample file of tools/bench/sample.sh (lines
"EPOCH v1 v2 ...", byte counters), by the wall clock.

rates.py series FILE T0 COL...
    MiB/s of the sum of columns COL (1 = first counter) in each whole
    second after epoch T0 (counters interpolated linearly between
    samples), comma separated.
rates.py window FILE NACT
    The window in which each of the first NACT columns moved by more than
    MOVED bytes between samples (all senders running): from the first sample at which every one of them has moved
    to the last sample before any of them stops.  Prints "SECONDS
    r1,r2,..." with the MiB/s of every column over that window, or
    "0 -" when there is no such window.
"""
import sys

MOVED = 4096


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < 2:
                continue
            try:
                rows.append([float(p[0])] + [int(x) for x in p[1:]])
            except ValueError:
                continue
    return rows


def at(rows, t, cols):
    """Sum of cols at time t, linear between the samples around t."""
    def tot(r):
        return sum(r[c] for c in cols)
    if t <= rows[0][0]:
        return tot(rows[0])
    for a, b in zip(rows, rows[1:]):
        if a[0] <= t <= b[0]:
            if b[0] == a[0]:
                return tot(b)
            return tot(a) + (tot(b) - tot(a)) * (t - a[0]) / (b[0] - a[0])
    return tot(rows[-1])


def series(rows, t0, cols):
    out = []
    k = 0
    while rows and t0 + k + 1 <= rows[-1][0]:
        out.append((at(rows, t0 + k + 1, cols) - at(rows, t0 + k, cols)) / 1048576.0)
        k += 1
    return ",".join("%.2f" % v for v in out)


def window(rows, nact):
    if len(rows) < 3:
        return "0 -"
    starts, ends = [], []
    for c in range(1, nact + 1):
        # More than a few frames: ARP and neighbour discovery move the
        # counters of an idle port too.
        moved = [i for i in range(1, len(rows)) if rows[i][c] - rows[i - 1][c] > MOVED]
        if not moved:
            return "0 -"
        # Sending from some time before moved[0] until some time after
        # moved[-1] - 1: fully active between those two samples.
        starts.append(moved[0])
        ends.append(moved[-1] - 1)
    s, e = max(starts), min(ends)
    if e <= s:
        return "0 -"
    dt = rows[e][0] - rows[s][0]
    return "%.2f %s" % (dt, ",".join("%.3f" % ((rows[e][c] - rows[s][c]) / dt / 1048576.0)
                                     for c in range(1, len(rows[0]))))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rows = load(sys.argv[2])
    if sys.argv[1] == "series":
        print(series(rows, float(sys.argv[3]), [int(c) for c in sys.argv[4:]]))
    elif sys.argv[1] == "window":
        print(window(rows, int(sys.argv[3])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
