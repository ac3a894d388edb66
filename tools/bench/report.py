#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Turn benchmark records (records.jsonl from tools/bench/guest*.sh) into
results.json, BENCHMARKS.md and PNG plots.

usage: report.py --out-json FILE --out-md FILE --plots DIR [--profiles DIR]
                 [--note TEXT] RECORDS.jsonl...

Every figure is printed next to its baseline from the same run, headline
numbers are ratios.  A failed or unmeasured case is shown as such with its
error; nothing is filled in.
"""
import argparse
import json
import math
import os
import sys

STACK_NAMES = {
    "mroce-2ns": "MetaRoCE (2 namespaces)",
    "mroce-1ns": "MetaRoCE (1 namespace)",
    "rxe-1ns": "rxe (1 namespace)",
    "tcp-2ns": "TCP iperf3 (2 namespaces)",
    "tcp-1ns": "TCP iperf3 (1 namespace)",
    "mroce-2vm": "MetaRoCE (2 VMs)",
    "rxe-2vm": "rxe (2 VMs)",
    "mroce-ecmp": "MetaRoCE (ECMP links)",
    "mroce-incast": "MetaRoCE",
    "tcp-incast": "TCP iperf3, ECN on",
}


def load(paths):
    recs = []
    for p in paths:
        with open(p) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    recs.append(json.loads(line))
                except ValueError as e:
                    sys.exit("%s:%d: bad record: %s" % (p, n, e))
    for r in recs:
        if "group" not in r or r.get("status") not in ("ok", "failed", "not_measured"):
            sys.exit("record without group/status: %r" % r)
        # A value the shell took for a number but JSON cannot hold (inf,
        # nan, a commit id like 2e39431) becomes a string again.
        for k, v in list(r.items()):
            if isinstance(v, float) and not math.isfinite(v):
                r[k] = None if k != "tree_commit" else "unknown"
    return recs


def pick(recs, **kw):
    return [r for r in recs if all(r.get(k) == v for k, v in kw.items())]


def one(recs, **kw):
    m = pick(recs, **kw)
    return m[0] if m else None


def val(r, key):
    if r is None:
        return None
    if r.get("status") != "ok":
        return None
    v = r.get(key)
    return v if isinstance(v, (int, float)) else None


def cell(r, key, fmt="%.1f"):
    """A table cell: the value, or why there is none."""
    if r is None:
        return "not run"
    if r.get("status") == "failed":
        return "FAILED: " + str(r.get("error", ""))[:80].replace("|", "/")
    if r.get("status") == "not_measured":
        return "not measured"
    v = r.get(key)
    return fmt % v if isinstance(v, (int, float)) else "-"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def rcell(x, fmt="%.2fx"):
    return fmt % x if x is not None else "n/a"


def pcell(x):
    return "%.0f%%" % (100 * x) if x is not None else "n/a"


def size_name(s):
    if not isinstance(s, int):
        return "-"
    if s >= 1 << 20:
        return "%d MiB" % (s >> 20)
    if s >= 1 << 10:
        return "%d KiB" % (s >> 10)
    return "%d B" % s


def per_op(k):
    """Packets per request of a cack_pkts record (scen_cack.sh)."""
    if not k or not k.get("requests"):
        return "-"
    return "%.2f" % (float(k["packets"]) / k["requests"])


def md_table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


class Report:
    def __init__(self, recs, profiles, note):
        self.recs = recs
        self.profiles = profiles
        self.note = note
        self.md = []
        self.headline = []
        self.failures = []
        self.plots = []
        for r in recs:
            if r.get("status") == "failed":
                self.failures.append(r)

    def h(self, text):
        self.md.append(text)

    # -------------------------------------------------------------- targets
    def targets(self):
        R = self.recs
        wm = val(one(R, group="bw", stack="mroce-2ns", op="write", size=65536, qps=1), "mbps")
        wm1 = val(one(R, group="bw", stack="mroce-1ns", op="write", size=65536, qps=1), "mbps")
        wr = val(one(R, group="bw", stack="rxe-1ns", op="write", size=65536, qps=1), "mbps")
        tcp = val(one(R, group="bw", stack="tcp-2ns", op="tcp", qps=1), "mbps")
        lm = val(one(R, group="lat", stack="mroce-2ns", op="send"), "median_us")
        lm1 = val(one(R, group="lat", stack="mroce-1ns", op="send"), "median_us")
        lr = val(one(R, group="lat", stack="rxe-1ns", op="send"), "median_us")

        def loss_share(stack, pct, where="veth"):
            base = val(one(R, group="loss", where=where, stack=stack, loss_pct=0), "mbps")
            at = one(R, group="loss", where=where, stack=stack, loss_pct=pct)
            if at is not None and at.get("status") == "failed":
                return 0.0 if base else None
            return ratio(val(at, "mbps"), base)

        scale_all = pick(R, group="scale", stack="mroce-2ns")
        scale_ok = [r for r in scale_all if r.get("status") == "ok"]
        max_qp = max((r.get("connected", 0) for r in scale_ok), default=None)
        max_try = max((r.get("qps") or r.get("requested") or 0 for r in scale_all), default=0)
        if max_qp is None:
            qp_verdict = "n/a"
        elif max_qp >= 4096:
            qp_verdict = "yes"
        elif max_try < 4096 and len(scale_ok) == len(scale_all):
            qp_verdict = "not tried (largest run %d)" % max_try
        else:
            qp_verdict = "no"
        planes = pick(R, group="planes")
        mp = pick(R, group="multipath")
        outage = one(R, group="outage", stack="mroce-ecmp") or one(R, group="outage")
        why = self.why
        mod = one(R, group="module") or {}
        l1, l10 = loss_share("mroce-1ns", 1), loss_share("mroce-1ns", 10)
        pr = self.planes_ratio_val(planes)
        lk = self.links_ratio_val(mp)
        ost = self.outage_stats(outage)
        # (target, measured as, value, wanted, ">=" or "<=", context, why)
        spec = [
            ("ib_write_bw 64 KiB >= 3x rxe", "MetaRoCE/rxe, 1 namespace", ratio(wm1, wr), 3.0, ">=",
             "same veth; 2-namespace MetaRoCE/rxe %s" % rcell(ratio(wm, wr)), why.get("bw_rxe", "")),
            ("ib_write_bw 64 KiB >= TCP on the same link", "MetaRoCE/TCP, 2 namespaces",
             ratio(wm, tcp), 1.0, ">=", "iperf3 1 stream", why.get("bw_tcp", "")),
            ("8 B send latency <= 1/2 rxe", "MetaRoCE/rxe median, 1 namespace", ratio(lm1, lr), 0.5, "<=",
             "2-namespace %s; minimum %s" % (rcell(ratio(lm, lr)), rcell(ratio(
                 val(one(R, group="lat", stack="mroce-1ns", op="send"), "min_us"),
                 val(one(R, group="lat", stack="rxe-1ns", op="send"), "min_us")))), why.get("lat", "")),
            ("1% loss >= 90% of lossless", "share kept", l1, 0.9, ">=",
             "rxe keeps %s" % pcell(loss_share("rxe-1ns", 1)), self.loss_why(1)),
            ("10% loss >= 50% of lossless", "share kept", l10, 0.5, ">=",
             "rxe keeps %s" % pcell(loss_share("rxe-1ns", 10)), self.loss_why(10)),
            ("linear scaling with planes", "4 planes / 1 plane", pr, 3.6, ">=",
             self.nm_reason(planes) or "every plane a veth shaped to %s Mbit/s" %
             next((r.get("link_mbit") for r in planes if r.get("link_mbit")), "?"),
             self.planes_why(planes)),
            ("(proxy) linear scaling with ECMP links", "4 links / 1 link", lk, 3.6, ">=",
             "multipath over rate-limited ECMP links, not planes; %s" % self.nm_reason(mp) if
             not self.ok_any(mp) else "multipath over %s Mbit/s ECMP links, not planes" %
             next((r.get("link_mbit") for r in mp if r.get("link_mbit")), "?"), self.links_why(mp)),
            ("back to full speed within a few RTOs after a plane failure", "s to 90% after the path returned",
             ost["recover_s"] if ost else None, None, "", "outage of %s: %s" % (
                 self.outage_what(outage), self.outage_text(outage)),
             "the module's RTO bounds are %s-%s us (initial %s us); the RTO in force follows the "
             "measured RTT, which the run does not record" % (
                 mod.get("rto_min_us"), mod.get("rto_max_us"), mod.get("rto_initial_us"))
             if mod.get("rto_min_us") else ""),
            ("4096 QPs between two hosts", "QP pairs that carried traffic", max_qp, 4096, ">=",
             self.scale_fail_text(scale_all), ""),
        ] + self.latency_targets() + [
            ("ib_atomic_bw rate >= rxe", "MetaRoCE/rxe ops/s, 1 namespace",
             ratio(val(one(R, group="atomic", stack="mroce-1ns"), "ops_per_s"),
                   val(one(R, group="atomic", stack="rxe-1ns"), "ops_per_s")), 1.0, ">=",
             "2-namespace %s" % rcell(ratio(val(one(R, group="atomic", stack="mroce-2ns"), "ops_per_s"),
                                            val(one(R, group="atomic", stack="rxe-1ns"), "ops_per_s"))), ""),
        ] + [("8 B %s message rate >= rxe" % op, "MetaRoCE/rxe messages/s, 1 namespace",
              ratio(val(one(R, group="rate", stack="mroce-1ns", op=op), "msgs_per_s"),
                    val(one(R, group="rate", stack="rxe-1ns", op=op), "msgs_per_s")), 1.0, ">=",
              "ib_%s_bw -s 8, 1 QP" % op, "") for op in ("send", "write")] + [
            ("ib_write_bw 64 KiB, 8 QPs >= 1.6x 1 QP", "MetaRoCE 8 QPs / 1 QP, 2 namespaces",
             ratio(val(one(R, group="bw", stack="mroce-2ns", op="write", size=65536, qps=8), "mbps"), wm),
             1.6, ">=", "one connection carries the 8 QPs", ""),
            ("ib_write_bw 64 KiB, 8 QPs >= 1.5x rxe's 8 QPs", "MetaRoCE/rxe, 8 QPs, 1 namespace",
             ratio(val(one(R, group="bw", stack="mroce-1ns", op="write", size=65536, qps=8), "mbps"),
                   val(one(R, group="bw", stack="rxe-1ns", op="write", size=65536, qps=8), "mbps")),
             1.5, ">=", "", ""),
        ] + [("NVMe-oF 4 KiB random read, queue depth %d, >= rxe" % qd, "MetaRoCE/rxe IOPS, two VMs",
              self.nvme_ratio(qd), 1.0, ">=", self.nvme_context(qd), "") for qd in (1, 32)]
        rows = []
        for t, how, x, want, op, ctx, wy in spec:
            if t.startswith("4096"):
                shown, met = (str(x) if x is not None else "n/a"), qp_verdict
                gap = "%.2fx" % (4096.0 / x) if x and x < 4096 else ("none" if x else "n/a")
            elif want is None and mod.get("rto_max_us"):
                # "A few RTOs": 4, and the longest RTO the module allows,
                # plus the series' 1 s resolution.
                bound = 4 * mod["rto_max_us"] / 1e6
                shown = "%.1f s" % x if x is not None else "n/a"
                met, gap = self.judge(x, bound + 1.0, "<=")
                rows.append((t, how, shown, "<= %.1f s (4 x the maximum RTO) + 1 s (the series' bins)" % bound,
                             gap, met, ctx, wy))
                continue
            elif want is None:
                shown = "%.1f s" % x if x is not None else "n/a"
                met, gap = "not judged (no RTO figure to compare with)", "-"
            elif how == "share kept":
                shown = "%.0f%%" % (100 * x) if x is not None else "n/a"
                met, gap = self.judge(x, want, op)
                rows.append((t, how, shown, "%s %.0f%%" % (op, 100 * want), gap, met, ctx, wy))
                continue
            else:
                shown = rcell(x)
                met, gap = self.judge(x, want, op)
                if not self.ok_any(planes) and t.startswith("linear scaling with planes"):
                    met = "not measured"
            rows.append((t, how, shown, "%s %g" % (op, want) if want is not None else "-", gap, met, ctx, wy))
        self.targets_rows = rows
        self.h("## Targets\n")
        self.h("Gap: how many times the measured ratio must still improve to meet the target. "
               "Why: the numbers behind the gap, taken from this run's profile and counters "
               "(see \"Profile: where the time goes\").\n")
        self.h(md_table(["Target", "Measured as", "Measured", "Wanted", "Gap", "Met?", "Context", "Why"],
                        [[str(c).replace("|", "/") for c in r] for r in rows]))
        self.h("")

    @staticmethod
    def judge(x, want, op):
        if x is None:
            return "n/a", "n/a"
        if op == ">=":
            if x >= want:
                return "yes", "none"
            return "no", "%.2fx" % (want / x) if x else "inf"
        if x <= want:
            return "yes", "none"
        return "no", "%.2fx" % (x / want)

    @staticmethod
    def scale_fail_text(rs):
        bad = [r for r in rs if r.get("status") != "ok"]
        if not bad:
            return ""
        return "%s QP pairs failed: %s" % (bad[0].get("requested", "?"), bad[0].get("error", ""))

    @staticmethod
    def verdict(x, want):
        if x is None:
            return "n/a"
        return "yes" if x >= want else "no (gap %.2fx)" % (want / x if x else float("inf"))

    @staticmethod
    def verdict_le(x, want):
        if x is None:
            return "n/a"
        return "yes" if x <= want else "no (gap %.2fx)" % (x / want)

    @staticmethod
    def ok_any(rs):
        return any(r.get("status") == "ok" for r in rs)

    @staticmethod
    def nm_reason(rs):
        for r in rs:
            if r.get("status") != "ok":
                return "%s: %s" % (r["status"].replace("_", " "), r.get("error", ""))
        return ""

    @staticmethod
    def links_ratio_val(mp):
        one_l = val(next((r for r in mp if r.get("links") == 1), None), "mbps")
        four = val(next((r for r in mp if r.get("links") == 4), None), "mbps")
        return ratio(four, one_l)

    def links_ratio(self, mp):
        return rcell(self.links_ratio_val(mp))

    @staticmethod
    def planes_ratio_val(planes):
        one_p = val(next((r for r in planes if r.get("planes") == 1), None), "mbps")
        four = val(next((r for r in planes if r.get("planes") == 4), None), "mbps")
        return ratio(four, one_p)

    # ------------------------------------------------- why, from the data
    def sysprof(self, stack):
        r = one(self.recs, group="profile_sys", stack=stack)
        return r if r is not None and r.get("status") == "ok" else None

    @staticmethod
    def busy_pct(p):
        c = p["cpu_pct"]
        return 100.0 - c.get("idle", 0) - c.get("iowait", 0)

    def prof_line(self, st):
        p = self.sysprof(st)
        if p is None:
            return None
        c, per = p["cpu_pct"], p.get("per_data_packet", {})
        txt = "%s: %.0f%% of 2 vCPUs busy (user %.0f%%, sys %.0f%%, softirq %.0f%%), %s us CPU per data packet" % (
            STACK_NAMES.get(st, st), self.busy_pct(p), c.get("user", 0), c.get("system", 0),
            c.get("softirq", 0) + c.get("irq", 0), per.get("cpu_us", "?"))
        bpp = self.bytes_per_packet(p)
        if bpp:
            txt += ", %.0f bytes per data packet" % bpp
        n = p.get("data_packets")
        hr = p.get("softirqs_per_s", {}).get("HRTIMER")
        if n and hr is not None:
            txt += ", %.2f HRTIMER softirqs per data packet" % (hr * p["wall_s"] / n)
        if "acks_sent" in per:
            txt += ", %.2f ACKs per data packet" % per["acks_sent"]
        elif "server_sent_pkts" in per:
            txt += ", %.2f packets back per data packet" % per["server_sent_pkts"]
        if per.get("retransmits"):
            txt += ", %.3f retransmissions per data packet" % per["retransmits"]
        return txt

    @staticmethod
    def bytes_per_packet(p):
        """Receiver bytes (MetaRoCE rx_bytes: headers and CRC included)
        per data packet; rxe counts no bytes."""
        rx = (p.get("server") or {}).get("rx_bytes")
        n = p.get("data_packets")
        return rx / float(n) if rx and n else None

    @property
    def why(self):
        R = self.recs
        out = {}
        m, x = self.prof_line("mroce-2ns"), self.prof_line("rxe-1ns")
        pm, px = self.sysprof("mroce-2ns"), self.sysprof("rxe-1ns")
        if m and x:
            cmp = ""
            um = pm.get("per_data_packet", {}).get("cpu_us")
            ux = px.get("per_data_packet", {}).get("cpu_us")
            if um and ux:
                cmp = "MetaRoCE costs %.2fx rxe's CPU per data packet; " % (um / ux)
            bm, bx = self.busy_pct(pm), self.busy_pct(px)
            cmp += ("both stacks keep the vCPUs busy (%.0f%%, %.0f%%): CPU-bound, so the ratio is the "
                    "inverse of the CPU cost per byte. " % (bm, bx) if min(bm, bx) > 85 else
                    "idle time left (%.0f%%, %.0f%% busy): the sender waits (window, ACKs, timers), "
                    "not only the CPU. " % (bm, bx))
            out["bw_rxe"] = cmp + m + "; " + x
        elif m:
            out["bw_rxe"] = m
        km, kx = self.calls_per_packet("mroce-2ns"), self.calls_per_packet("rxe-1ns")
        if km and kx:
            out["bw_rxe"] = out.get("bw_rxe", "") + "; kernel function calls per data packet: MetaRoCE " \
                "%.1f, rxe %.1f (bpftrace)" % (km, kx)
        cm = val(one(R, group="cpu", stack="mroce-2ns"), "cpu_s_per_gib")
        ct = val(one(R, group="cpu", stack="tcp-2ns"), "cpu_s_per_gib")
        if cm and ct:
            out["bw_tcp"] = ("CPU per GiB (whole guest, \"CPU time\" section): MetaRoCE %.0f s, TCP %.0f s "
                             "(%.1fx): TCP moves 64 KiB GSO segments per skb, MetaRoCE one packet per MTU" % (
                                 cm, ct, cm / ct))
            if pm and self.bytes_per_packet(pm):
                out["bw_tcp"] += " (%.0f bytes per data packet, %.0f us CPU per data packet)" % (
                    self.bytes_per_packet(pm), pm.get("per_data_packet", {}).get("cpu_us", 0))
        lmn = val(one(R, group="lat", stack="mroce-1ns", op="send"), "min_us")
        lrn = val(one(R, group="lat", stack="rxe-1ns", op="send"), "min_us")
        lmd = val(one(R, group="lat", stack="mroce-1ns", op="send"), "median_us")
        lrd = val(one(R, group="lat", stack="rxe-1ns", op="send"), "median_us")
        if None not in (lmn, lrn, lmd, lrd):
            out["lat"] = ("minimum %.1f us vs rxe %.1f us, median %.1f vs %.1f us: the median is %.1fx the "
                          "minimum for MetaRoCE, so most of it is waiting (vCPU scheduling on the host, "
                          "wakeups), not the stack's own path" % (lmn, lrn, lmd, lrd, lmd / lmn)
                          if lmd > 2 * lmn else
                          "minimum %.1f us vs rxe %.1f us, median %.1f vs %.1f us: the per-message path "
                          "itself costs this" % (lmn, lrn, lmd, lrd))
        return out

    def loss_why(self, pct):
        R = self.recs
        r = one(R, group="loss", where="veth", stack="mroce-1ns", loss_pct=pct)
        if r is None or r.get("status") != "ok":
            return cell(r, "x") if r is not None else ""
        if r.get("retransmits") is None:
            return ""
        meta = one(R, group="meta") or {}
        out = "%s retransmissions and %s RTO timeouts in the %s s run (%.1f MiB/s)" % (
            r["retransmits"], r.get("rto_timeouts", "?"), meta.get("dur_s", "?"), r["mbps"])
        if r.get("netem_drops_data") is not None:
            out += ("; netem dropped %d data-way and %d ACK-way packets; of the retransmissions "
                    "%d fast (threshold rule), %d tail loss probes, %d spurious (the original "
                    "arrived too); %d probes sent, %d path reroutes" % tuple(
                        r.get(k, 0) for k in ("netem_drops_data", "netem_drops_ack",
                                              "fast_retransmits", "tlp_probes",
                                              "spurious_retransmits", "probes_sent",
                                              "path_reroutes")))
        return out

    def planes_why(self, planes):
        ok = [r for r in planes if r.get("status") == "ok"]
        if not ok:
            return ""
        cap = ok[0].get("link_mbit", 0) * 1e6 / 8 / 1048576
        txt = "; ".join("%s plane%s %.1f MiB/s = %.0f%% of %s x %.2f MiB/s" % (
            r["planes"], "s" if r["planes"] > 1 else "", r["mbps"],
            100 * r["mbps"] / (cap * r["planes"]) if cap else 0, r["planes"], cap) for r in ok)
        one_p = next((r for r in ok if r["planes"] == 1), None)
        if one_p and cap and one_p["mbps"] < 0.8 * cap:
            txt += (" (1 plane already below its link's capacity: something other than the links limits "
                    "it; see the profile)")
        return txt

    def links_why(self, mp):
        ok = [r for r in mp if r.get("status") == "ok" and r.get("link_tx_bytes")]
        return "; ".join("%s link%s: bytes per link %s" % (r["links"], "s" if r["links"] > 1 else "",
                                                           r["link_tx_bytes"]) for r in ok)

    def outage_stats(self, r):
        """The outage series: MiB/s the server received in each wall-clock
        second since the traffic started; down_at/up_at are the seconds
        (from the same start) at which the path was cut and came back.
        dip = lowest second overlapping the outage / mean of the whole
        seconds before it (the first left out: ramp-up); recover_s = from
        the path's return to the end of the first second after it at >= 90%
        of that mean."""
        if r is None or r.get("status") != "ok":
            return None
        vals = [float(v) for v in str(r["series"]).split(",") if v != ""]
        down, up = float(r["down_at"]), float(r["up_at"])
        nb = int(math.floor(down))
        before = vals[1:nb] or vals[:nb]
        if not before:
            return None
        pre = sum(before) / len(before)
        if pre <= 0:
            return None
        during = vals[nb:int(math.ceil(up))]
        first_after = int(math.ceil(up))
        back = next((i for i in range(first_after, len(vals)) if vals[i] >= 0.9 * pre), None)
        return {"pre_mbps": pre, "dip": (min(during) / pre) if during else None,
                "idle_before": sum(1 for v in before if v <= 0.05 * pre), "n_before": len(before),
                "recover_s": (back + 1 - up) if back is not None else None,
                "points": [(i + 1, v) for i, v in enumerate(vals)], "down": down, "up": up}

    @staticmethod
    def outage_what(r):
        if r is None:
            return "?"
        if r.get("stack") == "mroce-ecmp":
            return "one of 2 ECMP links"
        if r.get("planes") in (1, None):
            return "the only path (1 plane)"
        return "one of %s planes" % r.get("planes")

    def outage_text(self, r):
        s = self.outage_stats(r)
        if r is None:
            return "not run"
        if r.get("status") != "ok":
            return "FAILED: " + r.get("error", "")
        if s is None:
            return "no throughput in the seconds before the outage: %s" % r.get("series")
        rec = "%.1f s after the path returned" % s["recover_s"] if s["recover_s"] is not None \
            else "not back to 90% within the run"
        txt = "dip to %s of %.1f MiB/s; %s" % (
            "%.0f%%" % (100 * s["dip"]) if s["dip"] is not None else "n/a", s["pre_mbps"], rec)
        if s["idle_before"] * 4 >= s["n_before"]:
            txt += " (NOT meaningful: %d of the %d seconds before the outage already moved nothing; " \
                   "the series is %s)" % (s["idle_before"], s["n_before"], r["series"])
        if r.get("series_of"):
            txt += " [%s]" % r["series_of"]
        return txt

    # ------------------------------------------------------------- sections
    def latency(self):
        R = self.recs
        stacks = [s for s in ("mroce-2ns", "mroce-1ns", "rxe-1ns") if pick(R, group="lat", stack=s)]
        if not stacks:
            return
        self.h("## Latency (perftest, 8 B, in us: minimum, median = t_typical, p99)\n")
        self.h("On a loaded TCG host the median and p99 include the time a vCPU waits for the host; "
               "the minimum is the cost of the stack itself.\n")
        rows = []
        for op in ("send", "write", "read"):
            rs = {s: one(R, group="lat", stack=s, op=op) for s in stacks}
            if not any(rs.values()):
                continue
            row = ["ib_%s_lat" % op]
            for s in stacks:
                row += [cell(rs[s], "min_us", "%.1f"), cell(rs[s], "median_us", "%.1f"),
                        cell(rs[s], "p99_us", "%.1f")]
            row.append(rcell(ratio(val(rs.get("mroce-1ns"), "median_us"), val(rs.get("rxe-1ns"), "median_us"))))
            row.append(rcell(ratio(val(rs.get("mroce-1ns"), "min_us"), val(rs.get("rxe-1ns"), "min_us"))))
            rows.append(row)
        head = ["test"]
        for s in stacks:
            head += [STACK_NAMES[s] + " min", "median", "p99"]
        head += ["MetaRoCE/rxe median (1 ns)", "MetaRoCE/rxe min (1 ns)"]
        self.h(md_table(head, rows))
        self.h("")

    def bandwidth(self):
        R = self.recs
        stacks = [s for s in ("mroce-2ns", "mroce-1ns", "rxe-1ns") if pick(R, group="bw", stack=s)]
        if not stacks:
            return
        self.h("## Bandwidth (perftest BW average, MiB/s)\n")
        rows = []
        keys = sorted({(r["op"], r["size"], r["qps"]) for r in pick(R, group="bw") if r.get("op") != "tcp"},
                      key=lambda k: (["send", "write", "read"].index(k[0]) if k[0] in ("send", "write", "read") else 9, k[1], k[2]))
        for op, size, q in keys:
            rs = {s: one(R, group="bw", stack=s, op=op, size=size, qps=q) for s in stacks}
            tcp = one(R, group="bw", stack="tcp-2ns", op="tcp", qps=q)
            row = ["ib_%s_bw" % op, size_name(size), q] + [cell(rs[s], "mbps") for s in stacks]
            row.append(cell(tcp, "mbps"))
            row.append(rcell(ratio(val(rs.get("mroce-1ns"), "mbps"), val(rs.get("rxe-1ns"), "mbps"))))
            row.append(rcell(ratio(val(rs.get("mroce-2ns"), "mbps"), val(tcp, "mbps"))))
            rows.append(row)
        for q in sorted({r["qps"] for r in pick(R, group="bw", op="tcp")}):
            t2 = one(R, group="bw", stack="tcp-2ns", op="tcp", qps=q)
            t1 = one(R, group="bw", stack="tcp-1ns", op="tcp", qps=q)
            rows.append(["iperf3 TCP", "-", "%d streams" % q] + ["" for _ in stacks] +
                        ["%s (1 ns: %s)" % (cell(t2, "mbps"), cell(t1, "mbps")), "", ""])
        head = ["test", "size", "QPs"] + [STACK_NAMES[s] for s in stacks] + \
            ["TCP iperf3 (2 ns, as many streams as QPs)", "MetaRoCE/rxe (1 ns)", "MetaRoCE/TCP (2 ns)"]
        self.h(md_table(head, rows))
        self.h("")
        okbw = [r for r in pick(R, group="bw") if r.get("status") == "ok" and r.get("op") != "tcp"]
        nocal = [r for r in okbw if r.get("perftest_clock") == "failed"]
        if any("mbps_perftest" in r for r in okbw):
            self.h("MiB/s = messages completed x message size / perftest's sample window (duration minus "
                   "its margins, timed by the wall clock). perftest's own figure needs its CPU clock "
                   "calibration, which failed in %d of these %d runs (it then prints 0.00; kept as "
                   "mbps_perftest in results.json). Up to 8 KiB perftest signals every 100th message, so "
                   "those counts are +-100 messages.\n" % (len(nocal), len(okbw)))
        wire = [r for r in pick(R, group="bw") if r.get("status") == "ok" and "wire_bytes" in r]
        short = [r for r in wire if r["wire_bytes"] < r.get("iters", 0) * r.get("size", 0) * 0.9
                 and r["op"] == "write" and r.get("qps") == 1]
        eff = []
        meta = one(R, group="meta") or {}
        dur = meta.get("dur_s") or {"full": 3, "short": 3, "smoke": 2}.get(meta.get("mode"))
        for r in wire:
            if dur and r["op"] == "write" and r["size"] == 65536 and r.get("mbps"):
                pay = r["mbps"] * 1048576.0 * dur
                eff.append("%s %d QP%s: %.1f%s" % (
                    STACK_NAMES.get(r["stack"], r["stack"]), r["qps"], "s" if r["qps"] > 1 else "",
                    r["wire_bytes"] / pay,
                    " (%d retransmissions, %d RTOs)" % (r["retransmits"], r["rto_timeouts"])
                    if r.get("retransmits") else ""))
        if eff:
            self.h("Bytes on the veth per payload byte, ib_write_bw 64 KiB (wire counter over the whole run, "
                   "with connection setup and perftest's warm-up, divided by BW x duration; around 1.5 is "
                   "normal, much more means the stack sends far more than it delivers): %s.\n" % "; ".join(eff))
        self.h("Every bandwidth run records the bytes that crossed the veth (wire_bytes in "
               "results.json); %s." % ("all single-QP write runs moved at least their payload over the wire"
                                       if not short else "%d single-QP write runs moved LESS than their payload "
                                       "over the veth (traffic bypassed the link?): %s" % (
                                           len(short), ", ".join(r["stack"] for r in short))))
        self.h("")
        at = {s: one(R, group="atomic", stack=s) for s in stacks}
        if any(at.values()):
            self.h("Atomic rate (ib_atomic_bw, fetch-and-add, ops/s): " + "; ".join(
                "%s %s" % (STACK_NAMES[s], cell(at[s], "ops_per_s", "%.0f")) for s in stacks) +
                "; MetaRoCE/rxe (1 ns) %s.\n" % rcell(ratio(val(at.get("mroce-1ns"), "ops_per_s"),
                                                            val(at.get("rxe-1ns"), "ops_per_s"))))

    def crc(self):
        """ib_write_bw 64 KiB with each packet CRC32C implementation forced,
        and with the one the module picked at load (scen_crc.sh)."""
        R = self.recs
        runs = [r for r in pick(R, group="crc") if r.get("impl") != "rxe"]
        if not runs:
            return
        self.h("## CRC32C implementations: ib_write_bw 64 KiB, 1 QP, 2 namespaces\n")
        lib = val(one(R, group="crc", impl="lib"), "mbps")
        rxe = one(R, group="crc", impl="rxe")
        rows = []
        for r in runs:
            info = one(R, group="crc_impl", impl=r["impl"]) or {}
            name = r["impl"] if r["impl"] != "auto" else "auto (%s)" % info.get("chosen", "?")
            rows.append([name, cell(r, "mbps"), rcell(ratio(val(r, "mbps"), lib)),
                         rcell(ratio(val(r, "mbps"), val(rxe, "mbps")))])
        self.h(md_table(["crc32c_impl", "MiB/s", "vs lib", "vs rxe (1 ns, same run: %s MiB/s)" %
                         cell(rxe, "mbps")], rows))
        auto = one(R, group="crc_impl", impl="auto")
        if auto and auto.get("load"):
            self.h("\nThe module's measurement at load (ns per 1092-byte packet, best of 5 x 32): `%s`.\n"
                   % auto["load"])
        else:
            self.h("")

    def batch(self):
        """ib_write_bw / ib_read_bw with UDP GSO batches off (tx_batch_pkts
        1) and at the default, and rxe (scen_batch.sh)."""
        R = self.recs
        runs = pick(R, group="batch")
        if not runs:
            return
        ns = []
        for r in runs:
            if r.get("batch") not in ns and r.get("batch") != "rxe":
                ns.append(r["batch"])
        if len(ns) < 2:
            return
        off, on = ns[0], ns[-1]
        self.h("## UDP GSO batches: 1 QP, 2 namespaces (tx_batch_pkts %s vs %s)\n" % (off, on))
        rows = []
        for op, size in (("write", 65536), ("write", 1048576), ("read", 65536)):
            a = one(R, group="batch", batch=off, op=op, size=size)
            b = one(R, group="batch", batch=on, op=op, size=size)
            x = one(R, group="batch", batch="rxe", op=op, size=size)
            if not (a or b or x):
                continue        # not in this run (the smoke run has one)
            k = one(R, group="batch_pkts", batch=on, op=op, size=size) or {}
            per = (float(k["packets"]) / float(k["gso_skbs"])
                   if k.get("gso_skbs") and int(k["gso_skbs"]) > 0 else None)
            rows.append(["ib_%s_bw %s" % (op, size_name(size)), cell(a, "mbps"), cell(b, "mbps"),
                         rcell(ratio(val(b, "mbps"), val(a, "mbps"))),
                         "%.1f" % per if per else "-", cell(x, "mbps"),
                         rcell(ratio(val(a, "mbps"), val(x, "mbps"))),
                         rcell(ratio(val(b, "mbps"), val(x, "mbps")))])
        self.h(md_table(["case", "MiB/s, %s" % off, "MiB/s, %s" % on, "gain",
                         "packets per GSO skb (both senders)", "rxe (1 ns) MiB/s",
                         "vs rxe, %s" % off, "vs rxe, %s" % on], rows))
        self.h("")

    def steer(self):
        """ib_write_bw 64 KiB with receive steering on (rx_steer 1) and off,
        rxe alongside, with the packets steered and each vCPU's busy,
        softirq and system shares (scen_steer.sh)."""
        R = self.recs
        if not pick(R, group="steer"):
            return
        self.h("## Receive steering: ib_write_bw 64 KiB, 2 namespaces, rx_steer 1 vs 0 (spec 20.1)\n")
        self.h("CPU: per vCPU, busy / softirq / system in per cent of the run (/proc/stat); "
               "steered packets run in softirq on their connection's home vCPU.\n")
        rows = []
        for qps in sorted({r.get("qps") for r in pick(R, group="steer") if r.get("qps")}):
            a = one(R, group="steer", steer=1, qps=qps, stack="mroce-2ns")
            b = one(R, group="steer", steer=0, qps=qps, stack="mroce-2ns")
            x = one(R, group="steer", steer="rxe", qps=qps)
            ca = one(R, group="steer_cpu", steer=1, qps=qps) or {}
            cb = one(R, group="steer_cpu", steer=0, qps=qps) or {}
            cx = one(R, group="steer_cpu", steer="rxe", qps=qps) or {}
            rows.append(["%d QP" % qps, cell(a, "mbps"), cell(b, "mbps"),
                         rcell(ratio(val(a, "mbps"), val(b, "mbps"))), cell(x, "mbps"),
                         rcell(ratio(val(a, "mbps"), val(x, "mbps"))),
                         rcell(ratio(val(b, "mbps"), val(x, "mbps"))),
                         str(ca.get("steered", "-")), ca.get("cpus", "-"), cb.get("cpus", "-"),
                         cx.get("cpus", "-")])
        self.h(md_table(["QPs", "MiB/s, steer 1", "MiB/s, steer 0", "1 vs 0", "rxe (1 ns) MiB/s",
                         "1 vs rxe", "0 vs rxe", "packets steered", "CPU, steer 1",
                         "CPU, steer 0", "CPU, rxe"], rows))
        self.h("")
        a = one(R, group="steer_peers", steer=1)
        b = one(R, group="steer_peers", steer=0)
        if a or b:
            base = val(one(R, group="steer", steer=1, qps=1, stack="mroce-2ns"), "mbps")
            n = (a or b).get("peers", "-")
            self.h("%s peers x 2 QPs at once (a connection each, summed): rx_steer 1 %s MiB/s "
                   "(%s of one peer with 1 QP, %s packets steered, CPU %s), rx_steer 0 %s MiB/s "
                   "(CPU %s).\n" % (n, cell(a, "mbps"), rcell(ratio(val(a, "mbps"), base)),
                                     (a or {}).get("steered", "-"), (a or {}).get("cpus", "-"),
                                     cell(b, "mbps"), (b or {}).get("cpus", "-")))

    def cack(self):
        """8-byte latency and the atomic rate with carried ACKs off
        (ack_carry 0) and on (1), with the packets per operation
        (scen_cack.sh)."""
        R = self.recs
        if not pick(R, group="cack", cack=1):
            return
        self.h("## Carried ACKs: 2 namespaces, ack_carry 0 vs 1 (spec 8.6)\n")
        self.h("Packets: both devices' tx_packets per request the responder received.\n")
        rows = []
        for op in ("read", "write", "send", "atomic"):
            a = one(R, group="cack", cack=0, op=op, stack="mroce-2ns")
            b = one(R, group="cack", cack=1, op=op, stack="mroce-2ns")
            x = one(R, group="cack", cack="rxe", op=op)
            ka = one(R, group="cack_pkts", cack=0, op=op + "_lat") or {}
            kb = one(R, group="cack_pkts", cack=1, op=op + "_lat") or {}
            rows.append(["ib_%s_lat 8 B median (min) us" % op,
                         "%s (%s)" % (cell(a, "median_us"), cell(a, "min_us")),
                         "%s (%s)" % (cell(b, "median_us"), cell(b, "min_us")),
                         rcell(ratio(val(b, "median_us"), val(a, "median_us"))),
                         "%s (%s)" % (cell(x, "median_us"), cell(x, "min_us")),
                         rcell(ratio(val(b, "median_us"), val(x, "median_us"))),
                         per_op(ka), per_op(kb)])
        a = one(R, group="cack", cack=0, op="fetch_add", stack="mroce-2ns")
        b = one(R, group="cack", cack=1, op="fetch_add", stack="mroce-2ns")
        x = one(R, group="cack", cack="rxe", op="fetch_add")
        rows.append(["ib_atomic_bw ops/s", cell(a, "ops_per_s"), cell(b, "ops_per_s"),
                     rcell(ratio(val(b, "ops_per_s"), val(a, "ops_per_s"))), cell(x, "ops_per_s"),
                     rcell(ratio(val(b, "ops_per_s"), val(x, "ops_per_s"))),
                     per_op(one(R, group="cack_pkts", cack=0, op="atomic_bw") or {}),
                     per_op(one(R, group="cack_pkts", cack=1, op="atomic_bw") or {})])
        self.h(md_table(["case", "ack_carry 0", "ack_carry 1", "1 vs 0", "rxe (1 ns)",
                         "1 vs rxe", "packets per op, 0", "packets per op, 1"], rows))
        self.h("")

    def eco(self):
        """UCX and libfabric over MetaRoCE against the same library over
        TCP on the same veth pair, 2 namespaces (scen_eco.sh)."""
        R = self.recs
        if not pick(R, group="eco", status="ok"):
            return
        self.h("## UCX and libfabric: 2 namespaces, against the same library over TCP\n")
        self.h("rxe runs neither in this VM (usage guide, section 3), so the baseline is the library's "
               "own TCP transport on the same veth pair. ucx_perftest (UCP): UCX_TLS=rc_verbs,ud_verbs "
               "against UCX_TLS=tcp; fi_pingpong with every byte checked (-c): verbs msg and "
               "verbs;ofi_rxm rdm endpoints against the tcp provider's msg endpoints.\n")
        rows = []

        def row(name, m, t, key, unit):
            better = (ratio(val(m, key), val(t, key)) if key == "mbps" else
                      ratio(val(t, key), val(m, key)))
            rows.append([name] + [cell(r, key) + (" " + unit if val(r, key) is not None else "")
                                  for r in (m, t)] + [rcell(better)])

        for case, size, key, unit in (("tag_bw", 65536, "mbps", "MB/s"),
                                      ("tag_lat", 8, "lat_us", "us (median)")):
            row("ucx_perftest %s %s" % (case, size_name(size)),
                one(R, group="eco", lib="ucx", case=case, transport="mroce"),
                one(R, group="eco", lib="ucx", case=case, transport="tcp"), key, unit)
        for size in (8, 65536):
            t = one(R, group="eco", lib="fi", case="msg", size=size, transport="tcp")
            key, unit = ("lat_us", "us per transfer (mean)") if size == 8 else ("mbps", "MB/s")
            row("fi_pingpong msg %s" % size_name(size),
                one(R, group="eco", lib="fi", case="msg", size=size, transport="mroce"), t, key, unit)
            row("fi_pingpong rdm (ofi_rxm) %s" % size_name(size),
                one(R, group="eco", lib="fi", case="rdm", size=size, transport="mroce"), t, key, unit)
        self.h(md_table(["case", "MetaRoCE", "TCP", "MetaRoCE vs TCP (above 1: MetaRoCE better)"],
                        rows))
        self.h("")

    def latency_targets(self):
        """8-byte latency against rxe in one namespace: median <= 1.0x and
        minimum <= 0.8x for send, write and read; send with completions by
        event (-e) median <= 1.0x."""
        R = self.recs
        out = []
        for op in ("send", "write", "read"):
            m, x = one(R, group="lat", stack="mroce-1ns", op=op), one(R, group="lat", stack="rxe-1ns", op=op)
            ctx = "median %s vs %s us, minimum %s vs %s us" % (cell(m, "median_us"), cell(x, "median_us"),
                                                              cell(m, "min_us"), cell(x, "min_us"))
            out.append(("ib_%s_lat 8 B median <= rxe" % op, "MetaRoCE/rxe median, 1 namespace",
                        ratio(val(m, "median_us"), val(x, "median_us")), 1.0, "<=", ctx, ""))
            out.append(("ib_%s_lat 8 B minimum <= 0.8x rxe" % op, "MetaRoCE/rxe minimum, 1 namespace",
                        ratio(val(m, "min_us"), val(x, "min_us")), 0.8, "<=", ctx, ""))
        m, x = one(R, group="lat_event", stack="mroce-1ns", op="send"), one(R, group="lat_event",
                                                                            stack="rxe-1ns", op="send")
        out.append(("ib_send_lat -e (completions by event) median <= rxe", "MetaRoCE/rxe median, 1 namespace",
                    ratio(val(m, "median_us"), val(x, "median_us")), 1.0, "<=",
                    "median %s vs %s us" % (cell(m, "median_us"), cell(x, "median_us")), ""))
        return out

    def small(self):
        """Completions by event and the 8-byte message rate
        (scen_perftest.sh: lat_event, rate)."""
        R = self.recs
        stacks = [s for s in ("mroce-2ns", "mroce-1ns", "rxe-1ns")
                  if pick(R, group="lat_event", stack=s) or pick(R, group="rate", stack=s)]
        if not stacks:
            return
        self.h("## Small messages: completions by event, 8-byte message rate\n")
        self.h("ib_send_lat -e waits for each completion with ibv_req_notify_cq and a completion channel "
               "instead of polling; the rate is messages completed per second of ib_OP_bw -s 8, 1 QP.\n")
        rows = []
        for op in ("send",):
            rs = {st: one(R, group="lat_event", stack=st, op=op) for st in stacks}
            rows.append(["ib_%s_lat -e, median (min) us" % op] +
                        ["%s (%s)" % (cell(rs[st], "median_us"), cell(rs[st], "min_us")) for st in stacks] +
                        [rcell(ratio(val(rs.get("mroce-1ns"), "median_us"), val(rs.get("rxe-1ns"), "median_us")))])
        for op in ("send", "write"):
            rs = {st: one(R, group="rate", stack=st, op=op) for st in stacks}
            rows.append(["ib_%s_bw -s 8, messages/s" % op] + [cell(rs[st], "msgs_per_s", "%.0f") for st in stacks] +
                        [rcell(ratio(val(rs.get("mroce-1ns"), "msgs_per_s"), val(rs.get("rxe-1ns"), "msgs_per_s")))])
        self.h(md_table(["case"] + [STACK_NAMES[st] for st in stacks] + ["MetaRoCE/rxe (1 ns)"], rows))
        self.h("")

    def nvme_pair(self, qd):
        """The MetaRoCE and rxe records of NVMe-oF at queue depth qd."""
        return (one(self.recs, group="nvme", stack="mroce-2vm", qd=qd),
                one(self.recs, group="nvme", stack="rxe-2vm", qd=qd))

    def nvme_ratio(self, qd):
        m, x = self.nvme_pair(qd)
        return ratio(val(m, "iops"), val(x, "iops"))

    def nvme_context(self, qd):
        m, x = self.nvme_pair(qd)
        if m is None and x is None:
            return "not run"
        return "IOPS MetaRoCE %s, rxe %s; mean latency %s vs %s us (fio, every block verified)" % (
            cell(m, "iops", "%.0f"), cell(x, "iops", "%.0f"), cell(m, "lat_us"), cell(x, "lat_us"))

    def nvme(self):
        """NVMe over Fabrics between two VMs (tools/bench/nvme2vm.sh)."""
        R = self.recs
        rs = pick(R, group="nvme")
        if not rs:
            return
        self.h("## NVMe over Fabrics: fio 4 KiB random read, two VMs\n")
        self.h("nvmet-rdma exports a 32 MiB RAM disk (brd) from one VM; nvme-rdma on the other reads it "
               "with fio (libaio, O_DIRECT), random reads per queue depth over the blocks the fill wrote "
               "(the whole disk in full and short runs), each block at most once: all of them at queue "
               "depth 32, a quarter at queue depth 1 (ios gives the count). A sequential fill first "
               "writes every block with fio's crc32c verify header, and every block read is checked "
               "against it.\n")
        rows = []
        for qd in sorted({r["qd"] for r in rs}):
            m, x = self.nvme_pair(qd)
            rows.append([str(qd), cell(m, "iops", "%.0f"), cell(m, "lat_us"), cell(m, "p99_us"),
                         cell(x, "iops", "%.0f"), cell(x, "lat_us"), cell(x, "p99_us"),
                         rcell(self.nvme_ratio(qd))])
        self.h(md_table(["queue depth", "MetaRoCE IOPS", "mean us", "p99 us", "rxe IOPS", "mean us",
                         "p99 us", "MetaRoCE/rxe IOPS"], rows))
        self.h("")

    def loss(self):
        R = self.recs
        for where, title in (("veth", "netem on the veth v0/v1, both directions, 1 namespace"),
                             ("two-vm", "netem on both VMs' eth0 (two kernels)")):
            rs = pick(R, group="loss", where=where)
            if not rs:
                continue
            stacks = []
            for r in rs:
                if r["stack"] not in stacks:
                    stacks.append(r["stack"])
            losses = sorted({r["loss_pct"] for r in rs})
            self.h("## Loss: ib_write_bw 64 KiB, %s\n" % title)
            rows = []
            for lp in losses:
                row = ["%g%%" % lp]
                for s in stacks:
                    r = one(R, group="loss", where=where, stack=s, loss_pct=lp)
                    base = val(one(R, group="loss", where=where, stack=s, loss_pct=0), "mbps")
                    share = ratio(val(r, "mbps"), base)
                    row += [cell(r, "mbps"), "%.0f%%" % (100 * share) if share is not None else "n/a"]
                rows.append(row)
            head = ["loss"]
            for s in stacks:
                head += [STACK_NAMES.get(s, s) + " MiB/s", "share of lossless"]
            self.h(md_table(head, rows))
            self.h("")

    def scale(self):
        R = self.recs
        rs = [r for r in pick(R, group="scale") if r["stack"] in ("mroce-2ns", "rxe-1ns")]
        if not rs:
            return
        self.h("## Scale: RC QP pairs between two devices (one WRITE each, bytes checked)\n")
        rows = []
        for r in rs:
            n = r.get("qps") or r.get("requested")
            if r["status"] == "ok":
                k = self.kmem(r, "setup")
                rows.append([STACK_NAMES.get(r["stack"], r["stack"]), n, r.get("connected"), r.get("completed"),
                             "%.1f" % r["setup_s"], "%.2f" % r["traffic_s"],
                             "%.1f" % (k / (2.0 * n)) if k is not None else "-",
                             "%.1f" % (-r.get("mem_setup_MemFree_kb", 0) / (2.0 * n)), "ok"])
            else:
                rows.append([STACK_NAMES.get(r["stack"], r["stack"]), n, r.get("connected", "-"),
                             r.get("completed", "-"), "-", "-", "-", "-", "FAILED: " + r.get("error", "")])
        self.h(md_table(["stack", "QP pairs", "connected", "completed", "setup s", "traffic s",
                         "kernel kB per QP (Slab+Vmalloc+PageTables)", "MemFree drop kB per QP", "status"], rows))
        self.h("")
        self.h("A QP pair is two QPs (one on each device, both in this kernel): per-QP figures divide by 2N.\n")
        pe = pick(R, group="scale", stack="mroce-2ns-peers")
        if len(pe) == 2 and all(r["status"] == "ok" for r in pe):
            a, b = pe
            ka, kb = self.kmem(a, "setup"), self.kmem(b, "setup")
            if ka is not None and kb is not None and b["peers"] > 1:
                per = (kb - ka) / (2.0 * (b["peers"] - 1))
                self.h("Per connection: %d QP pairs over 1 peer address cost %d kB, over %d peer addresses "
                       "(%d connections at each end) %d kB: **%.1f kB per connection end**.\n" % (
                           a["qps"], ka, b["peers"], b["peers"], kb, per))
                ia, ib = self.kmem(a, "idle"), self.kmem(b, "idle")
                if ia is not None and ib is not None:
                    self.h("After the traffic, with every path idle past `win_idle_ms`: %d kB and %d kB, "
                           "**%.1f kB per connection end**.\n" % (ia, ib, (ib - ia) / (2.0 * (b["peers"] - 1))))
        elif pe:
            self.h("Per connection: " + "; ".join(cell(r, "peers") for r in pe) + "\n")

    @staticmethod
    def kmem(r, tag):
        ks = ["mem_%s_%s_kb" % (tag, k) for k in ("Slab", "VmallocUsed", "PageTables")]
        if not all(k in r for k in ks):
            return None
        return sum(r[k] for k in ks)

    def cpu(self):
        rs = pick(self.recs, group="cpu")
        if not rs:
            return
        self.h("## CPU time per GiB moved (whole guest, /proc/stat; perftest sleeps on events)\n")
        rows = []
        for r in rs:
            if r["status"] == "ok":
                rows.append([STACK_NAMES.get(r["stack"], r["stack"]), "%.3f" % (r["bytes"] / 2**30),
                             "%.2f" % r["cpu_s"], "%.2f" % r["user_s"], "%.2f" % r["sys_s"], "%.2f" % r["irq_s"],
                             cell(r, "cpu_s_per_gib", "%.2f")])
            else:
                rows.append([STACK_NAMES.get(r["stack"], r["stack"]), "-", "-", "-", "-", "-", cell(r, "x")])
        self.h(md_table(["stack", "GiB moved", "CPU s", "user", "system", "irq+softirq", "CPU s per GiB"], rows))
        base = {r["stack"]: val(r, "cpu_s_per_gib") for r in rs}
        self.h("\nMetaRoCE/rxe CPU per GiB: %s; MetaRoCE/TCP: %s.\n" % (
            rcell(ratio(base.get("mroce-2ns"), base.get("rxe-1ns"))),
            rcell(ratio(base.get("mroce-2ns"), base.get("tcp-2ns")))))

    IDLE = ("default_idle", "pv_native_safe_halt", "native_safe_halt", "acpi_idle", "cpu_idle",
            "do_idle", "mwait_idle", "intel_idle", "poll_idle", "arch_cpu_idle")

    @classmethod
    def parse_profile(cls, lines):
        """perf report --sort dso,sym lines -> [(pct, dso, sym)]."""
        out = []
        for line in lines:
            parts = line.split()
            if len(parts) < 4 or not parts[0].endswith("%"):
                continue
            try:
                pct = float(parts[0][:-1])
            except ValueError:
                continue
            dso = parts[1]
            sym = " ".join(parts[3:]) if parts[2] in ("[k]", "[.]") else " ".join(parts[2:])
            out.append((pct, dso, sym))
        return out

    PER_PACKET = [
        ("cpu_us", "CPU time (both vCPUs, us)"),
        ("net_rx_softirqs", "NET_RX softirqs"),
        ("acks_sent", "ACKs the receiver sent"),
        ("server_sent_pkts", "packets the receiver sent (rxe: ACKs)"),
        ("client_sent_pkts", "packets the sender sent (rxe)"),
        ("retransmits", "retransmissions"),
        ("rto_timeouts", "RTO timeouts"),
        ("tlp_probes", "tail loss probes"),
        ("hint_limited", "sends held back by the receiver's hint"),
        ("cwnd_reductions_loss", "cwnd cuts on loss"),
        ("cwnd_reductions_ecn", "cwnd cuts on ECN"),
        ("duplicates", "duplicates received"),
        ("ooo_arrivals", "out-of-order arrivals"),
        ("duplicate_request", "duplicate requests (rxe)"),
        ("out_of_seq_request", "out-of-sequence requests (rxe)"),
        ("completer_retry_err", "completer retries (rxe)"),
        ("doorbells", "doorbells"),
    ]

    def profile_sys(self):
        rs = pick(self.recs, group="profile_sys")
        if not rs:
            self.h("No counter profile in this run.\n")
            return
        ok = [r for r in rs if r["status"] == "ok"]
        for r in rs:
            if r["status"] != "ok":
                self.h("- %s: %s" % (STACK_NAMES.get(r["stack"], r["stack"]), cell(r, "x")))
        if not ok:
            self.h("")
            return
        self.h("ib_write_bw 64 KiB, 1 QP, %s s, no profiler attached; the guest's own accounting over the "
               "run (connection setup included): /proc/stat, /proc/softirqs, /proc/interrupts, "
               "/proc/net/softnet_stat and the RDMA devices' hw_counters (sender = client device, "
               "receiver = server device). Per data packet = divided by the data packets the receiver took in "
               "(MetaRoCE rx_data_packets, rxe rcvd_pkts).\n" % ok[0].get("wall_s", "?"))
        head = ["", ] + [STACK_NAMES.get(r["stack"], r["stack"]) for r in ok]
        rows = [["throughput MiB/s (completed messages / sample window)"] + [
            "%.2f" % r["mbps"] if isinstance(r.get("mbps"), (int, float)) else "-" for r in ok]]
        rows.append(["wall time s / busy CPU s"] + ["%s / %s" % (r["wall_s"], r["busy_cpu_s"]) for r in ok])
        for k, label in (("user", "user"), ("system", "system (kernel, kworkers)"), ("softirq", "softirq"),
                         ("irq", "hard irq"), ("idle", "idle"), ("iowait", "iowait"), ("steal", "steal")):
            if any(r["cpu_pct"].get(k) for r in ok):
                rows.append(["CPU %s %%" % label] + ["%.1f" % r["cpu_pct"].get(k, 0) for r in ok])
        for k in ("NET_RX", "NET_TX", "TIMER", "HRTIMER", "TASKLET", "SCHED", "RCU"):
            if any(r["softirqs_per_s"].get(k) for r in ok):
                rows.append(["%s softirqs/s" % k] + ["%.0f" % r["softirqs_per_s"].get(k, 0) for r in ok])
        rows.append(["interrupts/s"] + ["%.0f" % r["interrupts_per_s"] for r in ok])
        rows.append(["softnet drops / time squeezes"] + [
            "%d / %d" % (r["softnet"]["dropped"], r["softnet"]["time_squeeze"]) for r in ok])
        rows.append(["data packets received"] + [str(r.get("data_packets", "-")) for r in ok])
        for k, label in self.PER_PACKET:
            if any(k in r.get("per_data_packet", {}) for r in ok):
                rows.append(["per data packet: " + label] + [
                    str(r["per_data_packet"].get(k, "-")) for r in ok])
        self.h(md_table(head, rows))
        self.h("")
        for r in ok:
            line = self.prof_line(r["stack"])
            if line:
                self.h("- " + line + ".")
        w = self.why.get("bw_rxe")
        if w and len(ok) > 1:
            self.h("- Reading: " + w.split(". ")[0] + ".")
        self.h("")
        for r in ok:
            for side in ("client", "server"):
                moved = r.get(side) or {}
                if moved:
                    self.h("%s %s counters that moved: %s.\n" % (
                        STACK_NAMES.get(r["stack"], r["stack"]), "sender" if side == "client" else "receiver",
                        ", ".join("%s %d" % kv for kv in sorted(moved.items()))))

    def profile_calls(self):
        rs = pick(self.recs, group="profile_calls")
        if not rs:
            return
        self.h("### Function calls per data packet (bpftrace, a separate ib_write_bw 64 KiB run)\n")
        self.h("Every kernel function of the stack (kprobe:mroce_* or kprobe:rxe_*) counted over the run; "
               "per data packet = calls / data packets the receiver took in during the run. Probes slow "
               "the run down; read the counts, not its throughput.\n")
        for r in rs:
            name = STACK_NAMES.get(r["stack"], r["stack"])
            if r["status"] != "ok":
                self.h("- %s: %s\n" % (name, cell(r, "x")))
                continue
            n = r.get("data_packets") or 0
            self.h("%s: %s calls of %s functions for %s data packets: **%s calls per data packet**.\n" % (
                name, r.get("calls"), r.get("functions"), n,
                "%.1f" % (r["calls"] / float(n)) if n else "n/a"))
            rows = []
            for line in r.get("top", [])[:15]:
                p = line.split()
                if len(p) == 2 and p[0].isdigit():
                    rows.append([p[1], p[0], "%.2f" % (int(p[0]) / float(n)) if n else "-"])
            self.h(md_table(["function (most called first)", "calls", "per data packet"], rows))
            self.h("")

    def calls_per_packet(self, stack):
        r = one(self.recs, group="profile_calls", stack=stack)
        if r is None or r.get("status") != "ok" or not r.get("data_packets"):
            return None
        return r["calls"] / float(r["data_packets"])

    @staticmethod
    def perf_samples(v):
        """perf report's sample count: 412, "4K", "1.2M"."""
        if isinstance(v, (int, float)):
            return int(v)
        if not isinstance(v, str) or not v:
            return None
        mult = {"K": 1000, "M": 1000000, "G": 1000000000}.get(v[-1], 1)
        try:
            return int(float(v.rstrip("KMG")) * mult)
        except ValueError:
            return None

    def profile(self):
        self.h("## Profile: where the time goes\n")
        self.h("### Counters\n")
        self.profile_sys()
        self.profile_calls()
        rs = pick(self.recs, group="profile")
        if not rs:
            return
        self.h("### perf record -a -e cpu-clock in the guest, a second ib_write_bw 64 KiB run\n")
        self.h("Samples of both vCPUs over the whole run; symbols under 0.5% are left out. "
               "\"idle\" is the guest's idle loop: under TCG a vCPU that waits still costs the host.\n")
        for r in rs:
            name = STACK_NAMES.get(r["stack"], r["stack"])
            if r["status"] != "ok":
                self.h("%s: %s\n" % (name, cell(r, "x")))
                continue
            prof = self.parse_profile(r.get("top", []))
            named = [p for p in prof if not p[2].startswith("0x")]
            ns = self.perf_samples(r.get("perf_samples"))
            if ns is not None and ns < 200:
                self.h("%s: **too few samples to read**: perf recorded %d samples in the whole run "
                       "(TCG: no PMU, cpu-clock samples are lost); the counters above are the profile.\n" % (
                           name, ns))
                continue
            if len(named) < 3:
                self.h("%s: **profile not usable**: perf recorded %d symbol lines, %d of them resolved "
                       "(perf 6.1 in the 6.12 guest under TCG; see profile-%s.txt):\n" % (
                           name, len(prof), len(named), r["stack"]))
                self.h("```\n" + "\n".join(r.get("top", [])) + "\n```\n")
                continue
            comp = {}
            for pct, dso, sym in prof:
                key = "idle" if any(i in sym for i in self.IDLE) else dso
                comp[key] = comp.get(key, 0.0) + pct
            self.h("%s (%s MiB/s during the profile). Share of samples by component: %s.\n" % (
                name, r.get("mbps"), ", ".join("%s %.1f%%" % (k, v) for k, v in
                                                sorted(comp.items(), key=lambda kv: -kv[1]))))
            rows = [["%.2f%%" % pct, dso, sym] for pct, dso, sym in prof
                    if not any(i in sym for i in self.IDLE)][:15]
            self.h(md_table(["samples", "object", "symbol (busiest first, idle left out)"], rows))
            self.h("")

    def paths(self):
        R = self.recs
        self.h("## Multipath, planes and path outage\n")
        for r in pick(R, group="planes"):
            if r["status"] == "not_measured":
                self.h("- planes: **not measured**: %s" % r.get("error"))
            elif r["status"] == "failed":
                self.h("- planes, %s planes: FAILED: %s" % (r.get("planes"), r.get("error")))
            else:
                self.h("- planes, %s planes: %.1f MiB/s" % (r.get("planes"), r["mbps"]))
        mp = pick(R, group="multipath")
        for r in mp:
            if r["status"] == "not_measured":
                self.h("- multipath: **not measured**: %s" % r.get("error"))
        rows = []
        base = val(next((r for r in mp if r.get("links") == 1), None), "mbps")
        for r in mp:
            if r.get("links") is None:
                continue
            share = ratio(val(r, "mbps"), base)
            rows.append([r["links"], r.get("link_mbit", "-"), cell(r, "mbps"),
                         rcell(share), r.get("link_tx_bytes", "-"), r.get("paths_per_plane", "-")])
        if rows:
            self.h("\nMultipath over ECMP: ib_write_bw 64 KiB, 8 QPs, both hosts route to each other over K "
                   "veth links with the L4 hash, every link rate-limited (tbf); one connection sprays over "
                   "paths_per_plane UDP source ports.\n")
            self.h(md_table(["links", "Mbit/s per link", "MiB/s", "vs 1 link", "bytes sent per link (A)",
                             "paths_per_plane"], rows))
        for r in pick(R, group="outage"):
            what = self.outage_what(r)
            self.h("\n- outage of %s (netem loss 100%% both ways for %s s, ib_write_bw 64 KiB, 8 QPs, "
                   "MiB/s the server received per wall-clock second): %s" % (what, r.get("outage_s", "?"), self.outage_text(r)))
        self.h("")

    def incast(self):
        R = self.recs
        rs = pick(R, group="incast")
        if not rs:
            return
        self.h("## Incast: 4 senders into 1 receiver through a rate-limited, ECN-marking (RED) bottleneck\n")
        rows = []
        for r in rs:
            if r["status"] == "not_measured":
                self.h("Incast: not measured: %s\n" % r.get("error"))
                return
            mr = r["stack"].startswith("mroce")
            rows.append([STACK_NAMES.get(r["stack"], r["stack"]), r.get("bottleneck_mbit"),
                         r.get("per_sender_mbps"), r.get("agg_mbps"), r.get("jain"),
                         r.get("per_sender_wire_mbps", "-"), r.get("delivered_mbps", "-"),
                         r.get("window_s", "-"), r.get("red_marked"),
                         "%s / %s / %s" % (r.get("ecn_ce_rcvd"), r.get("cwnd_reductions_ecn", "-"),
                                           r.get("retransmits", "-")) if mr else "-",
                         "%s / %s" % (r.get("probe_median_us"), r.get("probe_p99_us")) if mr else "-",
                         "ok" if r["status"] == "ok" else "FAILED: " + str(r.get("error", ""))])
        self.h(md_table(["stack", "bottleneck Mbit/s", "goodput per sender MiB/s", "goodput sum MiB/s",
                         "Jain's index (goodput)", "wire rate per sender into the switch MiB/s",
                         "bottleneck output MiB/s", "window s", "RED marked",
                         "CE seen by receiver / senders' ECN cwnd cuts / retransmissions",
                         "probe QP 8 B send lat median/p99 us", "status"], rows))
        self.h("\nGoodput per sender: MetaRoCE from each perftest's completed messages over its sample window "
               "(wall clock), TCP from iperf3's bytes received. Wire rates: the switch's bridge ports' byte "
               "counters (Ethernet frames, retransmissions included), sampled every 0.5 s, over the window in "
               "which all 4 senders were sending. The bottleneck's capacity is %s Mbit/s = %.2f MiB/s." % (
                   rs[0].get("bottleneck_mbit"), (rs[0].get("bottleneck_mbit") or 0) * 1e6 / 8 / 1048576))
        idle = one(R, group="incast_probe")
        if idle is not None:
            self.h("\nProbe latency without load (same topology): %s." % (
                "median %s us, p99 %s us" % (idle.get("median_us"), idle.get("p99_us"))
                if idle.get("status") == "ok" else cell(idle, "x")))
        cc = one(R, group="cc")
        if cc is not None:
            self.h("\nCongestion control: not measured as such: %s. The MetaRoCE row above is the "
                   "baseline without it." % cc.get("error"))
        self.h("")

    def previous(self, path):
        """The targets of this run next to those of an earlier run: how far
        the figures move between runs of the same harness."""
        try:
            with open(path) as f:
                old = json.load(f)
        except (OSError, ValueError):
            return
        before = {t["target"]: t for t in old.get("targets", [])}
        m, host = old.get("meta", {}), old.get("meta", {}).get("host", {})
        self.h("### Run to run\n")
        self.h("The same targets in the previous committed run (%s, mode %s, %s s per case, %s, host "
               "load mean %s). Under TCG on a shared 2-CPU host the figures move between runs; a "
               "difference between the two columns smaller than the spread seen here means nothing.\n" % (
                   m.get("started", "?"), m.get("mode", "?"), m.get("dur_s", "?"),
                   m.get("tree_commit", "?"), host.get("loadavg1_mean", "?")))
        rows = [[r[0], r[2], before[r[0]]["ratio"] if r[0] in before else "n/a"]
                for r in self.targets_rows]
        self.h(md_table(["Target", "This run", "Previous run"], rows))
        self.h("")

    def failures_section(self):
        self.h("## Failed cases\n")
        if not self.failures:
            self.h("None.\n")
            return
        rows = []
        for r in self.failures:
            what = ", ".join("%s=%s" % (k, r[k]) for k in ("where", "op", "lib", "case", "transport", "size",
                                                             "qps", "qd", "loss_pct", "planes", "requested")
                             if r.get(k) is not None)
            rows.append([r["group"], STACK_NAMES.get(r.get("stack"), r.get("stack")), what,
                         str(r.get("error", "")).replace("|", "/")])
        self.h(md_table(["group", "stack", "case", "error"], rows))
        self.h("")


def attach_profiles(recs, pdirs):
    """Read each ok profile record's top-symbol file from the first of
    pdirs that has it (several runs may each have profiled)."""
    for r in pick(recs, group="profile", status="ok") + pick(recs, group="profile_calls", status="ok"):
        if "top" in r:
            continue
        for d in pdirs:
            path = os.path.join(d, r.get("file", ""))
            if os.path.isfile(path) and r.get("dir") in (None, d):
                with open(path) as f:
                    r["top"] = [line.rstrip() for line in f if line.strip()][:40]
                break
        else:
            r["status"] = "failed"
            r["error"] = "profile file %s not found in %s" % (r.get("file"), ", ".join(pdirs))


def plots(rep, pdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    R = rep.recs
    made = []
    os.makedirs(pdir, exist_ok=True)

    bws = [r for r in pick(R, group="bw", status="ok") if r.get("op") == "write" and r.get("qps") == 1]
    if bws:
        fig, ax = plt.subplots(figsize=(7, 4))
        for s in ("mroce-2ns", "mroce-1ns", "rxe-1ns"):
            pts = sorted((r["size"], r["mbps"]) for r in bws if r["stack"] == s)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=STACK_NAMES[s])
        tcp = val(one(R, group="bw", stack="tcp-2ns", op="tcp", qps=1), "mbps")
        if tcp:
            ax.axhline(tcp, linestyle="--", color="gray", label="TCP iperf3 (2 ns)")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("MiB/s")
        ax.set_title("ib_write_bw, 1 QP")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(pdir, "bw_write.png"))
        plt.close(fig)
        made.append("bw_write.png")

    for where in ("veth", "two-vm"):
        rs = pick(R, group="loss", where=where)
        if not rs:
            continue
        fig, ax = plt.subplots(figsize=(7, 4))
        for s in sorted({r["stack"] for r in rs}):
            base = val(one(R, group="loss", where=where, stack=s, loss_pct=0), "mbps")
            pts = []
            for r in sorted(pick(rs, stack=s), key=lambda r: r["loss_pct"]):
                v = val(r, "mbps")
                pts.append((r["loss_pct"], 100.0 * (v or 0) / base if base else 0))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=STACK_NAMES.get(s, s))
        ax.set_xlabel("netem loss, each direction (%)")
        ax.set_ylabel("% of lossless throughput")
        ax.set_title("ib_write_bw 64 KiB under loss (%s)" % where)
        ax.set_ylim(bottom=0)
        ax.legend()
        fig.tight_layout()
        name = "loss_%s.png" % where.replace("-", "")
        fig.savefig(os.path.join(pdir, name))
        plt.close(fig)
        made.append(name)

    lat = pick(R, group="lat", status="ok")
    if lat:
        fig, ax = plt.subplots(figsize=(7, 4))
        stacks = [s for s in ("mroce-2ns", "mroce-1ns", "rxe-1ns") if pick(lat, stack=s)]
        ops = ["send", "write", "read"]
        w = 0.8 / max(1, len(stacks))
        for i, s in enumerate(stacks):
            ys = [val(one(lat, stack=s, op=o), "median_us") or 0 for o in ops]
            ax.bar([x + i * w for x in range(len(ops))], ys, w, label=STACK_NAMES[s])
        ax.set_xticks([x + w * (len(stacks) - 1) / 2 for x in range(len(ops))])
        ax.set_xticklabels(["ib_%s_lat" % o for o in ops])
        ax.set_ylabel("median latency (us)")
        ax.set_title("8 B latency")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(pdir, "latency.png"))
        plt.close(fig)
        made.append("latency.png")

    outs = [(r, rep.outage_stats(r)) for r in pick(R, group="outage")]
    outs = [(r, st) for r, st in outs if st]
    if outs:
        fig, ax = plt.subplots(figsize=(7, 4))
        for r, st in outs:
            lbl = "1 of 2 ECMP links cut" if r["stack"] == "mroce-ecmp" else "only path cut"
            line, = ax.plot([p[0] for p in st["points"]], [p[1] for p in st["points"]], marker=".", label=lbl)
            ax.axvspan(st["down"], st["up"], color=line.get_color(), alpha=0.15)
        ax.set_xlabel("time since the traffic started (s, end of each 1 s bin)")
        ax.set_ylabel("MiB/s received by the server")
        ax.set_title("ib_write_bw 64 KiB, 8 QPs, across an outage (shaded)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(pdir, "outage.png"))
        plt.close(fig)
        made.append("outage.png")

    sc = [r for r in pick(R, group="scale", status="ok") if r["stack"] in ("mroce-2ns", "rxe-1ns")]
    if sc:
        fig, ax = plt.subplots(figsize=(7, 4))
        for s in ("mroce-2ns", "rxe-1ns"):
            pts = sorted((r["qps"], r["setup_s"]) for r in sc if r["stack"] == s)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=STACK_NAMES[s])
        ax.set_xscale("log", base=2)
        ax.set_xlabel("QP pairs")
        ax.set_ylabel("setup time (s)")
        ax.set_title("RC QP pairs set up and carrying one WRITE each")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(pdir, "scale.png"))
        plt.close(fig)
        made.append("scale.png")
    return made


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-json", required=True)
    ap.add_argument("--out-md", required=True)
    ap.add_argument("--plots", required=True)
    ap.add_argument("--profiles", action="append", default=[])
    ap.add_argument("--note", default="")
    ap.add_argument("--previous", default="",
                    help="results.json of an earlier run, to show how the targets moved")
    ap.add_argument("records", nargs="+")
    a = ap.parse_args()

    recs = load(a.records)
    attach_profiles(recs, a.profiles)
    rep = Report(recs, a.profiles, a.note)
    meta = one(recs, group="meta") or {}
    md_dir = os.path.dirname(os.path.abspath(a.out_md))
    plot_rel = os.path.relpath(os.path.abspath(a.plots), md_dir)

    rep.h("# MetaRoCE benchmarks\n")
    rep.h("Generated by `make bench` (tools/bench/) on %s, kernel %s, %s vCPUs, qemu TCG, perftest %s, "
          "mode %s. Every figure sits next to its baseline from the same run; only ratios carry "
          "over to real hardware. Raw data: `%s`.\n" % (
              meta.get("started", "?"), meta.get("kernel", "?"), meta.get("cpus", "?"),
              meta.get("perftest", "?"), meta.get("mode", "?"),
              os.path.relpath(os.path.abspath(a.out_json), md_dir)))
    host = one(recs, group="host")
    if host is not None:
        meta = dict(meta, host=host)
        hl = ("Host load while this ran (from the host, /proc/loadavg 1-minute average, %d CPUs): %.2f at "
                "the start, %.2f at the end, mean %.2f and max %.2f over %d samples every 30 s; the benchmark's "
                "own qemu accounts for up to 2 of it (its 2 vCPUs)." % (
                    host["host_cpus"], host["loadavg1_start"], host["loadavg1_end"], host["loadavg1_mean"],
                    host["loadavg1_max"], host["load_samples"]))
        if host["loadavg1_mean"] > host["host_cpus"]:
            hl += (" A load above the CPU count means the vCPUs waited for the host CPUs: absolute figures "
                     "are lower and latencies higher than on an idle host, ratios less affected.")
        a.note = (hl + " " + a.note).strip()
    else:
        a.note = ("Host load not recorded (records without a host record). " + a.note).strip()
    if a.note:
        rep.h("> " + a.note + "\n")
    rep.h("Stacks: MetaRoCE between two network namespaces over a veth pair (2 ns); MetaRoCE and rxe "
          "with both devices in one namespace on the two ends of one veth pair (1 ns; policy routing "
          "sends the traffic over the veth, rxe works only this way in 6.12); TCP (iperf3) over the "
          "same links.\n")
    rep.targets()
    rep.previous(a.previous)
    rep.latency()
    rep.bandwidth()
    rep.small()
    rep.crc()
    rep.steer()
    rep.batch()
    rep.cack()
    rep.eco()
    rep.loss()
    rep.nvme()
    rep.scale()
    rep.cpu()
    rep.paths()
    rep.incast()
    rep.profile()
    rep.failures_section()
    made = plots(rep, a.plots)
    rep.h("## Plots\n")
    for m in made:
        rep.h("![%s](%s)\n" % (m, os.path.join(plot_rel, m)))

    results = {"meta": meta, "targets": [dict(zip(["target", "measured_as", "ratio", "want", "gap", "met",
                                                   "context", "why"], t))
                                         for t in rep.targets_rows],
               "plots": made, "records": recs}
    os.makedirs(os.path.dirname(os.path.abspath(a.out_json)), exist_ok=True)
    with open(a.out_json, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True, allow_nan=False)
        f.write("\n")
    with open(a.out_md, "w") as f:
        f.write("\n".join(rep.md).rstrip() + "\n")


if __name__ == "__main__":
    main()
