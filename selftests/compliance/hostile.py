# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Hostile-wire regression checks: packets that are each well formed but
relate to each other, or to the target's state, the way an attacker would
arrange them (the security review of issue 18).  This host plays the peer
(or an off-path spoofer) of the device under test, whose verbs side is
driven by the target agent (target.py), exactly as conformance.py does.

    hostile.py LOCAL_IP TARGET_IP [AGENT_PORT [EXTRA_IP...]]

Prints one line per finding: "F<n> pass|fail <note>", then a summary.
Exit status 1 if any check failed or a group aborted.
"""
import sys

from conformance import Suite
from hostile_conn import ConnHostile
from hostile_rc import RcHostile
from verdict import results, run_groups

# The findings of the review, as the TAP lines name them.
FINDINGS = {
    "F01": "READ responses with a smaller Seg Shift (heap out-of-bounds write)",
    "F02": "off-path CONNECT + PROBE confirms a half-open connection (hijack, pinning)",
    "F03": "off-path CONNECT with a new epoch tears down the peer's connections",
    "F04": "request far past the segment window (out-of-bounds read before the window check)",
    "F05": "SYNC and duplicate CONNECT reflection (NAK and CONNECT_ACK amplification)",
    "F07": "use-after-free of a connection freed by RESET under a credit update",
    "F09": "READ response bitmap freed on failure, flush and destroy (leak)",
    "F10": "ACK and SYNC extensions read past the packet",
    "F11": "responder enforces max_dest_rd_atomic",
    "F12": "netlink CONN_GET (CIDs, entropies, addresses) needs CAP_NET_ADMIN",
    "F13": "token comparisons on received packets are constant-time",
}


class Hostile(Suite, RcHostile, ConnHostile):
    pass


def main(argv):
    local, target = argv[1], argv[2]
    aport = int(argv[3]) if len(argv) > 3 else 4794
    s = Hostile(local, target, aport, argv[4:])
    s.t_connect()
    tests = [getattr(s, n) for n in RcHostile.TESTS + ConnHostile.TESTS]
    crashed = run_groups(tests)
    fails = 0
    for f in sorted(FINDINGS):
        if f not in results:
            continue
        st, note = results[f]
        fails += st == "fail"
        print("%s %s %s%s" % (f, st, FINDINGS[f], ("  (%s)" % note) if note else ""))
    print("summary: %d findings checked, %d failed; %d groups aborted"
          % (len([f for f in FINDINGS if f in results]), fails, len(crashed)))
    for c in crashed:
        print("aborted: %s" % c)
    return 1 if fails or crashed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
