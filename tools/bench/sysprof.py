#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Where the time goes, from the guest's own accounting (works under TCG,
where perf has no PMU and samples little).

sysprof.py snap OUT.json CLIENT_DEV SERVER_DEV
    Snapshot /proc/stat (all CPUs), /proc/softirqs, /proc/interrupts,
    /proc/net/softnet_stat and every hw_counter of the two RDMA devices.
sysprof.py diff A.json B.json STACK [KEY=VALUE...]
    Print one benchmark record (JSON, group "profile_sys") with the
    deltas: CPU time shares, softirqs and interrupts per second, softnet
    drops and squeezes, the devices' counters that moved, and per data
    packet ratios (CPU time, NET_RX softirqs, ACKs, retransmissions).
"""
import json
import os
import sys
import time

CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def counters(dev):
    d = "/sys/class/infiniband/%s/ports/1/hw_counters" % dev
    out = {}
    try:
        names = os.listdir(d)
    except OSError:
        return out
    for n in names:
        try:
            with open(os.path.join(d, n)) as f:
                out[n] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return out


def snap(client, server):
    s = {"time": time.time(), "hz": os.sysconf("SC_CLK_TCK")}
    with open("/proc/stat") as f:
        for line in f:
            p = line.split()
            if p and p[0] == "cpu":
                s["cpu"] = dict(zip(CPU_FIELDS, (int(x) for x in p[1:9])))
    s["softirqs"] = {}
    with open("/proc/softirqs") as f:
        next(f)
        for line in f:
            p = line.split()
            s["softirqs"][p[0].rstrip(":")] = sum(int(x) for x in p[1:] if x.isdigit())
    irqs = 0
    with open("/proc/interrupts") as f:
        ncpu = len(next(f).split())
        for line in f:
            p = line.split()
            irqs += sum(int(x) for x in p[1:1 + ncpu] if x.isdigit())
    s["interrupts"] = irqs
    drops = squeezed = 0
    with open("/proc/net/softnet_stat") as f:
        for line in f:
            p = line.split()
            drops += int(p[1], 16)
            squeezed += int(p[2], 16)
    s["softnet"] = {"dropped": drops, "time_squeeze": squeezed}
    s["client"] = counters(client)
    s["server"] = counters(server)
    return s


def diff(a, b, stack, extra):
    dt = b["time"] - a["time"]
    cpu = {k: b["cpu"][k] - a["cpu"][k] for k in CPU_FIELDS}
    tot = sum(cpu.values()) or 1
    busy_s = (tot - cpu["idle"] - cpu["iowait"]) / float(b["hz"])
    r = {"group": "profile_sys", "stack": stack, "status": "ok", "wall_s": round(dt, 2),
         "cpu_pct": {k: round(100.0 * v / tot, 1) for k, v in cpu.items()},
         "busy_cpu_s": round(busy_s, 2),
         "softirqs_per_s": {k: round((b["softirqs"][k] - a["softirqs"].get(k, 0)) / dt, 1)
                            for k in b["softirqs"]},
         "interrupts_per_s": round((b["interrupts"] - a["interrupts"]) / dt, 1),
         "softnet": {k: b["softnet"][k] - a["softnet"][k] for k in b["softnet"]}}
    for side in ("client", "server"):
        r[side] = {k: v - a[side].get(k, 0) for k, v in sorted(b[side].items())
                   if v != a[side].get(k, 0)}
    c, s = r["client"], r["server"]
    # Data packets the server took in: MetaRoCE rx_data_packets, rxe rcvd_pkts.
    pkts = s.get("rx_data_packets", s.get("rcvd_pkts", 0))
    per = {}
    if pkts:
        per["cpu_us"] = round(1e6 * busy_s / pkts, 1)
        per["net_rx_softirqs"] = round((b["softirqs"].get("NET_RX", 0) -
                                        a["softirqs"].get("NET_RX", 0)) / float(pkts), 2)
        if "acks_sent" in s:
            per["acks_sent"] = round(s["acks_sent"] / float(pkts), 3)
        for k in ("retransmits", "rto_timeouts", "tlp_probes", "hint_limited",
                  "cwnd_reductions_loss", "cwnd_reductions_ecn", "doorbells"):
            if k in c:
                per[k] = round(c[k] / float(pkts), 4)
        for k in ("duplicates", "ooo_arrivals", "duplicate_request", "out_of_seq_request"):
            if k in s:
                per[k] = round(s[k] / float(pkts), 4)
        if "sent_pkts" in c:
            per["client_sent_pkts"] = round(c["sent_pkts"] / float(pkts), 3)
        if "sent_pkts" in s:
            per["server_sent_pkts"] = round(s["sent_pkts"] / float(pkts), 3)
        if "completer_retry_err" in c:
            per["completer_retry_err"] = round(c["completer_retry_err"] / float(pkts), 4)
    r["data_packets"] = pkts
    r["per_data_packet"] = per
    for kv in extra:
        k, v = kv.split("=", 1)
        try:
            r[k] = float(v) if "." in v else int(v)
        except ValueError:
            r[k] = v
    return r


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "snap":
        with open(sys.argv[2], "w") as f:
            json.dump(snap(sys.argv[3], sys.argv[4]), f)
    elif len(sys.argv) >= 5 and sys.argv[1] == "diff":
        with open(sys.argv[2]) as f:
            a = json.load(f)
        with open(sys.argv[3]) as f:
            b = json.load(f)
        print(json.dumps(diff(a, b, sys.argv[4], sys.argv[5:]), sort_keys=True))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
