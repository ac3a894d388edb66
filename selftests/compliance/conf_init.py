# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Conformance checks of the target as the initiator of a connection, and
as a sender on paths whose every answer we choose (spec 6.3.1, 6.3.3,
6.3.4, 7.1, 7.3.1, 7.6, 8.4, 9.2.3, 12.2): a target QP towards a further
address of ours, with which the target has no connection, makes it send
us a CONNECT, which we answer, or not, by hand.  Also packets in the
pre-handshake form (6.3.3, 6.3.4), and the encoding of the rate hint
(12.4.3).  A mixin of conformance.Suite."""
import random
import struct
import time
from fractions import Fraction

import mrpkt as m
from conf_req import WC_RETRY_EXC_ERR
from conf_stream import WC_FLUSH
from peer import Peer
from verdict import need, record

QPS_ERR = 6
WC_LOC_QP_OP_ERR = 2


def is_seq(r):
    return 0x01 <= r["type"] <= 0x1F


def until(cond, timeout):
    """Wait until cond() holds or timeout seconds passed; cond()."""
    end = time.monotonic() + timeout
    while not cond() and time.monotonic() < end:
        time.sleep(0.01)
    return cond()


def wr_status(wcs):
    return [(w["wr_id"], w["status"]) for w in wcs]


def failed_qp(sent, recv, nrecv):
    """The completions of a QP whose connection failed with two requests
    outstanding (MRC-CONN-050): the oldest RETRY_EXC_ERR, the other and
    every receive flushed."""
    return wr_status(sent) == [(1, WC_RETRY_EXC_ERR), (2, WC_FLUSH)] and \
        [w["status"] for w in recv] == [WC_FLUSH] * nrecv


class InitiatorTests:
    def init_peer(self, i, **cx):
        """Our peer at further address i (None if there is none), with the
        CX fields cx for its CONNECT_ACK.  It acknowledges nothing by
        itself and leaves the target's CONNECTs to the test."""
        if len(self.extra) <= i:
            print("# no further local address %d: target-initiated checks skipped" % i)
            return None
        pp = self.peers.get(i)
        if pp is None:
            pp = self.peers[i] = Peer(self.extra[i], self.target)
        pp.auto_ack = False
        pp.cx_kw = cx
        pp.hook = lambda r: r["type"] == m.T_CONNECT
        return pp

    @staticmethod
    def connect_of(pp, timeout=3.0):
        return pp.recv(lambda r: r["type"] == m.T_CONNECT, timeout)

    @staticmethod
    def reset_to(pp, c, reason):
        """A stateless RESET answering CONNECT c (MRC-CONN-045)."""
        pp.send_raw(m.packet(m.T_RESET, m.rsx(reason, pp.epoch), dcid=c["scid"], scid=0,
                             token=c["cx_token"]), sport=c["sport"])

    def check_connect(self, c):
        """A CONNECT of the target (MRC-CONN-010, MRC-CONN-003)."""
        self.check_envelope(c)
        acc = self.p.accept
        base = (c["dcid"], c["token"], c["path_id"], c["psn"], c["plw"], c["flags"],
                c["payload_len"], c["hdr_len"])
        first = c["addrs"][0] if c["addrs"] else b""
        record("MRC-CONN-010",
               base == (0, 0, 0, 0, 0, 0, 0, 96 + 16 * c["num_addrs"]) and
               first == m.addr16(self.target) and c["cx_token"] != 0 and
               (c["epoch"], c["guid"]) == (acc["epoch"], acc["guid"]) and
               c["vmin"] <= 1 <= c["vmax"] and c["max_seg_shift"] <= 4 and
               6 <= c["seg_win_shift"] <= 16 and 64 <= c["rx_msg_slots"] <= 1 << 20,
               "CONNECT (DCID, Token, Path ID, PSN, PLW, flags, payload, HdrLen) %s, first "
               "address %s, CX token %#x, epoch and GUID %s those of the device's "
               "CONNECT_ACK, versions %d-%d, MaxSh %d, Seg Win Shift %d, slots %d" %
               (base, first.hex(), c["cx_token"],
                "=" if (c["epoch"], c["guid"]) == (acc["epoch"], acc["guid"]) else "!=",
                c["vmin"], c["vmax"], c["max_seg_shift"], c["seg_win_shift"],
                c["rx_msg_slots"]))
        record("MRC-CONN-003", c["scid"] not in (0, 0xFFFFFFFF, self.p.peer_cid),
               "CONNECT SCID %#x (the device's other connection: %#x)" %
               (c["scid"], self.p.peer_cid))

    def check_after_handshake(self, pp, c, pkts, npaths):
        """Every packet of the target on the connection it opened with
        CONNECT c, after our CONNECT_ACK (MRC-CONN-020, MRC-CONN-006,
        MRC-PATH-003, MRC-PATH-005, MRC-PATH-010, MRC-PATH-025)."""
        bad = [(hex(r["type"]), hex(r["dcid"]), hex(r["scid"]), hex(r["token"]))
               for r in pkts if (r["dcid"], r["scid"], r["token"]) !=
               (pp.cid, c["scid"], pp.token)]
        record("MRC-CONN-020 MRC-CONN-006 MRC-CONN-004", pkts and not bad,
               "%d of %d packets after the handshake not (DCID, SCID, Token) (%#x, %#x, "
               "%#x): %s" % (len(bad), len(pkts), pp.cid, c["scid"], pp.token, bad[:3]))
        seqs = [r for r in pkts if is_seq(r)]
        ids = sorted({r["path_id"] for r in pkts if is_seq(r) or r["type"] == m.T_PROBE})
        ports = {}
        for r in pkts:
            if r["type"] == m.T_PROBE or is_seq(r):
                ports.setdefault(r["path_id"], r["sport"])
        lo, hi = self.tunable("sport_min") or 49152, self.tunable("sport_max") or 65535
        record("MRC-PATH-005", len(set(ports.values())) == len(ports) and
               all(lo <= x <= hi for x in ports.values()),
               "first UDP source ports of the paths %s (range %d-%d)" % (ports, lo, hi))
        record("MRC-PATH-003", ids == list(range(npaths)),
               "Path IDs %s, expected 0 to %d" % (ids, npaths - 1))
        runs, errs = {}, []
        for r in seqs:
            runs.setdefault(r["path_id"], []).append(r["psn"])
        for pid, psns in sorted(runs.items()):
            rel = sorted(m.diff(x, psns[0]) for x in psns)
            if rel != list(range(rel[0], rel[0] + len(rel))):
                errs.append("path %d PSNs %s" % (pid, rel))
        self.first_psns.update({(c["scid"], pid): psns[0] for pid, psns in runs.items()})
        firsts = list(self.first_psns.values())
        record("MRC-PATH-010", not errs and len(set(firsts)) == len(firsts),
               "PSNs relative to each path's first: %s; first PSNs so far %s" %
               (errs[:2], [hex(x) for x in firsts]))
        # MRC-PATH-025: a PROBE carries its path's next PSN without taking
        # it, and leaves with the path's entropy (a new one only for the
        # MTU probes of PROBING).  Judged where no sequenced packet of the
        # path left within 10 ms of it: no question of order.
        judged, bad = 0, []
        for pr in (r for r in pkts if r["type"] == m.T_PROBE):
            on = [r for r in seqs if r["path_id"] == pr["path_id"]]
            before = [r for r in on if r["kt"] < pr["kt"]]
            after = [r for r in on if r["kt"] > pr["kt"]]
            if not before or before[-1]["kt"] > pr["kt"] - 0.01 or \
                    (after and after[0]["kt"] < pr["kt"] + 0.01):
                continue
            judged += 1
            want = (before[-1]["psn"] + 1) & 0xFFFFFFFF
            if pr["psn"] != want or (after and after[0]["psn"] != want) or \
                    (not pr["raw"][36] & 0x80 and pr["sport"] != before[-1]["sport"]):
                bad.append((pr["path_id"], hex(pr["psn"]), hex(want),
                            after and hex(after[0]["psn"]), pr["sport"], before[-1]["sport"]))
        record("MRC-PATH-025", judged and not bad,
               "%d PROBEs judged; (path, PSN, next PSN, next packet's PSN, UDP source port, "
               "the path's) of the wrong ones: %s" % (judged, bad[:3]))

    def failure_of(self, q, timeout):
        """Two 100-byte WRITEs (wr_id 1, 2) posted on q, then its
        completions once the first comes (or timeout): (send, receive,
        time.time() of the first, QP state)."""
        for wr in (1, 2):
            self.a("post_send", qpn=q["qpn"], opcode="write", len=100, rkey=0x4400, va=0,
                   wr_id=wr)
        end = time.monotonic() + timeout
        sent, recv = [], []
        while not sent and time.monotonic() < end:
            w = self.a("poll", qpn=q["qpn"], wait=0.05)["wcs"]
            sent += [x for x in w if x["cq"] == "cq"]
            recv += [x for x in w if x["cq"] == "rcq"]
        at = time.time()
        w = self.a("poll", qpn=q["qpn"], wait=0.5)["wcs"]
        w += self.a("poll", qpn=q["qpn"], wait=0.2)["wcs"]
        sent += [x for x in w if x["cq"] == "cq"]
        recv += [x for x in w if x["cq"] == "rcq"]
        return sent, recv, at, self.a("state", qpn=q["qpn"])["state"]

    # The target's CONNECT unanswered ----------------------------------------
    def t_init_fail(self):
        """A CONNECT nobody answers (MRC-CONN-012): resent unchanged after
        rto_initial_us, then each time after twice the previous wait;
        after connect_retries resends the connection fails, and with it
        the requests that wait for it (the oldest RETRY_EXC_ERR, the rest
        and the receives flushed, the QP in ERROR: MRC-CONN-050)."""
        pp = self.init_peer(0)
        if not pp:
            return
        rto0 = (self.tunable("rto_initial_us") or 5000) / 1e6
        n0 = len(pp.seen)
        with self.tuned(connect_retries=3) as ok:
            n = 3 if ok else self.tunable("connect_retries") or 6
            waits = [rto0 * 2 ** k for k in range(n + 1)]
            q = self.new_qp(peer_ip=pp.local, timeout=18)
            w, rw, failed_at, state = self.failure_of(q, 1.5 * sum(waits) + 2)
        pp.drain(0.3)
        cons = [r for r in pp.seen[n0:] if r["type"] == m.T_CONNECT]
        need(cons, "no CONNECT towards an address the target had no connection with")
        self.check_connect(cons[0])
        gaps = [b["kt"] - a["kt"] for a, b in zip(cons, cons[1:])]
        print("# CONNECTs %s s apart, handshake failed %.2f s after the first" %
              ([round(g, 3) for g in gaps], failed_at - cons[0]["kt"]))
        record("MRC-CONN-012",
               len(cons) == n + 1 and len({r["raw"] for r in cons}) == 1 and
               all(0.9 * x <= g <= 1.6 * x + 0.1 for g, x in zip(gaps, waits)),
               "%d CONNECTs for %d resends, %s, %s s apart; expected %s" %
               (len(cons), n, "identical" if len({r["raw"] for r in cons}) == 1 else "not identical",
                [round(g, 3) for g in gaps], [round(x, 3) for x in waits[:n]]))
        took = failed_at - cons[0]["kt"]
        record("MRC-CONN-012 MRC-CONN-052",
               wr_status(w)[:1] == [(1, WC_RETRY_EXC_ERR)] and took >= 0.9 * sum(waits) and
               state == QPS_ERR,
               "unanswered handshake: completions %s %.2f s after the first CONNECT "
               "(its last wait ends at %.2f s), QP state %d" %
               (wr_status(w), took, sum(waits), state))
        record("MRC-CONN-050", failed_qp(w, rw, 8),
               "failed handshake, 2 WRITEs and 8 receives posted: completions %s, "
               "receives %s" % (wr_status(w), [x["status"] for x in rw]))
        self.a("destroy", qpn=q["qpn"])

    def t_init_connect_required(self):
        """The target's CONNECT answered by RESET CONNECT_REQUIRED every
        time (C8, MRC-CONN-022): the target resends it at once, at most
        once per rto_initial_us (no RESET/CONNECT ping-pong), and the
        RESETs never fail the handshake: it fails when the timer's
        schedule of MRC-CONN-012 ends, as if they had not come."""
        pp = self.init_peer(0)
        if not pp:
            return
        n0 = len(pp.seen)
        pp.hook = lambda r: r["type"] == m.T_CONNECT and (
            not r.get("cx_token") or self.reset_to(pp, r, 2) or True)
        try:
            # rto_initial_us 100 ms, not less: the bound of 2 x (n + 1)
            # CONNECTs holds while a RESET comes back within it; on a
            # loaded emulated host the round trip to us took over 20 ms.
            with self.tuned(connect_retries=3, rto_initial_us=100000) as ok:
                rto0 = (self.tunable("rto_initial_us") or 5000) / 1e6
                n = 3 if ok else self.tunable("connect_retries") or 6
                waits = [rto0 * 2 ** k for k in range(n + 1)]
                q = self.new_qp(peer_ip=pp.local, timeout=18)
                w, rw, failed_at, state = self.failure_of(q, 1.5 * sum(waits) + 2)
        finally:
            pp.hook = lambda r: r["type"] == m.T_CONNECT
        pp.drain(0.3)
        cons = [r for r in pp.seen[n0:] if r["type"] == m.T_CONNECT]
        need(cons, "no CONNECT towards an address the target had no connection with")
        took = failed_at - cons[0]["kt"]
        print("# CONNECTs at %s s, each answered by RESET CONNECT_REQUIRED; handshake "
              "failed %.2f s after the first" %
              ([round(r["kt"] - cons[0]["kt"], 3) for r in cons], took))
        record("MRC-CONN-022",
               n + 2 <= len(cons) <= 2 * (n + 1) and took >= 0.9 * sum(waits) and
               wr_status(w)[:1] == [(1, WC_RETRY_EXC_ERR)] and state == QPS_ERR,
               "%d CONNECTs (%d on the timer, at most one at once per RESET and "
               "rto_initial_us: %d to %d expected); failed %.2f s after the first, the "
               "timer's schedule ends at %.2f s; completions %s, QP state %d" %
               (len(cons), n + 1, n + 2, 2 * (n + 1), took, sum(waits), wr_status(w),
                state))
        self.a("destroy", qpn=q["qpn"])

    # The target's connection, with our CONNECT_ACK --------------------------
    def t_init_connect(self):
        """The handshake the target starts (spec 6.3.1, 6.3.4), then its
        first windows (12.2) and probe timeout (9.2.3) on the two paths we
        allow it, acknowledged only when we say so.  Slower timers
        (rto_initial_us, rto_min_us 1 s) leave time for our answers."""
        pp = self.init_peer(0, max_rx_paths=2, maxsh=1)
        if not pp:
            return
        with self.tuned(rto_initial_us=1000000, rto_min_us=1000000,
                        pto_min_us=100000) as slow:
            if not slow:
                print("# rto_initial_us, rto_min_us, pto_min_us cannot be set: initiator "
                      "checks skipped")
                return
            self.init_connect(pp)

    def init_connect(self, pp):
        init = self.tunable("init_cwnd_pkts") or 4
        npaths = min(self.tunable("paths_per_plane") or 4, 2)
        q = self.new_qp(peer_ip=pp.local, timeout=18)
        c = self.connect_of(pp)
        need(c, "no CONNECT towards an address the target had no connection with")
        self.check_connect(c)
        # RESET CONNECT_REQUIRED: the CONNECT again at once, but not twice
        # within rto_initial_us (1 s), and the connection lives on.
        self.reset_to(pp, c, m.RST_CONNECT_REQUIRED)
        t1 = time.time()
        c2 = self.connect_of(pp, 0.9)
        self.reset_to(pp, c, m.RST_CONNECT_REQUIRED)
        t2 = time.time()
        c3 = self.connect_of(pp, 0.5)
        record("MRC-CONN-022",
               c2 is not None and c2["raw"] == c["raw"] and c2["kt"] - c["kt"] < 0.9 and
               c3 is None,
               "RESET CONNECT_REQUIRED %.3f s after the CONNECT: %s (the handshake timer "
               "resends after 1 s); a second RESET after %.3f s: %s" %
               (t1 - c["kt"], "no CONNECT" if c2 is None else
                "%s CONNECT %.3f s after the first" %
                ("the same" if c2["raw"] == c["raw"] else "another", c2["kt"] - c["kt"]),
                t2 - c["kt"], "CONNECT again" if c3 else "no CONNECT within 0.5 s"))
        n0 = len(pp.seen)
        pp.answer_connect(c)
        pr = pp.recv(lambda r: r["type"] == m.T_PROBE, 2.0)
        record("MRC-CONN-013",
               pr is not None and (pr["path_id"], pr["dcid"], pr["token"]) ==
               (0, pp.cid, pp.token),
               "after our CONNECT_ACK, no request posted: %s" %
               ("no PROBE" if pr is None else "PROBE on path %d, DCID %#x, Token %#x" %
                (pr["path_id"], pr["dcid"], pr["token"])))
        need(pr, "no PROBE after the handshake")
        record("MRC-CONN-011", pr["path_id"] != 0 or pr["sport"] == c["sport"],
               "path 0 uses UDP source port %d, its CONNECT went from %d" %
               (pr["sport"], c["sport"]))
        pp.send_raw(pp.probe_reply(pr), sport=pr["sport"])
        lat = time.time() - pr["kt"]        # the RTT sample it takes
        # The CONNECT_ACK again: ignored; one with another SCID: dropped.
        names = ("drop_bad_header", "drop_bad_token")
        for what, scid, want in (("the same CONNECT_ACK again", None, 0),
                                 ("a CONNECT_ACK with another SCID", pp.cid ^ 0x00FF00FF, 1)):
            pp.drain(0.2)
            c0 = self.counters(*names)
            pp.send_raw(pp.connect_pkt(m.T_CONNECT_ACK, scid=scid), sport=c["sport"])
            got = [hex(r["type"]) for r in pp.drain(0.5) if r["type"] != m.T_PROBE]
            c1 = self.counters(*names)
            d = [c1[k] - c0[k] for k in names]
            record("MRC-CONN-014", d == [want, 0] and not got,
                   "%s: drop_bad_header +%d, drop_bad_token +%d, answered with %s" %
                   (what, d[0], d[1], got))

        # Nothing acknowledged: init_cwnd_pkts packets on each path.
        n1 = len(pp.seen)
        self.a("post_send", qpn=q["qpn"], opcode="write", len=32768, rkey=0x4400,
               va=0x10000, wr_id=1)

        def data(since, pid=None, new=False):
            return [r for r in pp.seen[since:] if is_seq(r) and pid in (None, r["path_id"]) and
                    not (new and r["flags"] & m.F_RETX)]
        until(lambda: len(data(n1)) >= init * npaths, 2.0)
        time.sleep(0.3)
        first = data(n1)
        per = [len(data(n1, pid)) for pid in range(npaths)]
        fresh = [len(data(n1, pid, True)) for pid in range(npaths)]
        # A path's first window is init_cwnd_pkts sequenced packets.  On a
        # slow host another path's probe timer may fire first, and its tail
        # loss probe (RETX, spec 9.2.3) may take one of this path's slots.
        record("MRC-CC-004", per == [init] * npaths and
               all(per[p] - fresh[p] <= 1 for p in range(npaths)),
               "32 KiB WRITE, nothing acknowledged: sequenced packets per path %s, of them "
               "new %s (the rest tail loss probes), init_cwnd_pkts %d" % (per, fresh, init))
        record("MRC-CC-002", per == [init] * npaths and len(first) == init * npaths,
               "nothing acknowledged, windows of %d full packets: sequenced packets per "
               "path %s, Path IDs %s" % (init, per, sorted({r["path_id"] for r in first})))
        need(per[0], "no packet on path 0")
        # Slow start: an ACK of path 0's window doubles it.
        n2 = len(pp.seen)
        last0 = data(n1, 0)[-1]
        pp.send_raw(pp.ack_pkt(m.T_ACK, 0), sport=last0["sport"])
        r2 = time.time() - last0["kt"]
        until(lambda: len(data(n2, 0, True)) >= 2 * init, 1.0)
        time.sleep(0.1)
        grown = [len(data(n2, pid, True)) for pid in range(npaths)]
        record("MRC-CC-005", grown == [2 * init] + [0] * (npaths - 1),
               "an ACK of path 0's %d packets: new packets per path %s, expected %s" %
               (init, grown, [2 * init] + [0] * (npaths - 1)))
        # PTO = max(2 srtt + our Max ACK Delay (10 us), pto_min_us), srtt
        # from the two samples path 0 had: our PROBE_REPLY, our ACK
        # (MRC-LOSS-004); pto_min_us is 0.1 s here.
        def probe0():
            return next((i for i in range(n2, len(pp.seen)) if pp.seen[i]["type"] == m.T_PROBE
                         and pp.seen[i]["path_id"] == 0), None)
        until(lambda: probe0() is not None, 1.5)
        i = probe0()
        sent0 = [r for r in pp.seen[n2:i] if is_seq(r) and r["path_id"] == 0] if i else []
        if sent0:
            pto = max(2 * (7 * lat + r2) / 8, 0.1)
            d = pp.seen[i]["kt"] - sent0[-1]["kt"]
            note = ("PROBE %.3f s after path 0's last packet; PTO from its samples %.3f s "
                    "and %.3f s: %.3f s" % (d, lat, r2, pto))
            print("# " + note)
            record("MRC-LOSS-004", 0.75 * pto - 0.01 <= d <= 1.25 * pto + 0.05, note)
        else:
            record("MRC-LOSS-004", False, "no PROBE of path 0 within 1.5 s of its window")
        # All acknowledged from now on: the WRITE completes.
        pp.auto_ack = True
        for pid in range(npaths):
            if pp.rxs.get(pid):
                pp.send_raw(pp.ack_pkt(m.T_ACK, pid), sport=data(n1, pid)[-1]["sport"])
        offs = set(range(0, 32768, 512))
        until(lambda: offs <= {r["offset"] for r in data(n1)}, 5.0)
        sent = data(n1)
        self.sr_to(q, sent[-1], 0, peer=pp)
        w = self.swcs(q, 2.0)
        record("MRC-CONN-013", wr_status(w) == [(1, 0)] and
               all(r["payload_len"] <= 512 and r["segshift"] <= 1 for r in sent),
               "WRITE over the connection: completions %s, segments %s (our Max Seg Shift: "
               "512 bytes)" % (wr_status(w), sorted({(r["payload_len"], r["segshift"])
                                                     for r in sent})))
        self.check_after_handshake(pp, c, pp.seen[n0:], npaths)

    def t_init_simultaneous(self):
        """A QP entering RTR makes the target connect (MRC-CONN-031).  A
        WRITE posted at once is sent, if before the handshake completes,
        only in the pre-handshake form on path 0 (MRC-CONN-018).  We open
        at the same time: our CONNECT crosses the target's, and the two
        handshakes make one connection (MRC-CONN-025).  Our CX lacks the
        ATOMIC capability: an atomic posted then fails locally with
        LOC_QP_OP_ERR and sends nothing (MRC-PLC-028)."""
        pp = self.init_peer(2, caps=m.CAP_HINT)
        if not pp:
            return
        n_pre = len(pp.seen)
        q = self.new_qp(peer_ip=pp.local, timeout=18)
        c = self.connect_of(pp)
        record("MRC-CONN-031", c is not None,
               "no CONNECT after a QP towards a new peer entered RTR")
        need(c, "no CONNECT towards an address the target had no connection with")
        self.a("post_send", qpn=q["qpn"], opcode="write", len=64, rkey=0x3300, va=0, wr_id=9)
        time.sleep(0.3)
        n0 = len(pp.seen)
        ci = next(i for i in range(n_pre, n0) if pp.seen[i]["type"] == m.T_CONNECT)
        early = [r for r in pp.seen[n_pre:ci] if is_seq(r)]
        bad = [(r["path_id"], r["dcid"], r["token"]) for r in pp.seen[ci:n0]
               if is_seq(r) and (r["path_id"], r["dcid"], r["token"]) != (0, 0, c["cx_token"])]
        record("MRC-CONN-018", not early and not bad,
               "before our CONNECT_ACK: %d sequenced packets before the CONNECT; after it, "
               "not (path 0, DCID 0, the initiator's token): %s" % (len(early), bad))
        pp.hook = None
        pp.auto_ack = True      # paths and probes answered from now on
        pp.send_raw(pp.connect_pkt())           # our own CONNECT
        a = pp.recv(lambda r: r["type"] in (m.T_CONNECT_ACK, m.T_RESET) and
                    r["dcid"] == pp.cid, 2.0)
        pp.answer_connect(c)                    # and the answer to theirs
        pk = self.stream_pkts(q, (m.T_WRITE,), lambda o: len(o) >= 1, peer=pp)
        later = [r for r in pp.seen[n0:] if r["type"] in (m.T_CONNECT, m.T_RESET)]
        record("MRC-CONN-025",
               a is not None and a["type"] == m.T_CONNECT_ACK and a["scid"] == c["scid"] and
               a["cx_token"] == c["cx_token"] and pk and
               (pk[0]["dcid"], pk[0]["scid"], pk[0]["token"]) == (pp.cid, c["scid"], pp.token) and
               not [r for r in later if r["type"] == m.T_RESET],
               "crossing CONNECTs: answer to ours %s; WRITE (DCID, SCID, Token) %s, expected "
               "%s; RESETs %d" %
               (a and (hex(a["type"]), hex(a["scid"])),
                pk and tuple(hex(x) for x in (pk[0]["dcid"], pk[0]["scid"], pk[0]["token"])),
                tuple(hex(x) for x in (pp.cid, c["scid"], pp.token)),
                len([r for r in later if r["type"] == m.T_RESET])))
        need(pk, "no WRITE after the handshake")
        self.sr_to(q, pk[-1], 0, peer=pp)
        w = self.swcs(q, 2.0)
        need(wr_status(w) == [(9, 0)], "WRITE completions %s" % w)
        n0 = len(pp.seen)
        self.a("post_send", qpn=q["qpn"], opcode="fetch_add", len=8, rkey=0x5500,
               va=0x8000, wr_id=7, compare_add=1)
        w = self.swcs(q, 2.0)
        time.sleep(0.3)
        atomics = [r for r in pp.seen[n0:] if r["type"] in (m.T_ATOMIC_CS, m.T_ATOMIC_FA)]
        record("MRC-PLC-028", wr_status(w) == [(7, WC_LOC_QP_OP_ERR)] and not atomics,
               "atomic towards a peer without ATOMIC: completions %s, %d ATOMIC packets "
               "sent" % (wr_status(w), len(atomics)))
        self.a("destroy", qpn=q["qpn"])

    def windowed(self, pp, q, ptype, start, length, seg=1024, win=64):
        """Run start() with the first two copies of segment 0 of q's next
        message of type ptype to pp lost, then take the message's packets
        as they come.  Returns them, and whether nothing from segment win
        on arrived before the third copy of segment 0 (MRC-PLC-003), with
        a note."""
        lost = []

        def lose(r):
            if len(lost) < 2 and r["type"] == ptype and r.get("sqpn") == q["qpn"] and \
                    r["offset"] == 0:
                lost.append(r)
                return True
            return False
        pp.lose = lose
        n0 = len(pp.seen)
        start()
        pk = self.stream_pkts(q, (ptype,), lambda o: {r["offset"] for r in o} >=
                              set(range(0, length, seg)), timeout=10.0 * self.slow,
                              peer=pp)
        pp.lose = None
        order = [r["offset"] for r in pp.seen[n0:] if r["type"] == ptype and
                 r.get("sqpn") == q["qpn"]]
        zeros = [i for i, o in enumerate(order) if o == 0]
        beyond = [i for i, o in enumerate(order) if o >= win * seg]
        ok = len(zeros) >= 3 and beyond and beyond[0] > zeros[2] and \
            {r["offset"] for r in pk} >= set(range(0, length, seg))
        return pk, ok, ("%d segments, window %d, two copies of segment 0 lost: the third "
                        "is arrival %s, the first segment >= %d arrival %s (of %d)" %
                        (length // seg, win, zeros[2:3], win, beyond[:1], len(order)))

    def t_init_seg_window(self):
        """Our CX has Seg Win Shift 6: the target sends segment i of a
        message only while i < its lowest undelivered segment + 64
        (MRC-PLC-003), for a WRITE and for a READ response.  We lose the
        first two copies of segment 0, so that the copy we take comes only
        after an RTO: nothing from segment 64 on may come before it."""
        pp = self.init_peer(3, seg_win_shift=6)
        if not pp:
            return
        q = self.new_qp(peer_ip=pp.local, timeout=18, mr_len=131072)
        c = self.connect_of(pp)
        need(c, "no CONNECT towards an address the target had no connection with")
        pp.hook = None
        pp.auto_ack = True
        pp.answer_connect(c)
        length = 80 * 1024
        pk, ok, note = self.windowed(pp, q, m.T_WRITE, lambda: self.a(
            "post_send", qpn=q["qpn"], opcode="write", len=length, rkey=0x4400, va=0,
            wr_id=5), length)
        record("MRC-PLC-003", ok, "WRITE of " + note)
        if pk:
            self.sr_to(q, pk[-1], 0, peer=pp)
        w = self.swcs(q, 2.0)
        record("MRC-PLC-003", wr_status(w) == [(5, 0)], "WRITE completions %s" % w)
        # The target as responder: the same rule for a READ response.
        q2 = self.new_qp(peer_ip=pp.local, timeout=18, mr_len=131072)
        self.a("fill", qpn=q2["qpn"], off=0, len=length, byte=0x6B)
        pk, ok, note = self.windowed(pp, q2, m.T_READ_RESP, lambda: pp.send_seq(
            m.T_READ_REQ, self.sx(q2, 0, 0, length) + m.rx(q2["va"], q2["rkey"])), length)
        data = b"".join(r["payload"] for r in sorted({r["offset"]: r for r in pk}.values(),
                                                     key=lambda r: r["offset"]))
        record("MRC-PLC-003", ok and data == b"\x6b" * length,
               "READ response of %s; data %s" %
               (note, "ok" if data == b"\x6b" * length else "differs"))
        self.a("destroy", qpn=q["qpn"])
        self.a("destroy", qpn=q2["qpn"])

    # Paths we answer by hand -----------------------------------------------
    def t_init_paths(self):
        """One path (our Max Rx Paths 1) whose PROBEs and packets we answer,
        from the receive thread, as each step needs: a PROBE_REPLY with
        another Probe ID (MRC-PATH-028); one that leaves packets
        unacknowledged (MRC-LOSS-006); a NO_STATE ACK (MRC-ACK-017); an
        ACK reordered behind a newer one (MRC-ACK-016).  What the target
        considers resolved shows in the PLW of its next PROBE."""
        pp = self.init_peer(1, max_rx_paths=1)
        if not pp:
            return
        # A probe timeout of 100 ms: our answers, in Python, come first.
        with self.tuned(pto_min_us=100000) as ok:
            if not ok:
                print("# pto_min_us cannot be set: path checks skipped")
                return
            self.init_paths(pp)

    def init_paths(self, pp):
        q = self.new_qp(peer_ip=pp.local, timeout=18)
        c = self.connect_of(pp)
        need(c, "no CONNECT towards an address the target had no connection with")
        n0 = len(pp.seen)
        pp.answer_connect(c)
        pr = pp.recv(lambda r: r["type"] == m.T_PROBE, 2.0)
        need(pr, "no PROBE after the handshake")
        pp.send_raw(pp.probe_reply(pr), sport=pr["sport"])
        time.sleep(0.1)
        probes, answered = [], []   # answers for the next PROBEs; (PROBE, index)
        on_data = []                # called with each new sequenced packet

        def hook(r):
            if r["type"] == m.T_PROBE and probes:
                pkt = probes.pop(0)(r)
                answered.append((r, len(pp.seen)))
                if pkt:
                    pp.send_raw(pkt, sport=r["sport"])
                return True
            if is_seq(r) and on_data:
                on_data[0](r)
            return r["type"] == m.T_CONNECT
        pp.hook = hook

        def rx():
            return pp.rxs[0]["rx"]

        def since(k, end=None):
            return [r for r in pp.seen[k:end] if is_seq(r)]

        def ack_now(r):
            pp.send_raw(pp.ack_pkt(m.T_ACK, 0), sport=r["sport"])

        def reply_acking_now(r, akx):
            """PROBE_REPLY with akx; from then on every packet acknowledged
            as it arrives (no PTO, no TLP)."""
            on_data[:] = [ack_now]
            return pp.probe_reply(r, akx)

        def akx_true():
            st = pp.rxs[0]
            return m.akx(st["cum"], st["rx"], st["got"])

        def write(wr_id, then=None):
            """A 4 KiB WRITE (4 segments of 1 KiB); its 4 packets.  then(pk)
            runs in the receive thread as the 4th arrives."""
            pk = []

            def got(r):
                pk.append(r)
                if len(pk) == 4:
                    on_data.clear()
                    if then:
                        then(pk)
            on_data[:] = [got]
            self.a("post_send", qpn=q["qpn"], opcode="write", len=4096, rkey=0x4400, va=0,
                   wr_id=wr_id)
            until(lambda: len(pk) >= 4, 2.0)
            need(len(pk) == 4, "a 4-segment WRITE: %d packets" % len(pk))
            return pk

        def wrong_id(r):
            pbx = bytearray(r["raw"][32:48])
            pbx[0] ^= 0x80
            return pp.ack_class(m.T_PROBE_REPLY, 0, bytes(pbx) + akx_true())

        # MRC-PATH-028: the PTO's PROBE answered with another Probe ID and
        # everything acknowledged: the RTO must still find the 4 packets
        # unresolved.  Its PROBE answered right, nothing acknowledged: the
        # 4 segments go again (PSNs base+4 to base+7).  MRC-LOSS-006: the
        # next PROBE answered with an AKX of base+4, base+5: the others
        # are lost, resent at once (base+8, base+9), acknowledged then.
        base = []
        probes += [wrong_id,
                   lambda r: pp.probe_reply(r, m.akx(base[0] - 1, rx())),
                   lambda r: reply_acking_now(r, m.akx(base[0] + 5, rx()))]
        c0 = self.counters("rto_timeouts")
        pk = write(1)
        base.append(pk[0]["psn"])
        bpsn = pk[0]["psn"]

        def by_psn(lo, hi):
            return [r for r in pp.seen[n0:] if is_seq(r) and lo <= m.diff(r["psn"], bpsn) <= hi]
        until(lambda: len(answered) >= 3, 4.0)
        rt = by_psn(4, 7)
        record("MRC-PATH-028", len(answered) >= 2 and
               sorted((r["offset"], bool(r["flags"] & m.F_RETX)) for r in rt) ==
               [(0, True), (1024, True), (2048, True), (3072, True)],
               "after a PROBE_REPLY with another Probe ID acknowledging all 4 packets: %s" %
               ("no further PROBE (the reply was taken)" if len(answered) < 2 else
                "PSNs base+4 to base+7 carry (offset, RETX) %s, expected the 4 segments "
                "resent" % sorted((r["offset"], bool(r["flags"] & m.F_RETX)) for r in rt)))
        need(len(answered) >= 3, "PROBEs answered: %d of 3" % len(answered))
        # MRC-LOSS-007: that was an RTO, rto_min_us (our answers are fast:
        # srtt + 4 rttvar stays below it) after the PTO's PROBE.
        c1 = self.counters("rto_timeouts")
        rto = (self.tunable("rto_min_us") or 1000) / 1e6
        gap = answered[1][0]["kt"] - answered[0][0]["kt"]
        record("MRC-LOSS-007", c1["rto_timeouts"] - c0["rto_timeouts"] == 1 and
               0.9 * rto <= gap <= 1.6 * rto + 0.1 and len(rt) == 4,
               "unanswered PTO PROBE: the next PROBE %.3f s later (RTO %.3f s), "
               "rto_timeouts +%d, %d of 4 segments resent" %
               (gap, rto, c1["rto_timeouts"] - c0["rto_timeouts"], len(rt)))
        until(lambda: len(by_psn(8, 9)) >= 2, 1.0)
        time.sleep(0.3)
        on_data.clear()
        k = answered[2][1]
        after = []
        for r in pp.seen[k:]:
            if r["type"] == m.T_PROBE:
                break
            if is_seq(r):
                after.append(r)
        got = sorted((m.diff(r["psn"], bpsn), r["offset"], bool(r["flags"] & m.F_RETX))
                     for r in after)
        want = [(8 + i, r["offset"], True) for i, r in
                enumerate(sorted(by_psn(6, 7), key=lambda r: m.diff(r["psn"], bpsn)))]
        record("MRC-LOSS-006", got == want,
               "PROBE_REPLY acknowledging base+4, base+5 of the 4 packets sent before its "
               "PROBE: then, before any further PROBE, (PSN, offset, RETX) %s; expected %s" %
               (got, want))
        last = pp.seen[-1]
        pp.send_raw(pp.ack_pkt(m.T_ACK, 0, srs=[self.sr(q, 0)]), sport=last["sport"])
        w = self.swcs(q, 2.0)
        need(wr_status(w) == [(1, 0)], "first WRITE: completions %s" % w)

        nxt = [2]       # the next WRITE's wr_id on q; its SSN is one less

        def plw_after(acks):
            """A 4 KiB WRITE answered, as its 4th packet arrives, with the
            ACKs acks(packets, SSN) makes: (its first PSN, the PLW of the
            next PROBE, which we answer with our true state, or None, its
            wr_id, q's completions).  Tried again, up to 3 times, when that
            PROBE left before our ACKs arrived: it tells nothing then."""
            for _ in range(3):
                wr = nxt[0]
                nxt[0] += 1
                n = len(answered)
                probes.append(lambda r: pp.probe_reply(r, akx_true()))
                sent = []

                def send(pk):
                    for x in acks(pk, wr - 1):
                        pp.send_raw(x, sport=pk[-1]["sport"])
                    sent.append(time.time())
                pk = write(wr, send)
                until(lambda: len(answered) > n, 2.0)
                w = self.swcs(q, 1.0)
                if len(answered) <= n:
                    probes.clear()
                    return pk[0]["psn"], None, wr, w
                if sent and answered[n][0]["kt"] > sent[0]:
                    return pk[0]["psn"], answered[n][0]["plw"], wr, w
                print("# the PROBE left before our ACKs arrived: once more")
            need(False, "the PROBE left before our ACKs arrived, 3 times")

        # MRC-ACK-017: a NO_STATE ACK naming all 4 packets acknowledges
        # none; its Stream Record completes the WRITE.
        b, plw, wr, w = plw_after(lambda pk, ssn: [pp.ack_class(m.T_ACK, 0, m.akx(
            pk[-1]["psn"], rx(), flags=m.ACKF_NO_STATE, srs=[self.sr(q, ssn)]))])
        record("MRC-ACK-017", wr_status(w) == [(wr, 0)] and plw == b,
               "NO_STATE ACK with CumPSN base+3 and a Stream Record: completions %s, PLW of "
               "the next PROBE %s (expected base+0)" %
               (wr_status(w), None if plw is None else "base%+d" % m.diff(plw, b)))

        # MRC-ACK-016: the newer ACK (CumPSN base) arrives first; the older
        # one (CumPSN base-1, lower Rx Count) still counts for its SACK bits
        # (base+1, base+2) and its Stream Record.
        def reordered(pk, ssn):
            b, rx0 = pk[0]["psn"], rx() - 4
            older = pp.ack_class(m.T_ACK, 0, m.akx(b - 1, rx0, got=(b + 1, b + 2),
                                                   srs=[self.sr(q, ssn)]))
            return [pp.ack_class(m.T_ACK, 0, m.akx(b, rx0 + 1)), older]
        b, plw, wr, w = plw_after(reordered)
        record("MRC-ACK-016", wr_status(w) == [(wr, 0)] and plw == (b + 3) & 0xFFFFFFFF,
               "ACK CumPSN base, then an older one with CumPSN base-1, SACK base+1, base+2 "
               "and a Stream Record: completions %s, PLW of the next PROBE %s (expected "
               "base+3)" % (wr_status(w), None if plw is None else "base%+d" % m.diff(plw, b)))

        # MRC-LOSS-017: a stream (a second QP, timeout 11: 8.4 ms) whose
        # WRITE nobody acknowledges, at path or stream level: a SYNC for it
        # at each of retry_cnt expiries, then RETRY_EXC_ERR and ERROR,
        # before the path's PTO (100 ms) could bring anything.
        q2 = self.new_qp(peer_ip=pp.local, timeout=11)
        tmo, cnt = 4.096e-6 * 2 ** 11, 7
        c2 = self.counters("rto_timeouts")
        k = len(pp.seen)
        self.a("post_send", qpn=q2["qpn"], opcode="write", len=100, rkey=0x4400, va=0,
               wr_id=1)
        w, end = [], time.monotonic() + 3.0
        while not w and time.monotonic() < end:
            w = self.swcs(q2, 0.02)
        done = time.time()
        state = self.a("state", qpn=q2["qpn"])["state"]
        first = next((r for r in pp.seen[k:] if is_seq(r)), None)
        need(first, "no packet of the second QP's WRITE")

        def names_q2(r):
            n = r["raw"][32]
            return any(struct.unpack(">III", r["raw"][36 + 12 * i:48 + 12 * i])[:2] ==
                       (q2["qpn"], q2["mine"]) for i in range(n))
        syncs = [r for r in pp.seen[k:] if r["type"] == m.T_SYNC and names_q2(r)]
        took = done - first["kt"]
        record("MRC-LOSS-017", wr_status(w) == [(1, WC_RETRY_EXC_ERR)] and state == QPS_ERR and
               len(syncs) >= cnt and 0.9 * (cnt + 1) * tmo <= took,
               "WRITE never acknowledged, timeout 8.4 ms, retry_cnt 7: completions %s after "
               "%.3f s (at least %.3f s), %d SYNCs for the stream, QP state %d" %
               (wr_status(w), took, (cnt + 1) * tmo, len(syncs), state))
        pp.send_raw(pp.ack_pkt(m.T_ACK, 0), sport=first["sport"])
        time.sleep(0.1)
        # A loaded machine can keep the stream waiting past the path's PTO
        # and RTO: the path is SUSPECT then (our late ACK does not revive
        # it), its backoff grown.  A true PROBE_REPLY makes it ACTIVE with
        # backoff 0 again, as MRC-PATH-019 below expects; what the RTO
        # declared lost and now goes again is acknowledged as it arrives.
        if self.counters("rto_timeouts")["rto_timeouts"] > c2["rto_timeouts"]:
            n = len(answered)
            probes[:] = [lambda r: reply_acking_now(r, akx_true())]
            until(lambda: len(answered) > n, 5.0)
            probes.clear()
            need(len(answered) > n, "no PROBE of the path the stream's wait timed out")
            print("# the path's RTO expired while the stream waited; its PROBE answered")
            time.sleep(0.3)
            on_data.clear()

        # MRC-PATH-022, MRC-PATH-021: the path, SUSPECT after an RTO, is
        # not revived by a late ACK of what it had sent; it carries nothing
        # until a PROBE_REPLY to a PROBE of its new state.
        n = len(answered)
        # The paths' RTO and backoff as the target shows them now: nothing
        # answers the WRITE's packets before its RTO, so no RTT sample
        # changes them until then.  A loaded machine's slow answers earlier
        # can leave srtt + 4 rttvar above rto_min_us.
        before = {p["sport"]: p for p in self.a("paths", peer_ip=pp.local)["paths"] or []}
        probes += [lambda r: None, lambda r: pp.ack_pkt(m.T_ACK, 0),
                   lambda r: reply_acking_now(r, akx_true())]
        wr = nxt[0]
        self.a("post_send", qpn=q["qpn"], opcode="write", len=32768, rkey=0x4400, va=0,
               wr_id=wr)
        until(lambda: len(answered) >= n + 3, 3.0)
        need(len(answered) >= n + 3, "PROBEs after a 32 KiB WRITE: %d of 3" %
             (len(answered) - n))
        # MRC-PATH-019: the RTO is rto_min_us (srtt + 4 rttvar is far
        # below, unless a loaded machine answered slowly before), its
        # backoff back at 0 since the PROBE_REPLY of phase 1 made the path
        # ACTIVE (both as the target showed them before the WRITE, where
        # it can); the SUSPECT path's probe timeout, the RTO doubled once,
        # follows.
        gaps = [answered[n + i + 1][0]["kt"] - answered[n + i][0]["kt"] for i in (0, 1)]
        path = before.get(answered[n][0]["sport"])
        base, shown = rto, ""
        if path:
            base = min(max(rto, path["rto_us"] / 1e6) * 2 ** path["backoff"],
                       self.tunable("rto_max_us") / 1e6)
            shown = "; the path's RTO %.3f s, backoff %d before the WRITE" % (
                path["rto_us"] / 1e6, path["backoff"])
        record("MRC-PATH-019",
               all(0.9 * x <= g <= 1.6 * x + 0.1 for g, x in zip(gaps, (base, 2 * base))),
               "PTO PROBE to RTO PROBE %.3f s, to the next PROBE %.3f s; expected %.3f, "
               "%.3f s%s" % (gaps[0], gaps[1], base, 2 * base, shown))
        k1, k2 = answered[n + 1][1], answered[n + 2][1]
        until(lambda: since(k2), 1.0)
        quiet = since(k1, k2)
        record("MRC-PATH-022 MRC-PATH-021", not quiet and since(k2),
               "after the RTO's PROBE and our late ACK of everything: %d sequenced packets "
               "before the next PROBE, %d after our PROBE_REPLY to it" %
               (len(quiet), len(since(k2))))
        offs = set(range(0, 32768, 1024))
        until(lambda: offs <= {r["offset"] for r in since(k2) if r.get("ssn") == wr - 1}, 5.0)
        pp.send_raw(pp.ack_pkt(m.T_ACK, 0, srs=[self.sr(q, wr - 1)]),
                    sport=pp.seen[-1]["sport"])
        w = self.swcs(q, 2.0)
        on_data.clear()
        record("MRC-PATH-022", wr_status(w) == [(wr, 0)],
               "the WRITE once the path was ACTIVE again: completions %s" % wr_status(w))
        self.check_after_handshake(pp, c, pp.seen[n0:], 1)

        # MRC-CONN-051: no path ACTIVE (the only one SUSPECT after its RTO)
        # for conn_dead_timeout_s (1 s here), a stream attached: the
        # connection fails, and its QP (MRC-CONN-050).  With
        # suspect_probes 1 the path moves to new entropy (P8) on the first
        # SUSPECT probe timeout: a full-size PROBE (MRC-PATH-027) from a
        # new port (MRC-PATH-005) before the connection fails.
        with self.tuned(conn_dead_timeout_s=1, suspect_probes=1) as ok:
            if not ok:
                return
            n = len(answered)
            probes += [lambda r: None, lambda r: None, lambda r: None]
            sent, recv, at, state = self.failure_of(q, 5.0)
        need(len(answered) >= n + 2, "no RTO PROBE for 2 unacknowledged WRITEs")
        css = 256 << min(c["max_seg_shift"], 2)
        old = answered[n + 1][0]
        new = answered[n + 2][0] if len(answered) > n + 2 else None
        record("MRC-PATH-027", new is not None and new["raw"][36] & 0x80 and
               new["payload_len"] == css + 24,
               "the PROBE after the SUSPECT probe timeout (suspect_probes 1): %s" %
               ("none" if new is None else "Probe Flags %#x, payload %d bytes (CSS + 24 = %d)" %
                (new["raw"][36], new["payload_len"], css + 24)))
        lo, hi = self.tunable("sport_min") or 49152, self.tunable("sport_max") or 65535
        record("MRC-PATH-005", new is not None and new["sport"] != old["sport"] and
               lo <= new["sport"] <= hi,
               "new entropy of the path: UDP source port %s, was %d (range %d-%d)" %
               (new and new["sport"], old["sport"], lo, hi))
        took = at - answered[n + 1][0]["kt"]
        record("MRC-CONN-051 MRC-CONN-050", failed_qp(sent, recv, 8) and state == QPS_ERR and
               0.9 <= took <= 1.8,
               "no path ACTIVE: completions %s, receives %s %.2f s after the RTO's PROBE "
               "(conn_dead_timeout_s 1), QP state %d" %
               (wr_status(sent), [x["status"] for x in recv], took, state))
        pp.hook = lambda r: r["type"] == m.T_CONNECT

    # Other target behaviour ----------------------------------------------
    def t_prehandshake(self):
        """Packets of our connection in the pre-handshake form (DCID 0, our
        SCID, our own token, from our address): the target, which made the
        connection from our CONNECT, takes them as if addressed by DCID
        (MRC-CONN-021); with another token they name no connection."""
        q = self.new_qp(recvs=4)
        pkt, psn = self.p.seq_pkt(m.T_SEND, self.sx(q, 0, 0, 16), b"P" * 16, dcid=0,
                                  token=self.p.token)
        self.p.send_raw(pkt)
        a = self.ack_of(psn)
        w = [x["status"] for x in self.a("poll", qpn=q["qpn"], wait=1.0)["wcs"]
             if x["cq"] == "rcq"]
        data = bytes.fromhex(self.a("read_recv", qpn=q["qpn"], off=0, len=16)["hex"])
        record("MRC-CONN-021", a is not None and a["dcid"] == self.p.cid and w == [0] and
               data == b"P" * 16,
               "SEND in the pre-handshake form: %s, receive completions %s, data %s" %
               ("no ACK" if a is None else "ACK to DCID %#x" % a["dcid"], w,
                "placed" if data == b"P" * 16 else "not placed"))
        self.p.drain(0.2)
        c0 = self.counters("drop_no_conn")
        pkt, psn = self.p.seq_pkt(m.T_SEND, self.sx(q, 1, 1, 16), b"Q" * 16, dcid=0,
                                  token=self.p.token ^ 1)
        self.p.send_raw(pkt)
        got = [r for r in self.p.drain(0.5) if r["type"] == m.T_ACK and
               r.get("cum_psn") is not None and not r["ack_flags"] & m.ACKF_NO_STATE and
               m.sacked(r, psn)]
        c1 = self.counters("drop_no_conn")
        w = self.a("poll", qpn=q["qpn"], wait=0.2)["wcs"]
        record("MRC-CONN-021", not got and not w and c1["drop_no_conn"] - c0["drop_no_conn"] == 1,
               "pre-handshake form with another token: %d ACKs of it, completions %s, "
               "drop_no_conn +%d" % (len(got), w, c1["drop_no_conn"] - c0["drop_no_conn"]))
        self.p.resolve_all()

    def t_unknown_prehandshake(self):
        """A SEND in the pre-handshake form (DCID 0, our SCID and token)
        for no connection the target has: dropped (drop_no_conn) and
        answered with a RESET CONNECT_REQUIRED, a stateless one
        (MRC-CONN-022, MRC-CONN-045)."""
        scid, token = random.randrange(1, 0xFFFFFFFF), random.randrange(1, 1 << 64)
        sport = self.p.sport ^ 0x33
        psn = random.randrange(1 << 32)
        self.p.drain(0.2)
        c0 = self.counters("drop_no_conn")
        self.p.send_raw(m.packet(m.T_SEND, m.sx(0x10, 0x20, 0, 0, 16), b"p" * 16,
                                 flags=m.F_AR | m.F_LAST, scid=scid, token=token, psn=psn,
                                 plw=psn), sport=sport)
        got = [r for r in self.p.drain(0.7) if r["dcid"] == scid]
        c1 = self.counters("drop_no_conn")
        r = got[0] if got else None
        record("MRC-CONN-022",
               [x["type"] for x in got] == [m.T_RESET] and r["reason"] == m.RST_CONNECT_REQUIRED and
               c1["drop_no_conn"] - c0["drop_no_conn"] == 1,
               "pre-handshake SEND for an unknown SCID: answered with %s, drop_no_conn +%d" %
               ([(hex(x["type"]), x.get("reason")) for x in got],
                c1["drop_no_conn"] - c0["drop_no_conn"]))
        if r and r["type"] == m.T_RESET:
            self.check_reply_addr(r, sport, "MRC-CONN-045")
            record("MRC-CONN-045", (r["scid"], r["token"], r["epoch"]) ==
                   (0, token, self.p.accept["epoch"]),
                   "RESET CONNECT_REQUIRED SCID %#x Token %#x epoch %#x" %
                   (r["scid"], r["token"], r["epoch"]))

    def t_rate_hint(self):
        """The Rate Hint of the target's ACKs with its capacity set by
        rx_capacity_mbps and our connection the only active one: the
        share C * rx_target_util_pct / 100, rounded down (MRC-CC-020)."""
        if not self.p.accept["caps"] & m.CAP_HINT:
            print("# the target does not advertise HINT: rate hint checks skipped")
            return
        pct = self.tunable("rx_target_util_pct")
        q = self.new_qp(recvs=8)
        # 1001 Mb/s: a share that is not a whole number of Mb/s (950.95 at
        # 95%) must be encoded from its exact value, not a rounded one.
        caps, got = (25000, 1001, 1000, 1), []
        for i, cap in enumerate(caps):
            with self.tuned(rx_capacity_mbps=cap) as ok:
                if not ok or pct is None:
                    print("# rx_capacity_mbps cannot be set: rate hint checks skipped")
                    return
                self.p.drain(0.1)       # past hint_active_us: no connection active
                psn = self.send(q, m.T_SEND, self.sx(q, i, i, 16), b"h" * 16)
                a = self.ack_of(psn)
                got.append(a and a["rate_hint"])
        want = [m.hint_encode(Fraction(cap * pct, 100)) for cap in caps]
        record("MRC-CC-020", got == want,
               "Rate Hints %s for rx_capacity_mbps %s (rx_target_util_pct %d), expected %s" %
               ([x if x is None else hex(x) for x in got], caps, pct, [hex(x) for x in want]))

    def t_rate_share(self):
        """One active connection, ours, sending over 1 Mb/s without BKLG:
        the water filling takes it out of U, which is then empty, so the
        share of every hint is C_t itself (MRC-CC-017), not what is left
        of it.  hint_active_us 100 ms makes 120 back-to-back 1 KiB WRITEs a
        rate of several Mb/s within the window (at least 1.5 Mb/s, so
        that what is left of C_t differs from C_t in its encoding)."""
        if not self.p.accept["caps"] & m.CAP_HINT:
            return
        pct = self.tunable("rx_target_util_pct")
        q = self.new_qp()
        with self.tuned(rx_capacity_mbps=1000, hint_active_us=100000) as ok:
            if not ok or pct is None:
                print("# rx_capacity_mbps, hint_active_us cannot be set: share check skipped")
                return
            self.p.drain(0.3)           # no connection active
            pkts = [self.p.seq_pkt(m.T_WRITE, self.sx(q, i, 0, 1024) +
                                   m.rx(q["va"], q["rkey"]), b"s" * 1024)
                    for i in range(120)]
            n0 = len(self.p.seen)
            t0 = time.monotonic()
            for pkt, _ in pkts:
                self.p.send_raw(pkt)
            took = time.monotonic() - t0
            until(lambda: any(m.sacked(r, pkts[-1][1]) for r in self.p.seen[n0:]
                              if r["type"] == m.T_ACK and r.get("cum_psn") is not None and
                              not r["ack_flags"] & m.ACKF_NO_STATE), 3.0)
            hints = [r["rate_hint"] for r in self.p.seen[n0:] if r["type"] == m.T_ACK and
                     r["dcid"] == self.p.cid]
        mbps = len(pkts) * (1024 + 100) * 8 / took / 1e6
        want = m.hint_encode(Fraction(1000 * pct, 100))
        print("# %d WRITEs in %.3f s (%.1f Mb/s): hints %s" %
              (len(pkts), took, mbps, sorted({hex(h) for h in hints})))
        if mbps < 1.5:
            print("# sent too slowly for a rate the hint accounts: share check skipped")
            return
        record("MRC-CC-017", hints and all(h == want for h in hints),
               "one connection active at %.1f Mb/s, not backlogged: Rate Hints %s, expected "
               "all %#x (C_t = 950 Mb/s)" % (mbps, sorted({hex(h) for h in hints}), want))
