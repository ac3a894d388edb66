# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Conformance checks of the target as a requester (spec 5.5.1, 10.4,
11.3, 13.2): the packets of its messages, completion only on a Stream
Record, READ responses we craft (out of order, duplicated, for an unknown
SSN), and the NAKs we send.  A mixin of conformance.Suite."""
import random
import struct
import time

import mrpkt as m
from verdict import need, record

WC_SUCCESS, WC_REM_ACCESS_ERR, WC_RETRY_EXC_ERR = 0, 10, 12
WC_SEND, WC_RDMA_WRITE, WC_RDMA_READ = 0, 1, 2


class RequesterTests:
    def stream_pkts(self, q, types, done, timeout=3.0, peer=None):
        """Packets of q's stream (target to us, or to peer) of the given
        types, until done(list) holds or timeout."""
        out = []
        end = time.monotonic() + timeout
        while not done(out) and time.monotonic() < end:
            r = (peer or self.p).recv(lambda r: r["type"] in types and
                                      r.get("sqpn") == q["qpn"] and
                                      r.get("dqpn") == q["mine"], end - time.monotonic())
            if r:
                out.append(r)
        return out

    def sr_to(self, q, last, completed, limit=0, peer=None):
        """An ACK carrying the record of q's stream (we are its responder),
        for the target path of packet last, addressed as a reply to it."""
        p = peer or self.p
        pkt = p.ack_pkt(m.T_ACK, last["path_id"], srs=[self.sr(q, completed, limit)])
        p.send_raw(pkt, sport=last["sport"])

    @staticmethod
    def sr(q, completed, limit=0):
        """The Stream Record of q's stream, target as requester."""
        return (0x80, q["qpn"], q["mine"], completed, limit)

    def nak_to(self, q, last, code, ssn, completed, detail=1, param=0):
        ext = struct.pack(">IIIIII", code << 24 | q["qpn"], detail << 24 | q["mine"],
                          ssn, 0, param, completed)
        self.p.send_raw(self.p.ack_class(m.T_NAK, last["path_id"], ext),
                        sport=last["sport"])

    def swcs(self, q, wait):
        return [w for w in self.a("poll", qpn=q["qpn"], wait=wait)["wcs"] if w["cq"] == "cq"]

    def two_writes(self, q):
        """Two 100-byte WRITEs (wr_id 1, 2; SSN 0, 1) posted on target QP
        q, and their packets."""
        for wr in (1, 2):
            self.a("post_send", qpn=q["qpn"], opcode="write", len=100, rkey=0x4400,
                   va=0x1000 * wr, wr_id=wr)
        pk = self.stream_pkts(q, (m.T_WRITE,), lambda o: {r["ssn"] for r in o} >= {0, 1})
        need(pk, "no WRITE")
        return pk

    def t_req_not_ready(self):
        """NAK NOT_READY to the target as requester (MRC-ERR-010): it stops,
        waits the Parameter time, doubled for a second NAK in a row, then
        sends every outstanding request again, oldest first; past
        4.096 us * 2^timeout * (retry_cnt + 1) of NOT_READY its oldest
        request fails with RETRY_EXC_ERR."""
        q = self.new_qp(timeout=12)         # budget 16.8 ms * 8 = 134 ms
        pk = self.two_writes(q)
        waits, order = [], []
        for k in range(2):
            # By the kernel's receive times: a copy the target sent before
            # our NAK (a tail loss probe on a loaded host) is no resend.
            t0 = time.time()
            self.nak_to(q, pk[-1], m.NAK_NOT_READY, 0, 0xFFFFFFFF, detail=0, param=4000)
            pk = [r for r in self.stream_pkts(
                q, (m.T_WRITE,), lambda o: {r["ssn"] for r in o if r["kt"] >= t0} >= {0, 1})
                  if r["kt"] >= t0]
            order.append([r["ssn"] for r in pk])
            waits.append(pk[0]["kt"] - t0 if pk else None)
        ok = all(w is not None for w in waits) and waits[0] >= 0.004 and waits[1] >= 0.008
        record("MRC-ERR-010", ok and all(o[:2] == [0, 1] for o in order),
               "after NOT_READY (4 ms): first resend after %s s; after a second one %s s "
               "(at least 0.004, 0.008); SSNs resent %s" % (waits[0], waits[1], order))
        self.sr_to(q, pk[-1], 1)
        w = self.swcs(q, 2.0)
        record("MRC-ERR-010", [(x["wr_id"], x["status"]) for x in w] == [(1, 0), (2, 0)],
               "completions after the record: %s" % w)
        # NOT_READY for ever: the oldest request fails within the budget.
        self.a("post_send", qpn=q["qpn"], opcode="write", len=100, rkey=0x4400, va=0,
               wr_id=3)
        t0, w = time.monotonic(), []
        while not w and time.monotonic() < t0 + 5:
            pk = self.stream_pkts(q, (m.T_WRITE,), lambda o: len(o) >= 1, timeout=0.2)
            if pk:
                self.nak_to(q, pk[-1], m.NAK_NOT_READY, 2, 1, detail=0, param=1000)
            w = self.swcs(q, 0.0)
        took = time.monotonic() - t0
        record("MRC-ERR-010",
               [(x["wr_id"], x["status"]) for x in w] == [(3, WC_RETRY_EXC_ERR)] and
               took >= 0.134,
               "NOT_READY for every resend: completions %s after %.2f s (budget 0.134 s)" %
               (w, took))

    def t_req_stream_close(self):
        """A STREAM_CLOSE (reason 1, no NAK) for the target's stream as
        requester (MRC-CONN-037): what our SSN field completes completes at
        once; nothing more is sent on the stream; the request left fails
        with RETRY_EXC_ERR at the retry budget after the STREAM_CLOSE, not
        sooner."""
        q = self.new_qp(timeout=13)         # budget 33.6 ms * 8 = 268 ms
        pk = self.two_writes(q)
        for r in {r["path_id"]: r for r in pk}.values():     # delivered at path level
            self.p.send_raw(self.p.ack_pkt(m.T_ACK, r["path_id"]), sport=r["sport"])
        time.sleep(0.02)
        scx = struct.pack(">BBBBI", 1, 0, 0, 0, 0)
        self.p.send_seq(m.T_STREAM_CLOSE, m.sx(q["qpn"], q["mine"], 0, segshift=0) + scx)
        t0 = time.monotonic()
        # What the target sends once it has taken the STREAM_CLOSE (its
        # first completion shows it did): a SYNC or resend its retry timer
        # (33.6 ms) sent before the close reached it does not count.
        w, n1 = [], None
        while len(w) < 2 and time.monotonic() < t0 + 5:
            for x in self.swcs(q, 0.02):
                w.append((x["wr_id"], x["status"], time.monotonic() - t0))
                if n1 is None:
                    n1 = len(self.p.seen)
        sent = [r for r in self.p.seen[n1 or 0:] if r.get("sqpn") == q["qpn"] and
                r["type"] in (m.T_WRITE, m.T_SYNC)]
        record("MRC-CONN-037",
               [(x[0], x[1]) for x in w] == [(1, WC_SUCCESS), (2, WC_RETRY_EXC_ERR)] and
               w[0][2] < 0.268 and 0.268 <= w[1][2] < 2.0 and not sent,
               "after STREAM_CLOSE completing SSN 0: completions (wr, status, s) %s "
               "(budget 0.268 s); stream packets after it: %d" % (w, len(sent)))

    def t_req_stream_close_stale(self):
        """STREAM_CLOSEs of an earlier incarnation of the pair (MRC-CONN-057),
        as a peer QP reset and set up again may have resent after a loss:
        one that arrives while the target QP is in RTR, and one in RTS whose
        SSN is not between the SSN before the stream's first and its newest,
        are acknowledged at path level and ignored.  The stream's WRITEs
        then complete by their Stream Record."""
        scx = struct.pack(">BBBBI", 1, 0, 0, 0, 0)
        q = self.new_qp(timeout=13, state="rtr")
        n0 = self.counters("stream_closes_rcvd")["stream_closes_rcvd"]
        # SSN 0xFFFFFFFF: a current close once the stream is in RTS (sq_psn 0).
        psn = self.p.send_seq(m.T_STREAM_CLOSE,
                              m.sx(q["qpn"], q["mine"], 0xFFFFFFFF, segshift=0) + scx)
        rtr_acked = self.ack_of(psn, 1.0) is not None
        self.a("rts", qpn=q["qpn"])
        pk = self.two_writes(q)                             # SSNs 0 and 1
        for r in {r["path_id"]: r for r in pk}.values():   # delivered at path level
            self.p.send_raw(self.p.ack_pkt(m.T_ACK, r["path_id"]), sport=r["sport"])
        psn = self.p.send_seq(m.T_STREAM_CLOSE,
                              m.sx(q["qpn"], q["mine"], 7, segshift=0) + scx)
        rts_acked = self.ack_of(psn, 1.0) is not None
        early = self.swcs(q, 0.2)
        self.sr_to(q, pk[-1], 1)
        w = early + self.swcs(q, 2.0)
        n1 = self.counters("stream_closes_rcvd")["stream_closes_rcvd"]
        record("MRC-CONN-057 MRC-CONN-038",
               rtr_acked and rts_acked and n1 == n0 and
               [(x["wr_id"], x["status"]) for x in w] == [(1, WC_SUCCESS), (2, WC_SUCCESS)],
               "STREAM_CLOSEs in RTR and with SSN 7 after SSNs 0-1: acknowledged %s/%s, "
               "taken %d, then completions %s" %
               (rtr_acked, rts_acked, n1 - n0, [(x["wr_id"], x["status"]) for x in w]))

    def t_requester(self):
        # timeout 18 (1 s): the retry timer must outlast our withheld record.
        q = self.new_qp(timeout=18)
        self.a("fill", qpn=q["qpn"], off=0, len=2500, byte=0x3C)
        self.a("post_send", qpn=q["qpn"], opcode="write", len=2500, rkey=0xABCD00,
               va=0x10000, off=0)
        pk = self.stream_pkts(q, (m.T_WRITE,), lambda o: {0, 1024, 2048} <= {r["offset"] for r in o})
        first = {}
        for r in pk:
            first.setdefault(r["offset"], r)
        need(sorted(first) == [0, 1024, 2048], "WRITE segments %s" % sorted(first))

        def ext(r):   # extension headers without Offset
            e = bytearray(r["raw"][32:r["hdr_len"]])
            e[20:24] = b"\0\0\0\0"
            return bytes(e)
        record("MRC-HDR-014 MRC-HDR-009",
               len({ext(r) for r in pk}) == 1 and not any(r["flags"] & m.F_SE for r in pk),
               "WRITE packets differ in extension fields or carry SE")
        va, rkey = struct.unpack(">QI", pk[0]["raw"][56:68])
        r0 = first[0]
        record("MRC-CONN-029 MRC-VRB-013",
               (r0["ssn"], r0["msn"], r0["msg_len"], va, rkey) == (0, 0, 2500, 0x10000, 0xABCD00),
               "first WRITE: SSN %d MSN %d length %d VA %#x R_Key %#x" %
               (r0["ssn"], r0["msn"], r0["msg_len"], va, rkey))
        record("MRC-HDR-010 MRC-HDR-013 MRC-ENC-023",
               [(o, first[o]["payload_len"], bool(first[o]["flags"] & m.F_LAST))
                for o in (0, 1024, 2048)] == [(0, 1024, False), (1024, 1024, False),
                                              (2048, 452, True)] and
               all(r["segshift"] == 2 for r in pk),
               "WRITE segmentation %s" % [(r["offset"], r["payload_len"], r["segshift"]) for r in pk])
        record("MRC-VRB-013", b"".join(first[o]["payload"] for o in (0, 1024, 2048)) ==
               b"\x3c" * 2500, "WRITE payload differs from the source buffer")
        # Delivered at path level only: not complete (spec 11.3).
        n0 = len(self.p.seen)
        w = self.swcs(q, 0.4)
        syncs = [r for r in self.p.seen[n0:] if r["type"] == m.T_SYNC]
        record("MRC-ORD-008", not w, "WRITE completed without a Stream Record: %s" % w)
        self.sr_to(q, pk[-1], 5)
        w = self.swcs(q, 0.3)
        record("MRC-ORD-010", not w, "WRITE completed by an impossible Completed SSN 5: %s" % w)
        self.sr_to(q, pk[-1], 0)
        w = self.swcs(q, 2.0)
        record("MRC-ORD-008 MRC-ERR-011 MRC-VRB-013",
               [(x["status"], x["opcode"]) for x in w] == [(WC_SUCCESS, WC_RDMA_WRITE)],
               "WRITE completions after its record: %s" % w)
        for s in syncs:
            n = s["raw"][32]
            ents = [struct.unpack(">III", s["raw"][36 + 12 * i:48 + 12 * i]) for i in range(n)]
            record("MRC-LOSS-014 MRC-HDR-016",
                   s["psn"] == 0 and s["plw"] == 0 and s["hdr_len"] == 36 + 12 * n and
                   (q["qpn"], q["mine"], 0) in ents,
                   "SYNC PSN %d PLW %d HdrLen %d entries %s" % (s["psn"], s["plw"], s["hdr_len"], ents))

        # READ: one READ_REQ; our responses out of order, with copies.
        self.a("post_send", qpn=q["qpn"], opcode="read", len=2500, rkey=0x1234500,
               va=0x20000, off=4096)
        rr = self.stream_pkts(q, (m.T_READ_REQ,), lambda o: len(o) >= 1)
        need(rr, "no READ_REQ")
        r = rr[0]
        va, rkey = struct.unpack(">QI", r["raw"][56:68])
        record("MRC-PLC-019 MRC-HDR-010", (r["ssn"], r["msg_len"], r["segshift"], va, rkey,
                                           r["payload_len"], bool(r["flags"] & m.F_LAST),
                                           r["hdr_len"]) ==
               (1, 2500, 2, 0x20000, 0x1234500, 0, True, 68),
               "READ_REQ SSN %d len %d SegShift %d VA %#x R_Key %#x payload %d LAST %s HdrLen %d" %
               (r["ssn"], r["msg_len"], r["segshift"], va, rkey, r["payload_len"],
                bool(r["flags"] & m.F_LAST), r["hdr_len"]))
        data = bytes(random.randrange(256) for _ in range(2500))

        def resp(ssn, off, payload):
            last = m.F_LAST if off + len(payload) == 2500 else 0
            self.p.send_seq(m.T_READ_RESP, m.sx(q["qpn"], q["mine"], ssn, 0, 2500, off,
                                                segshift=2), payload, flags=m.F_AR | last)
        resp(1, 2048, data[2048:])
        resp(1, 0, data[:1024])
        resp(1, 0, b"\xdd" * 1024)                      # a copy, other bytes
        resp(9, 1024, b"\xee" * 1024)                   # no such READ
        w = self.swcs(q, 0.4)
        record("MRC-ORD-009 MRC-PLC-027", not w, "READ completed before all its data: %s" % w)
        resp(1, 1024, data[1024:2048])
        w = self.swcs(q, 2.0)
        mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=4096, len=2600)["hex"])
        record("MRC-PLC-025 MRC-PLC-026 MRC-PLC-027 MRC-ORD-009 MRC-VRB-013",
               [(x["status"], x["opcode"]) for x in w] == [(WC_SUCCESS, WC_RDMA_READ)] and
               mem[:2500] == data and mem[2500:] == b"\x5a" * 100,
               "READ: completions %s, data %s" % (w, "placed" if mem[:2500] == data else "wrong"))

        # A solicited SEND, a WRITE, and NAKs for them.
        self.a("post_send", qpn=q["qpn"], opcode="send", len=100, solicited=True, wr_id=3)
        self.a("post_send", qpn=q["qpn"], opcode="write", len=64, rkey=0x77700, va=0, wr_id=4)
        pk = self.stream_pkts(q, (m.T_SEND, m.T_WRITE), lambda o: {r["ssn"] for r in o} >= {2, 3})
        snd = [r for r in pk if r["type"] == m.T_SEND]
        record("MRC-HDR-009", snd and all(r["flags"] & m.F_SE for r in snd),
               "solicited SEND without SE")
        record("MRC-CONN-029", snd and snd[0]["msn"] == 0 and snd[0]["ssn"] == 2,
               "first SEND: SSN %s MSN %s" % (snd and snd[0]["ssn"], snd and snd[0]["msn"]))
        need(pk, "no SEND/WRITE")
        self.nak_to(q, pk[-1], m.NAK_REMOTE_ACCESS, 9, 2)
        w = self.swcs(q, 0.5)
        record("MRC-ERR-006", [x["status"] for x in w] == [WC_SUCCESS],
               "NAK for SSN 9 (not outstanding, Completed SSN 2): completions %s" % w)
        self.nak_to(q, pk[-1], m.NAK_REMOTE_ACCESS, 3, 2)
        w += self.swcs(q, 2.0)
        record("MRC-ERR-006 MRC-ERR-011",
               [(x["wr_id"], x["status"]) for x in w] == [(3, WC_SUCCESS), (4, WC_REM_ACCESS_ERR)],
               "after NAK REMOTE_ACCESS for SSN 3: completions %s" %
               [(x["wr_id"], x["status"]) for x in w])
