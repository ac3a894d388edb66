# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Hostile-wire checks of the RC transport (hostile.py): READ responses,
segment windows, extension lengths, responder limits.  Each packet is well
formed on its own; the attack is in how it relates to the target's state."""
import mrpkt as m
from verdict import need, record


class RcHostile:
    TESTS = ["t_read_resp_shift", "t_far_segment", "t_short_ext", "t_rd_contexts",
             "t_read_fail_paths"]

    def _cnt(self, *names):
        return self.counters(*names)

    def t_read_resp_shift(self):
        """F01: the target READs 256 KiB from us.  We answer segment 0 with
        the request's SegShift, then send SegShift 0 segments at offsets
        the first response's segment bitmap does not cover.  They must be
        dropped (drop_bad_header) without placing a byte; the READ then
        completes from the right segments with every byte checked."""
        n = 256 << 10
        # Python under TCG takes seconds for these packets: a long retry
        # timer keeps the READ from failing for lack of progress.
        q = self.new_qp(mr_len=n, timeout=22)
        self.a("fill", qpn=q["qpn"], off=0, len=n, byte=0x11)
        self.a("post_send", qpn=q["qpn"], opcode="read", len=n, rkey=0x7700, va=0,
               wr_id=7)
        req = self.stream_pkts(q, (m.T_READ_REQ,), lambda o: len(o) >= 1)
        need(req, "the target sent no READ_REQ")
        sh = req[0]["segshift"]
        need(sh >= 1, "READ_REQ SegShift %d: no smaller one to try" % sh)
        seg = 256 << sh
        nseg = n // seg

        def resp(off, shift, data):
            size = 256 << shift
            last = off + len(data) == n
            self.p.send_seq(m.T_READ_RESP,
                            m.sx(q["qpn"], q["mine"], 0, 0, n, off, segshift=shift),
                            data, flags=m.F_AR | (m.F_LAST if last else 0))
            return size

        def pattern(i):
            return bytes([(i * 7 + 1) & 0xFF]) * seg

        c0 = self._cnt("drop_bad_header")["drop_bad_header"]
        resp(0, sh, pattern(0))
        # SegShift 0 segments past the first response's nseg bits.
        bad = list(range(nseg, n // 256, 8))
        for k in bad:
            resp(k * 256, 0, b"\x33" * 256)
        self.p.drain(0.5)
        dropped = self._cnt("drop_bad_header")["drop_bad_header"] - c0
        mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=0, len=n)["hex"])
        hit = [k for k in bad if mem[k * 256:k * 256 + 256] != b"\x11" * 256]
        record("F01", not hit and dropped >= len(bad),
               "%d SegShift 0 READ_RESPs to a SegShift %d READ: %d placed (first at "
               "offset %s), drop_bad_header +%d" %
               (len(bad), sh, len(hit), hit and hit[0] * 256, dropped))
        for i in range(1, nseg):
            resp(i * seg, sh, pattern(i))
        w = self.swcs(q, 3.0)
        mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=0, len=n)["hex"])
        wrong = [i for i in range(nseg) if mem[i * seg:(i + 1) * seg] != pattern(i)]
        record("F01", [(x["wr_id"], x["status"]) for x in w] == [(7, 0)] and not wrong,
               "the READ from the right segments: completions %s, %d segments wrong" %
               ([(x["wr_id"], x["status"]) for x in w], len(wrong)))

    def t_far_segment(self):
        """F04: SEND segments with Message Length 2 GiB, SegShift 0 and
        offsets near the end: far past the segment window.  Each must be
        refused by the window check (drop_seg_window, no path ACK), never
        looked up in the message's segment bitmap (which read out of
        bounds and, by the bit it found there, took some as duplicates)."""
        q = self.new_qp(recvs=4)
        c0 = self._cnt("drop_seg_window", "duplicates")
        # Spread over the 2 GiB: the old lookup read bits from 64 KiB to
        # 1 MiB past the bitmap, some of them set.
        offs = [0x7FFFFF00 - i * 0x2A00100 for i in range(48)]
        for off in offs:
            self.p.send_seq(m.T_SEND,
                            m.sx(q["qpn"], q["mine"], 0, 0, 0x80000000, off, segshift=0),
                            b"\x44" * 256,
                            flags=m.F_AR | (m.F_LAST if off + 256 == 0x80000000 else 0))
        self.p.drain(0.5)
        c1 = self._cnt("drop_seg_window", "duplicates")
        win = c1["drop_seg_window"] - c0["drop_seg_window"]
        dup = c1["duplicates"] - c0["duplicates"]
        record("F04", win == len(offs) and dup == 0,
               "%d far segments: drop_seg_window +%d, duplicates +%d" % (len(offs), win, dup))
        # The stream still works: a real SEND of SSN 0 is refused as
        # inconsistent with its first packet, so use the next QP.
        q2 = self.new_qp(recvs=4)
        psn = self.send(q2, m.T_SEND, self.sx(q2, 0, 0, 16), b"z" * 16)
        record("F04", self.ack_of(psn) is not None, "no ACK for a SEND after the far segments")

    def t_short_ext(self):
        """F10: an ACK without its AKX and a SYNC without its SYX (Header
        Length 32): dropped and counted in drop_bad_header before any
        extension field is read; no ACK or SYNC is counted as received."""
        names = ("drop_bad_header", "acks_rcvd", "syncs_rcvd")
        c0 = self._cnt(*names)
        self.p.send_raw(self.p.ack_class(m.T_ACK, 0, b""))
        self.p.send_raw(m.packet(m.T_SYNC, b"", **self.p.hdr_kw(path_id=0, psn=0, plw=0)))
        # An ACK whose AKX is cut short of its Stream Record count.
        akx = m.akx(0, 0, flags=m.ACKF_NO_STATE)
        self.p.send_raw(self.p.ack_class(m.T_ACK, 0, akx[:16]))
        self.p.drain(0.5)
        c1 = self._cnt(*names)
        d = {k: c1[k] - c0[k] for k in names}
        record("F10", d == {"drop_bad_header": 3, "acks_rcvd": 0, "syncs_rcvd": 0},
               "short ACK, SYNC and AKX: counters %s" % d)

    def _unacked_reads(self, q, n, wait):
        """n 16-byte READ_REQs to q, none of the responses acknowledged:
        the packets by SSN and the SSNs of the responses seen."""
        pkts = {}
        self.p.auto_ack = False
        try:
            for ssn in range(n):
                pkt, _ = self.p.seq_pkt(m.T_READ_REQ, self.sx(q, ssn, 0, 16) +
                                        m.rx(q["va"] + 16 * ssn, q["rkey"]))
                self.p.send_raw(pkt)
                pkts[ssn] = pkt
            got = self.p.drain(wait)
        finally:
            self.p.auto_ack = True
        return pkts, {r["ssn"] for r in got if r["type"] == m.T_READ_RESP and
                      r.get("sqpn") == q["qpn"]}

    def _resend_until_served(self, q, pkts, ssns):
        """Our ACKs deliver the responses; the refused READs ssns are
        resent, as a requester's loss recovery would, until they are
        served: the SSNs served."""
        later = set()
        for _ in range(12):
            for ssn in ssns:
                if ssn not in later:
                    self.p.send_raw(pkts[ssn])
            for r in self.p.drain(0.5):
                if r["type"] == m.T_READ_RESP and r.get("sqpn") == q["qpn"] and \
                        r["ssn"] in ssns:
                    later.add(r["ssn"])
            if len(later) == len(ssns):
                break
        return later

    def t_rd_contexts(self):
        """F11: the responder holds at most 2 * max_dest_rd_atomic READ
        contexts per stream: with max_dest_rd_atomic 1 and no response
        acknowledged, the third and fourth READ_REQ are refused (no
        response, drop_no_resource) and served once the responses are
        delivered.  With max_dest_rd_atomic 0 a READ is refused with NAK
        INVALID_REQUEST, Detail 1."""
        q = self.new_qp(rd_atomic=1)
        c0 = self._cnt("drop_no_resource")["drop_no_resource"]
        pkts, served = self._unacked_reads(q, 4, 1.0)
        d = self._cnt("drop_no_resource")["drop_no_resource"] - c0
        record("F11", sorted(served) == [0, 1] and d == 2,
               "max_dest_rd_atomic 1, 4 READs, no response acknowledged: responses for "
               "SSNs %s, drop_no_resource +%d" % (sorted(served), d))
        later = self._resend_until_served(q, pkts, (2, 3))
        record("F11", later == {2, 3},
               "the refused READs once the responses were delivered: responses for %s"
               % sorted(later))
        self._rd_contexts_max()
        q0 = self.new_qp(rd_atomic=0)
        self.send(q0, m.T_READ_REQ, self.sx(q0, 0, 0, 16) + m.rx(q0["va"], q0["rkey"]))
        r = self.replies(lambda r: r.get("sqpn") == q0["qpn"] or
                         (r["type"] == m.T_NAK and r.get("resp_qpn") == q0["qpn"]), 3.0)
        record("F11", r is not None and r["type"] == m.T_NAK and r["code"] == 4 and
               r["detail"] == 1,
               "READ to a QP with max_dest_rd_atomic 0: answered with %s" %
               ((r and (hex(r["type"]), r.get("code"), r.get("detail"))),))

    def _rd_contexts_max(self):
        """F11 at the device's limit, max_dest_rd_atomic 128: 256 contexts
        come from their own allocation (above the 32 a stream holds
        inline); 258 READs with no response acknowledged: exactly two
        refused, both served once the responses are delivered."""
        q = self.new_qp(rd_atomic=128)
        c0 = self._cnt("drop_no_resource")["drop_no_resource"]
        pkts, served = self._unacked_reads(q, 258, 2.0)
        d = self._cnt("drop_no_resource")["drop_no_resource"] - c0
        record("F11", d == 2 and not served & {256, 257},
               "max_dest_rd_atomic 128, 258 READs, no response acknowledged: "
               "drop_no_resource +%d, %d responses, SSNs 256/257 among them: %s" %
               (d, len(served), sorted(served & {256, 257})))
        later = self._resend_until_served(q, pkts, (256, 257))
        record("F11", later == {256, 257},
               "max_dest_rd_atomic 128: the refused READs once the responses were "
               "delivered: responses for %s" % sorted(later))

    def t_read_fail_paths(self):
        """F09: READs that got part of their response and then fail (NAK
        REMOTE_ACCESS), are flushed behind a failed one, or are still
        outstanding when their QP is destroyed.  The completions must be
        REM_ACCESS_ERR then WR_FLUSH_ERR; the response bitmaps they hold
        must be freed on each path (kmemleak in the debug-kernel lane,
        make check-debug, reports any left)."""
        q = self.new_qp(timeout=18)
        for wr in (1, 2):
            self.a("post_send", qpn=q["qpn"], opcode="read", len=4096, rkey=0x6600,
                   va=0x10000 * wr, off=8192 * wr, wr_id=wr)
        req = self.stream_pkts(q, (m.T_READ_REQ,), lambda o: {r["ssn"] for r in o} >= {0, 1})
        need(len({r["ssn"] for r in req}) == 2, "READ_REQs: %s" % [r["ssn"] for r in req])
        sh = req[0]["segshift"]
        for ssn in (0, 1):
            self.p.send_seq(m.T_READ_RESP,
                            m.sx(q["qpn"], q["mine"], ssn, 0, 4096, 0, segshift=sh),
                            b"\x66" * (256 << sh), flags=m.F_AR)
        self.p.drain(0.3)
        self.nak_to(q, req[-1], 3, 0, 0xFFFFFFFF, detail=1)
        got = []
        for _ in range(3):
            got += [(x["wr_id"], x["status"]) for x in self.swcs(q, 2.0)]
            if len(got) >= 2:
                break
        # IBV_WC_REM_ACCESS_ERR 10, IBV_WC_WR_FLUSH_ERR 5
        record("F09", got == [(1, 10), (2, 5)],
               "READs with part of a response, the first NAKed: completions %s" % got)
        q2 = self.new_qp(timeout=18)
        self.a("post_send", qpn=q2["qpn"], opcode="read", len=4096, rkey=0x6600, va=0,
               wr_id=3)
        req = self.stream_pkts(q2, (m.T_READ_REQ,), lambda o: len(o) >= 1)
        need(req, "no READ_REQ on the second QP")
        self.p.send_seq(m.T_READ_RESP,
                        m.sx(q2["qpn"], q2["mine"], 0, 0, 4096, 0, segshift=sh),
                        b"\x67" * (256 << sh), flags=m.F_AR)
        self.p.drain(0.3)
        self.a("destroy", qpn=q2["qpn"])
        record("F09", True)
