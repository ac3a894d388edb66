# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check path estimates sampled with `metaroce show DEV --json` (one JSON
document per line of SAMPLES) against spec 7.4 and 12.2.1; test_path_rtt.

    path_estimates.py SAMPLES RTT_US RTO_MIN RTO_MAX ACK_DELAY MIN_PKTS MAX_PKTS MPB

RTT_US is the round trip netem adds: no sample, hence no min_rtt and no
srtt, can be below it.  Prints what it found; exit 1 on a violation.
"""
import json
import sys


def rto_base(p, rto_min, rto_max, ack_delay):
    """MRC-PATH-019: srtt + max(1, 4 rttvar) + peer Max ACK Delay,
    clamped, then doubled per backoff and capped."""
    base = p["srtt_us"] + max(1, 4 * p["rttvar_us"]) + ack_delay
    base = min(max(base, rto_min), rto_max)
    return min(base << min(p["backoff"], 16), rto_max)


def main(argv):
    samples, rtt, rto_min, rto_max, ack_delay, min_pkts, max_pkts, mpb = (
        argv[1], *map(int, argv[2:9]))
    bad, n, srtts = [], 0, []
    for line in open(samples):
        line = line.strip()
        if not line:
            continue
        for dev in json.loads(line)["devices"]:
            for c in dev["connections"]:
                for p in c["paths"]:
                    if p["state"] != "ACTIVE" or not p["tx_pkts"] or not p["srtt_us"]:
                        continue
                    n += 1
                    srtts.append(p["srtt_us"])
                    tag = "path %d sport %d" % (p["id"], p["sport"])
                    if p["min_rtt_us"] < rtt or p["srtt_us"] < rtt:
                        bad.append("%s: min_rtt %d srtt %d below the %d us netem adds "
                                   "(MRC-PATH-017/018)" % (tag, p["min_rtt_us"],
                                                           p["srtt_us"], rtt))
                    if p["min_rtt_us"] > p["srtt_us"] + 4 * p["rttvar_us"] + 1:
                        bad.append("%s: min_rtt %d above srtt %d + 4 rttvar %d "
                                   "(MRC-PATH-018)" % (tag, p["min_rtt_us"], p["srtt_us"],
                                                       p["rttvar_us"]))
                    want = rto_base(p, rto_min, rto_max, ack_delay)
                    if abs(p["rto_us"] - want) > 2:
                        bad.append("%s: rto %d, srtt %d rttvar %d backoff %d give %d "
                                   "(MRC-PATH-019)" % (tag, p["rto_us"], p["srtt_us"],
                                                       p["rttvar_us"], p["backoff"], want))
                    if not min_pkts * mpb <= p["cwnd"] <= max_pkts * mpb:
                        bad.append("%s: cwnd %d outside [%d, %d] (MRC-CC-003)" %
                                   (tag, p["cwnd"], min_pkts * mpb, max_pkts * mpb))
    srtts.sort()
    print("%d path samples; srtt min %s median %s max %s us (netem round trip %d us)" %
          (n, srtts and srtts[0], srtts and srtts[len(srtts) // 2], srtts and srtts[-1], rtt))
    for b in bad[:10]:
        print("bad: " + b)
    return 0 if n >= 4 and not bad else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
