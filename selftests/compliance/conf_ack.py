# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Conformance checks of the target's path receive state and of the ACKs
that report it (spec 5.5.7, 7.3.2, 8.1, 8.2): Cumulative PSN, SACK bits,
Rx and CE Counts, the PLW rules, one ACK per packet, per-path state on
several of our Path IDs.  A mixin of conformance.Suite."""
import random
import struct

import mrpkt as m
from verdict import need, record

TOS_NOT_ECT, TOS_ECT1, TOS_ECT0, TOS_CE = 0x68, 0x69, 0x6A, 0x6B


def sack_bits(ack):
    """The PSN offsets i (PSN cum + 1 + i) whose SACK bit is set."""
    return [i for i in range(256) if ack["sack"][i // 8] & (0x80 >> (i % 8))]


class AckTests:
    # A path of ours with its own PSN space: we choose PSN and PLW.
    def on_path(self, q, path_id, psn, plw=None, ssn=0, tos=TOS_ECT0,
                flags=m.F_LAST, off=0, data=b"\x77" * 16):
        """A one-segment WRITE of data at q's MR offset off, sent on our
        path path_id with the given PSN and PLW (default: PLW = PSN)."""
        ext = self.sx(q, ssn, 0, len(data)) + m.rx(q["va"] + off, q["rkey"])
        pkt = m.packet(m.T_WRITE, ext, data, flags=flags,
                       **self.p.hdr_kw(path_id=path_id, psn=psn & 0xFFFFFFFF,
                                       plw=(psn if plw is None else plw) & 0xFFFFFFFF))
        self.p.send_raw(pkt, tos=tos)

    def path_ack(self, path_id, timeout=2.0, ptype=m.T_ACK):
        return self.replies(lambda r: r["type"] == ptype and
                            r["path_id"] == path_id and r["dcid"] == self.p.cid,
                            timeout)

    def acks_after(self, path_id, wait=0.25):
        """The ACKs for path_id that arrive within wait seconds."""
        return [r for r in self.p.drain(wait) if r["type"] == m.T_ACK and
                r["path_id"] == path_id and r["dcid"] == self.p.cid]

    def one_ack(self, path_id, what):
        """Exactly one ACK for the packet just sent (MRC-ACK-008)."""
        a = self.path_ack(path_id)
        need(a, "%s: no ACK" % what)
        more = self.acks_after(path_id)
        record("MRC-ACK-008", not more, "%s: %d ACKs for one packet" % (what, 1 + len(more)))
        return more[-1] if more else a

    def t_ack_sack(self):
        """Cumulative PSN, SACK bitmap bit order, Rx Count, duplicates and
        late arrivals on a fresh path."""
        q = self.new_qp()
        path = 1
        b = random.randrange(1 << 32)
        c0 = self.counters("path_duplicates", "late_arrivals")
        acks = []
        plan = [0, 2, 3, 6, 9, 1, 6, 1]
        want = [(0, []), (0, [1]), (0, [1, 2]), (0, [1, 2, 5]), (0, [1, 2, 5, 8]),
                (3, [2, 5]), (3, [2, 5]), (3, [2, 5])]
        for n, (i, (cum, bits)) in enumerate(zip(plan, want)):
            self.on_path(q, path, b + i, plw=b, ssn=i,
                         off=16 * i, data=bytes([i]) * 16)
            a = self.one_ack(path, "PSN base+%d" % i)
            acks.append(a)
            got = (m.diff(a["cum_psn"], b), sack_bits(a))
            record("MRC-ACK-002 MRC-PATH-013 MRC-HDR-002", got == (cum, bits),
                   "after PSNs base+%s: CumPSN base%+d, SACK bits %s; expected base+%d, %s" %
                   (plan[:n + 1], got[0], got[1], cum, bits))
            # Only PSN base+1 after base+9 is NEW below the highest.
            reo = n == plan.index(1)
            record("MRC-ACK-018", bool(a["ack_flags"] & m.ACKF_REORDERED) == reo,
                   "after PSNs base+%s: REORDERED %s, expected %s" %
                   (plan[:n + 1], bool(a["ack_flags"] & m.ACKF_REORDERED), reo))
            record("MRC-ACK-002", a["rx_count"] == n + 1,
                   "Rx Count %d after %d packets on the path" % (a["rx_count"], n + 1))
            record("MRC-ACK-001", a["plw"] == 0 and a["hdr_len"] == 84 + 16 * a["num_sr"],
                   "ACK PLW %#x HdrLen %d with %d SRs" % (a["plw"], a["hdr_len"], a["num_sr"]))
        c1 = self.counters("path_duplicates", "late_arrivals")
        record("MRC-LOSS-020 MRC-CNT-003",
               c1["path_duplicates"] - c0["path_duplicates"] == 1 and
               c1["late_arrivals"] - c0["late_arrivals"] == 1,
               "path_duplicates +%d, late_arrivals +%d for one of each" %
               (c1["path_duplicates"] - c0["path_duplicates"],
                c1["late_arrivals"] - c0["late_arrivals"]))
        # Every WRITE placed once, wherever its PSN fell (the duplicate and
        # late copies of base+6 and base+1 carried the same bytes).
        mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=0, len=160)["hex"])
        exp = b"".join(bytes([i]) * 16 if i in plan else b"\x5a" * 16 for i in range(10))
        record("MRC-PLC-008 MRC-LOSS-019", mem == exp, "memory after the SACK test differs")

    def t_ack_ce(self):
        """CE Count echo and ECE (spec 4.2.2, 8.1) on a fresh path."""
        q = self.new_qp()
        path = 2
        b = random.randrange(1 << 32)
        c0 = self.counters("ecn_ce_rcvd")
        steps = [(TOS_ECT0, 0, False), (TOS_CE, 1, True), (TOS_CE, 2, True),
                 (TOS_ECT1, 2, False), (TOS_NOT_ECT, 2, False)]
        for n, (tos, ce, ece) in enumerate(steps):
            self.on_path(q, path, b + n, plw=b, tos=tos)
            a = self.one_ack(path, "CE step %d" % n)
            record("MRC-ACK-002 MRC-ENC-006", a["ce_count"] == ce,
                   "CE Count %d after packet %d (ECN %d), expected %d" %
                   (a["ce_count"], n, tos & 3, ce))
            record("MRC-ACK-003", bool(a["flags"] & m.F_ECE) == ece,
                   "ECE %s after packet %d (ECN %d)" % (bool(a["flags"] & m.F_ECE), n, tos & 3))
        # A CE-marked control packet (PROBE) is only counted.
        r = self.probe(path, b + 5, b + 5, tos=TOS_CE)
        need(r, "no PROBE_REPLY to a CE-marked PROBE")
        record("MRC-ENC-007", r["ce_count"] == 2 and not r["flags"] & m.F_ECE,
               "CE-marked PROBE: CE Count %d, ECE %s" % (r["ce_count"], bool(r["flags"] & m.F_ECE)))
        c1 = self.counters("ecn_ce_rcvd")
        d = c1["ecn_ce_rcvd"] - c0["ecn_ce_rcvd"]
        record("MRC-ENC-007 MRC-ENC-006", d == 3, "ecn_ce_rcvd +%d for 3 CE packets" % d)

    def t_ack_coalesce(self):
        """Middle segments of a WRITE (no AR, no LAST, in order) still get
        an ACK by the ack_coalesce_pkts-th packet (spec 8.2)."""
        q = self.new_qp()
        path = 3
        b = random.randrange(1 << 32)
        data = bytes(random.randrange(256) for _ in range(9 * 1024))
        for i in range(8):
            ext = self.sx(q, 0, 0, len(data), 1024 * i) + m.rx(q["va"], q["rkey"])
            self.p.send_raw(m.packet(m.T_WRITE, ext, data[1024 * i:1024 * (i + 1)],
                                     flags=0, **self.p.hdr_kw(path_id=path, psn=b + i, plw=b)))
        end = None
        for _ in range(8):
            a = self.path_ack(path, 1.5)
            if a is None:
                break
            end = a
            if m.diff(a["cum_psn"], b + 7) >= 0:
                break
        record("MRC-ACK-005", end is not None and m.diff(end["cum_psn"], b + 7) >= 0,
               "8 packets without AR or LAST: last ACK CumPSN %s, sent up to base+7" %
               (None if end is None else m.diff(end["cum_psn"], b)))
        ext = self.sx(q, 0, 0, len(data), 8192) + m.rx(q["va"], q["rkey"])
        self.p.send_raw(m.packet(m.T_WRITE, ext, data[8192:], flags=m.F_LAST,
                                 **self.p.hdr_kw(path_id=path, psn=b + 8, plw=b)))
        need(self.path_ack(path), "no ACK for the last segment")
        mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=0, len=len(data))["hex"])
        record("MRC-PLC-010", mem == data, "9-segment WRITE placed wrong")

    def t_plw(self):
        """PLW handling of spec 7.3.2 on a fresh path."""
        q = self.new_qp()
        path = 4
        b = random.randrange(1 << 32)
        cases = [  # psn, plw, expected cum, SACK bits, what
            (0, 0, 0, [], "first packet"),
            (5, 3, 2, [2], "PLW base+3 resolves base+1, base+2"),
            (6, 6, 6, [], "PLW base+6 then PSN base+6"),
            (7, 1, 7, [], "stale PLW ignored"),
        ]
        for psn, plw, cum, bits, what in cases:
            self.on_path(q, path, b + psn, plw=b + plw)
            a = self.one_ack(path, what)
            got = (m.diff(a["cum_psn"], b), sack_bits(a))
            record("MRC-PATH-013 MRC-ACK-002", got == (cum, bits),
                   "%s: CumPSN base%+d, SACK %s; expected base+%d, %s" %
                   (what, got[0], got[1], cum, bits))
        bad = [(70000, 70000, "PLW 70000 above CumPSN"),
               (-70000, -70000, "PSN 70000 below CumPSN")]
        for psn, plw, what in bad:
            c0 = self.counters("drop_out_of_window")
            self.on_path(q, path, b + psn, plw=b + plw)
            got = self.acks_after(path, 0.4)
            c1 = self.counters("drop_out_of_window")
            d = c1["drop_out_of_window"] - c0["drop_out_of_window"]
            record("MRC-HDR-017 MRC-PATH-013 MRC-HDR-018", d == 1 and not got,
                   "%s: drop_out_of_window +%d, %d ACKs" % (what, d, len(got)))
        # Nothing of the above moved the state: base+8 is next.
        self.on_path(q, path, b + 8, plw=b + 8)
        a = self.one_ack(path, "after the dropped packets")
        record("MRC-PATH-014 MRC-ENC-025", m.diff(a["cum_psn"], b) == 8 and not sack_bits(a),
               "after dropped packets: CumPSN base%+d" % m.diff(a["cum_psn"], b))

    def t_multipath_rx(self):
        """Several of our Path IDs at once, up to the target's Max Rx
        Paths: each has its own PSN space, CumPSN and SACK bitmap."""
        q = self.new_qp()
        mx = self.p.accept["max_rx_paths"]
        ids = sorted({5, 6, mx - 1})
        base = {i: random.randrange(1 << 32) for i in ids}
        for i in ids:                       # a gap on every path but the last
            self.on_path(q, i, base[i], off=16 * (i % 8))
            self.one_ack(i, "path %d first packet" % i)
            if i != ids[-1]:
                self.on_path(q, i, base[i] + 2, plw=base[i], off=16 * (i % 8))
                self.one_ack(i, "path %d gap" % i)
        for i in ids:
            self.on_path(q, i, base[i] + 3, plw=base[i], off=16 * (i % 8))
            a = self.one_ack(i, "path %d" % i)
            gap = i != ids[-1]
            exp = (0, [1, 2]) if gap else (0, [2])
            got = (m.diff(a["cum_psn"], base[i]), sack_bits(a))
            record("MRC-PATH-013 MRC-PATH-016 MRC-ACK-002", got == exp,
                   "path %d of %d: CumPSN base%+d SACK %s, expected %s" %
                   (i, mx, got[0], got[1], exp))
        if mx < 256:
            c0 = self.counters("drop_bad_header")
            self.on_path(q, mx, random.randrange(1 << 32))
            got = self.acks_after(mx, 0.4)
            c1 = self.counters("drop_bad_header")
            d = c1["drop_bad_header"] - c0["drop_bad_header"]
            record("MRC-HDR-017 MRC-HDR-018", d == 1 and not got,
                   "Path ID %d = Max Rx Paths: drop_bad_header +%d, %d ACKs" % (mx, d, len(got)))

    # PROBE / PROBE_REPLY (spec 5.5.10, 7.6) ---------------------------------
    def probe(self, path, psn, plw, pid=None, pflags=0x40, ts=None, payload=b"",
              tos=TOS_ECT0, timeout=2.0):
        pid = random.randrange(1 << 32) if pid is None else pid
        ts = random.randrange(1 << 64) if ts is None else ts
        pbx = struct.pack(">IB3xQ", pid, pflags, ts)
        self.p.send_raw(m.packet(m.T_PROBE, pbx, payload,
                                 **self.p.hdr_kw(path_id=path, psn=psn & 0xFFFFFFFF,
                                                 plw=plw & 0xFFFFFFFF)), tos=tos)
        r = self.path_ack(path, timeout, ptype=m.T_PROBE_REPLY)
        if r:
            r["echo"] = struct.unpack(">IB3xQ", r["raw"][32:48])
            r["sent"] = (pid, pflags, ts)
        return r

    def t_probe(self):
        q = self.new_qp()
        path = 7
        b = random.randrange(1 << 32)
        r = self.probe(path, b, b)
        need(r, "no PROBE_REPLY to a PROBE on a new path")
        self.check_envelope(r)
        self.check_reply_addr(r, self.p.sport, "MRC-PATH-026")
        record("MRC-PATH-026 MRC-HDR-016", r["echo"] == r["sent"] and r["hdr_len"] == 100 and
               r["payload_len"] == 0 and r["plw"] == 0 and r["num_sr"] == 0,
               "PROBE_REPLY echo %s for %s, HdrLen %d, PLW %#x, Num SR %d" %
               (r["echo"], r["sent"], r["hdr_len"], r["plw"], r["num_sr"]))
        record("MRC-PATH-015 MRC-PATH-026", not r["ack_flags"] & 0x80 and
               m.diff(r["cum_psn"], b) == -1 and not sack_bits(r) and r["rx_count"] == 0,
               "PROBE_REPLY on a new path: flags %#x CumPSN base%+d Rx Count %d" %
               (r["ack_flags"], m.diff(r["cum_psn"], b), r["rx_count"]))
        for i in (0, 1, 3):
            self.on_path(q, path, b + i, plw=b)
            self.one_ack(path, "probed path PSN base+%d" % i)
        r = self.probe(path, b + 4, b + 2)
        need(r, "no PROBE_REPLY")
        record("MRC-PATH-026", m.diff(r["cum_psn"], b) == 1 and sack_bits(r) == [1] and
               r["rx_count"] == 3, "PROBE_REPLY CumPSN base%+d SACK %s Rx Count %d; "
               "expected base+1, [1], 3" % (m.diff(r["cum_psn"], b), sack_bits(r), r["rx_count"]))
        r = self.probe(path, b + 6, b + 6)
        need(r, "no PROBE_REPLY")
        record("MRC-PATH-015", m.diff(r["cum_psn"], b) == 5 and not sack_bits(r),
               "PROBE with PLW base+6: PROBE_REPLY CumPSN base%+d, expected base+5" %
               m.diff(r["cum_psn"], b))
        css = 256 << min(self.p.accept["max_seg_shift"], 2)
        r = self.probe(path, b + 6, b + 6, pflags=0x80, payload=bytes(css + 24))
        record("MRC-PATH-026", r is not None and r["echo"][1] == 0x80,
               "MTU PROBE of CSS + 24 bytes: %s" % ("no reply" if r is None else (r["echo"],)))
        c0 = self.counters("drop_bad_header")
        r = self.probe(path, b + 6, b + 6, pflags=0x80, payload=bytes(css + 28), timeout=0.5)
        c1 = self.counters("drop_bad_header")
        d = c1["drop_bad_header"] - c0["drop_bad_header"]
        record("MRC-HDR-017 MRC-HDR-018", r is None and d == 1,
               "PROBE of CSS + 28 bytes: %s, drop_bad_header +%d" %
               ("answered" if r else "no reply", d))
