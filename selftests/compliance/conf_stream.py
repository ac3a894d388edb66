# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Conformance checks of the target as a responder at stream level (spec
9.5.1, 10, 11, 13): SYNC answers, NAK contents, execution and completion
order, message consistency, the segment window, WRITE_IMM, zero-length
requests and receive credits.  A mixin of conformance.Suite."""
import random
import socket
import struct
import time

import mrpkt as m
from verdict import need, record

SRF_CREDIT, SRF_UNLIMITED, SRF_SYNC_REPLY = 0x80, 0x40, 0x20
WC_SUCCESS, WC_LOC_LEN_ERR, WC_FLUSH = 0, 1, 5
WC_RECV_RDMA_WITH_IMM, WC_WITH_IMM = 129, 2
NONE = 0xFFFFFFFF       # Completed SSN of a stream that completed nothing


class StreamTests:
    def sr_of(self, q, a):
        """q's Stream Record in ACK a, or None."""
        for s in (a or {}).get("srs", []):
            if s["resp_qpn"] == q["qpn"] and s["req_qpn"] == q["mine"]:
                return s
        return None

    def sr_ack(self, q, timeout=2.0, cond=lambda s: True):
        """The next ACK that carries a record of q satisfying cond."""
        a = self.replies(lambda r: r["type"] == m.T_ACK and r["dcid"] == self.p.cid and
                         self.sr_of(q, r) is not None and cond(self.sr_of(q, r)), timeout)
        return a, self.sr_of(q, a)

    def sync(self, entries, path_id=0, n=None, hdr_words=None):
        body = struct.pack(">B3x", len(entries) if n is None else n) + b"".join(
            struct.pack(">III", req, resp, ssn) for req, resp, ssn in entries)
        pkt = m.packet(m.T_SYNC, body, **self.p.hdr_kw(path_id=path_id, psn=0, plw=0))
        if hdr_words is not None:
            pkt = m.seal(pkt[:4] + bytes([hdr_words]) + pkt[5:-4])
        self.p.send_raw(pkt)

    def wcs(self, q, wait=0.0, cq=None):
        w = self.a("poll", qpn=q["qpn"], wait=wait)["wcs"]
        return [x for x in w if cq is None or x["cq"] == cq]

    def t_sync(self):
        """A SYNC is answered at once by an ACK on its Path ID with the
        stream's record marked SYNC_REPLY (spec 9.5.1)."""
        q = self.new_qp(recvs=4)
        psn = self.send(q, m.T_SEND, self.sx(q, 0, 0, 16), b"y" * 16)
        need(self.ack_of(psn), "no ACK for a SEND")
        self.p.drain(0.2)
        self.sync([(q["mine"], q["qpn"], 1)], path_id=0)
        a, s = self.sr_ack(q)
        need(a, "no ACK with the stream's record after a SYNC")
        record("MRC-LOSS-015 MRC-ACK-009", a["path_id"] == 0 and s["flags"] & SRF_SYNC_REPLY,
               "SYNC answer: Path ID %d, SR flags %#x" % (a["path_id"], s["flags"]))
        record("MRC-ACK-013 MRC-ORD-015", s["completed_ssn"] == 0 and
               s["flags"] & SRF_CREDIT and s["msn_limit"] == 1 + 3 - 1,
               "SR after one SEND with 4 receives posted: Completed SSN %d flags %#x "
               "MSN Limit %d, expected 0, CREDIT, 3" %
               (s["completed_ssn"], s["flags"], s["msn_limit"]))
        # Requester and responder disagree: NAK SEQUENCE.
        self.sync([(q["mine"], q["qpn"], 5)], path_id=0)
        n = self.nak_for(q)
        record("MRC-LOSS-015", n is not None and n["code"] == m.NAK_SEQUENCE and
               n["req_qpn"] == q["mine"] and n["ssn"] == 5,
               "SYNC with Oldest Pending SSN 5, Completed SSN 0: NAK %s" %
               ((n and (n["code"], n["ssn"])),))
        # A stream that cannot be attached: NAK STREAM_CLOSED.
        self.sync([(q["mine"] ^ 0x800, 0xFFFFF0, 0)], path_id=0)
        n = self.replies(lambda r: r["type"] == m.T_NAK and r["req_qpn"] == q["mine"] ^ 0x800, 2)
        record("MRC-LOSS-015", n is not None and n["code"] == m.NAK_STREAM_CLOSED,
               "SYNC for a QP that does not exist: NAK %s" % ((n and n["code"]),))
        for what, kw in (("Num Entries 0", dict(n=0)),
                         ("HdrLen for 1 entry, Num Entries 2", dict(n=2))):
            self.p.drain(0.2)
            c0 = self.counters("drop_bad_header")
            self.sync([(q["mine"], q["qpn"], 1)], **kw)
            got = [r for r in self.p.drain(0.3) if r["type"] in (m.T_ACK, m.T_NAK)]
            c1 = self.counters("drop_bad_header")
            d = c1["drop_bad_header"] - c0["drop_bad_header"]
            record("MRC-HDR-016 MRC-HDR-017 MRC-HDR-018", d == 1 and not got,
                   "SYNC with %s: drop_bad_header +%d, %d replies" % (what, d, len(got)))

    def t_sr_drain(self):
        """Stream Records that do not fit one ACK follow in further ACKs of
        the same path within the target's Max ACK Delay, oldest first,
        with no packet or SYNC of ours to prompt them (MRC-ACK-010)."""
        qs = [self.new_qp(recvs=2) for _ in range(12)]
        for i, q in enumerate(qs):
            psn = self.send(q, m.T_SEND, self.sx(q, 0, 0, 16), bytes([i]) * 16)
            need(self.ack_of(psn), "no ACK for a SEND")
        self.p.drain(0.3)
        self.sync([(q["mine"], q["qpn"], 1) for q in qs], path_id=0)
        acks = [r for r in self.p.drain(1.0)
                if r["type"] == m.T_ACK and r["dcid"] == self.p.cid]
        order = [s["resp_qpn"] for a in acks for s in a.get("srs", [])]
        want = [q["qpn"] for q in qs]
        first = [x for i, x in enumerate(order) if x not in order[:i]]
        # A stream whose record was still pending from its SEND (a repeat,
        # MRC-ACK-011) is older than the SYNC and may come first.
        in_order = sorted(first) == sorted(want) and any(
            first[k:] == [x for x in want if x not in first[:k]] for k in range(3))
        record("MRC-ACK-010", in_order and all(a["path_id"] == 0 for a in acks),
               "12 streams SYNCed at once: %d ACKs on paths %s, records first seen "
               "in order %s, expected %s" %
               (len(acks), sorted({a["path_id"] for a in acks}),
                [want.index(x) if x in want else x for x in first], list(range(12))))
        record("MRC-ACK-010 MRC-HDR-015",
               bool(acks) and all(a["num_sr"] <= 58 for a in acks),
               "Stream Records per ACK: %s" % [a["num_sr"] for a in acks])

    def t_not_ready(self):
        """A stream packet for a QP that is still in INIT is acknowledged at
        path level and answered with NAK NOT_READY carrying
        not_ready_wait_us (100 by default), not STREAM_CLOSED; once the QP
        is in RTS the message sent again is taken (MRC-CONN-033,
        MRC-ERR-009)."""
        q = self.new_qp(recvs=2, state="init")
        self.p.drain(0.2)
        psn = self.send(q, m.T_SEND, self.sx(q, 0, 0, 16), b"i" * 16)
        got = self.p.drain(1.0)
        naks = [r for r in got if r["type"] == m.T_NAK and r["resp_qpn"] == q["qpn"]]
        acked = any(r["type"] == m.T_ACK and r.get("cum_psn") is not None and
                    m.sacked(r, psn) for r in got)
        n = naks[0] if naks else None
        fields = n and (n["code"], n["req_qpn"], n["ssn"], n["param"])
        record("MRC-CONN-033 MRC-ERR-009",
               acked and fields == (m.NAK_NOT_READY, q["mine"], 0, 100),
               "SEND to a QP in INIT: path ACK %s, NAK (code, QPN, SSN, Parameter) %s" %
               (acked, fields))
        w = self.wcs(q, 0.2, "rcq")
        record("MRC-CONN-033", not w, "a QP in INIT completed a receive: %s" % w)
        self.a("rts", qpn=q["qpn"])
        psn = self.send(q, m.T_SEND, self.sx(q, 0, 0, 16), b"j" * 16,
                        flags=m.F_AR | m.F_LAST | m.F_RETX)
        a, sr = self.sr_ack(q, 2.0, lambda s: s["completed_ssn"] == 0)
        w = self.wcs(q, 1.0, "rcq")
        data = bytes.fromhex(self.a("read_recv", qpn=q["qpn"], off=0, len=16)["hex"])
        record("MRC-CONN-033", a is not None and [x["status"] for x in w] == [0] and
               data == b"j" * 16,
               "the SEND again once the QP is in RTS: record %s, completions %s, data %s" %
               (sr, w, data))

    def t_nak_fields(self):
        """NAK contents (spec 5.5.9, 13.1) and the flush of a failed
        responder QP's receives (13.2)."""
        q = self.new_qp(recvs=4)
        psn = self.send(q, m.T_SEND, self.sx(q, 0, 0, 16), b"n" * 16)
        need(self.ack_of(psn), "no ACK for a SEND")
        # Second segment of a 2-segment WRITE first, with a bad R_Key.
        self.send(q, m.T_WRITE, self.sx(q, 1, 0, 2048, 1024) +
                  m.rx(q["va"], m.bad_rkey(q["rkey"])), b"\xee" * 1024)
        n = self.nak_for(q)
        need(n, "no NAK for a WRITE with an invalid R_Key")
        got = (n["code"], n["detail"], n["req_qpn"], n["ssn"], n["msn"], n["param"],
               n["completed_ssn"])
        exp = (m.NAK_REMOTE_ACCESS, 1, q["mine"], 1, 0, 1024, 0)
        record("MRC-ERR-001", got == exp,
               "NAK (code, detail, QPN, SSN, MSN, Parameter, Completed SSN) %s, expected %s" %
               (got, exp))
        w = self.wcs(q, 2.0, "rcq")
        end = time.monotonic() + 3
        while len(w) < 4 and time.monotonic() < end:
            w += self.wcs(q, 0.5, "rcq")
        st = [x["status"] for x in w]
        record("MRC-ERR-005", st == [WC_SUCCESS, WC_FLUSH, WC_FLUSH, WC_FLUSH],
               "receive completions after a fatal NAK: %s" % st)
        # RNR: MSN, SSN and Completed SSN of the message.
        q = self.new_qp(recvs=1)
        psn = self.send(q, m.T_SEND, self.sx(q, 0, 0, 16), b"r" * 16)
        need(self.ack_of(psn), "no ACK for a SEND")
        self.send(q, m.T_SEND, self.sx(q, 1, 1, 16), b"s" * 16)
        n = self.nak_for(q)
        got = n and (n["code"], n["ssn"], n["msn"], n["completed_ssn"], n["param"] > 0)
        record("MRC-ERR-001 MRC-PLC-036", got == (m.NAK_RNR, 1, 1, 0, True),
               "RNR NAK (code, SSN, MSN, Completed SSN, wait > 0) %s" % (got,))
        # New receives: the credit is reported without other traffic.
        self.p.drain(0.1)
        self.a("post_recv", qpn=q["qpn"], n=2)
        # The agent posts one at a time: the record may report the first.
        a, s = self.sr_ack(q, 1.0, lambda s: s["msn_limit"] in (1, 2))
        record("MRC-ORD-017 MRC-ACK-009 MRC-ACK-012", a is not None,
               "no Stream Record with MSN Limit 1 or 2 after posting 2 receives to "
               "a QP whose limit was 0")
        psn = self.send(q, m.T_SEND, self.sx(q, 1, 1, 16), b"s" * 16,
                        flags=m.F_AR | m.F_LAST | m.F_RETX)
        a, s = self.sr_ack(q, 2.0, lambda s: s["completed_ssn"] == 1)
        w = self.wcs(q, 1.0, "rcq")
        data = bytes.fromhex(self.a("read_recv", qpn=q["qpn"], off=4096, len=16)["hex"])
        record("MRC-PLC-037", a is not None and [x["status"] for x in w] == [0, 0] and
               data == b"s" * 16, "SEND after RNR and new receives: SR %s, completions %s" %
               (s, [x["status"] for x in w]))

    def t_order(self):
        """Execution and completion order at the responder (spec 11.1, 11.2)."""
        q = self.new_qp(recvs=4)
        pat = bytes(random.randrange(256) for _ in range(64))
        self.send(q, m.T_READ_REQ, self.sx(q, 1, 0, 64) + m.rx(q["va"], q["rkey"]))
        p2 = self.send(q, m.T_SEND, self.sx(q, 2, 0, 16), b"2" * 16)
        p4 = self.send(q, m.T_SEND, self.sx(q, 4, 2, 16), b"4" * 16)
        p3 = self.send(q, m.T_SEND, self.sx(q, 3, 1, 16), b"3" * 16)
        a = self.ack_of(p3)
        early = [r for r in self.p.drain(0.4) if r["type"] == m.T_READ_RESP and
                 r["dqpn"] == q["mine"]]
        s = self.sr_of(q, a)
        record("MRC-ORD-002", not early, "READ executed before the WRITE of SSN 0 arrived")
        record("MRC-ORD-004", a is not None and (s is None or s["completed_ssn"] == NONE),
               "Completed SSN %s before SSN 0 arrived" % (s and s["completed_ssn"]))
        w = self.wcs(q, 0.0, "rcq")
        record("MRC-ORD-005", not w, "receive completions %s before SSN 0 completed" % w)
        self.send(q, m.T_WRITE, self.sx(q, 0, 0, 64) + m.rx(q["va"], q["rkey"]), pat)
        r = self.replies(lambda r: r["type"] == m.T_READ_RESP and r["dqpn"] == q["mine"], 3)
        record("MRC-ORD-002 MRC-ORD-003 MRC-ORD-006", r is not None and r["payload"] == pat and
               r["ssn"] == 1, "READ after the WRITE it follows: %s" %
               ("no READ_RESP" if r is None else "data %s" %
                ("matches" if r["payload"] == pat else "is stale")))
        a, s = self.sr_ack(q, 3.0, lambda s: s["completed_ssn"] == 4)
        w = self.wcs(q, 1.0, "rcq")
        w += self.wcs(q, 0.3, "rcq") if len(w) < 3 else []
        got = [(x["wr_id"], x["status"], x["byte_len"]) for x in w]
        data = [bytes.fromhex(self.a("read_recv", qpn=q["qpn"], off=4096 * i, len=16)["hex"])
                for i in range(3)]
        record("MRC-ORD-004 MRC-ORD-005", a is not None and
               got == [(0, 0, 16), (1, 0, 16), (2, 0, 16)] and
               data == [b"2" * 16, b"3" * 16, b"4" * 16],
               "completions %s, Completed SSN reached 4: %s" % (got, a is not None))
        del p2, p4

    def t_consistency(self):
        """Packets of one message that disagree: NAK INVALID_REQUEST 5."""
        q = self.new_qp()
        psn = self.send(q, m.T_WRITE, self.sx(q, 0, 0, 2048, 0) + m.rx(q["va"], q["rkey"]),
                        b"c" * 1024, flags=m.F_AR)
        need(self.ack_of(psn), "no ACK for a first segment")
        self.send(q, m.T_WRITE, self.sx(q, 0, 0, 3072, 1024) + m.rx(q["va"], q["rkey"]),
                  b"d" * 1024, flags=m.F_AR)
        n = self.nak_for(q)
        mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=1024, len=1024)["hex"])
        record("MRC-PLC-007 MRC-ERR-001", n is not None and
               (n["code"], n["detail"], n["ssn"]) == (m.NAK_INVALID_REQUEST, 5, 0) and
               mem == b"\x5a" * 1024,
               "segment with another Message Length: NAK %s, memory %s" %
               ((n and (n["code"], n["detail"], n["ssn"])),
                "kept" if mem == b"\x5a" * 1024 else "written"))
        # An MSN far beyond the receive window is inconsistent too.
        q = self.new_qp(recvs=2)
        self.send(q, m.T_SEND, self.sx(q, 0, 5000, 16), b"e" * 16)
        n = self.nak_for(q)
        record("MRC-PLC-013", n is not None and
               (n["code"], n["detail"]) == (m.NAK_INVALID_REQUEST, 5),
               "SEND with MSN 5000, next expected 0: NAK %s" %
               ((n and (n["code"], n["detail"])),))

    def t_seg_window(self):
        """A segment at seg_base + W is refused: not placed, not
        acknowledged, counted in drop_seg_window (spec 10.1.2)."""
        w = 1 << self.p.accept["seg_win_shift"]
        size = 256 * (w + 2)
        q = self.new_qp(mr_len=size + 4096)
        c0 = self.counters("drop_seg_window")
        ext = m.sx(q["qpn"], q["mine"], 0, 0, size, 256 * w, segshift=0) + \
            m.rx(q["va"], q["rkey"])
        psn = self.send(q, m.T_WRITE, ext, b"w" * 256, flags=m.F_AR)
        a = self.ack_of(psn, 1.0)
        c1 = self.counters("drop_seg_window")
        mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=256 * w, len=256)["hex"])
        d = c1["drop_seg_window"] - c0["drop_seg_window"]
        record("MRC-PLC-004 MRC-PATH-014", a is None and d == 1 and mem == b"\x5a" * 256,
               "segment %d of a new message (W %d): %s, drop_seg_window +%d, memory %s" %
               (w, w, "acknowledged" if a else "not acknowledged", d,
                "kept" if mem == b"\x5a" * 256 else "written"))
        ext = m.sx(q["qpn"], q["mine"], 0, 0, size, 256 * (w - 1), segshift=0) + \
            m.rx(q["va"], q["rkey"])
        psn = self.send(q, m.T_WRITE, ext, b"v" * 256, flags=m.F_AR)
        a = self.ack_of(psn)
        mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=256 * (w - 1), len=256)["hex"])
        record("MRC-PLC-004", a is not None and mem == b"v" * 256,
               "segment W - 1: %s" % ("placed" if mem == b"v" * 256 else "not placed"))
        self.p.resolve_all()

    def t_write_imm(self):
        q = self.new_qp(recvs=0)
        imm = 0x12345678
        ext = self.sx(q, 0, 0, 32) + m.rx(q["va"], q["rkey"]) + struct.pack(">I", imm)
        self.send(q, m.T_WRITE_IMM, ext, b"i" * 32)
        n = self.nak_for(q)
        mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=0, len=32)["hex"])
        record("MRC-PLC-009", n is not None and n["code"] == m.NAK_RNR and mem == b"\x5a" * 32,
               "WRITE_IMM without a receive: NAK %s, memory %s" %
               ((n and n["code"]), "kept" if mem == b"\x5a" * 32 else "written"))
        self.a("post_recv", qpn=q["qpn"], n=1)
        psn = self.send(q, m.T_WRITE_IMM, ext, b"i" * 32, flags=m.F_AR | m.F_LAST | m.F_RETX)
        need(self.ack_of(psn), "no ACK for a WRITE_IMM")
        w = self.wcs(q, 2.0, "rcq")
        mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=0, len=32)["hex"])
        rbuf = bytes.fromhex(self.a("read_recv", qpn=q["qpn"], off=0, len=32)["hex"])
        ok = len(w) == 1 and w[0]["status"] == 0 and w[0]["opcode"] == WC_RECV_RDMA_WITH_IMM \
            and w[0]["byte_len"] == 32 and w[0]["flags"] & WC_WITH_IMM and \
            socket.ntohl(w[0]["imm"]) == imm
        record("MRC-PLC-009", ok and mem == b"i" * 32 and rbuf == b"\xa5" * 32,
               "WRITE_IMM: completions %s, memory %s, receive buffer %s" %
               (w, "written" if mem == b"i" * 32 else "wrong",
                "untouched" if rbuf == b"\xa5" * 32 else "written"))

    def t_zero_len(self):
        """Zero-length WRITE and READ: no R_Key check (spec 10.6)."""
        q = self.new_qp()
        psn = self.send(q, m.T_WRITE, self.sx(q, 0, 0, 0) + m.rx(0, m.bad_rkey(q["rkey"])))
        self.send(q, m.T_READ_REQ, self.sx(q, 1, 0, 0) + m.rx(0, m.bad_rkey(q["rkey"])))
        r = self.replies(lambda r: r["type"] in (m.T_READ_RESP, m.T_NAK) and
                         r.get("resp_qpn", r.get("sqpn")) == q["qpn"], 3)
        record("MRC-PLC-035", r is not None and r["type"] == m.T_READ_RESP and
               r["msg_len"] == 0 and r["payload_len"] == 0 and r["flags"] & m.F_LAST,
               "zero-length WRITE and READ with an invalid R_Key: %s" %
               ("nothing" if r is None else "NAK %d" % r["code"] if r["type"] == m.T_NAK
                else "READ_RESP length %d" % r["msg_len"]))
        a, s = self.sr_ack(q, 2.0, lambda s: s["completed_ssn"] == 1)
        record("MRC-PLC-035", a is not None, "zero-length requests did not complete")
        del psn
