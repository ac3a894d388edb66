# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""MetaRoCE conformance runner: plays the peer of a device under test and
checks what it sends back against the requirement IDs of
Documentation/metaroce/spec.md.

    conformance.py LOCAL_IP TARGET_IP [AGENT_PORT [EXTRA_IP...]]

LOCAL_IP is an address of this host with no MetaRoCE device on it.  The
target runs the agent selftests/compliance/target.py (AGENT_PORT, default
4794), which creates RC QPs connected to this peer, reads target memory,
polls completions and reads counters (and sets tunables, where it can).
Each EXTRA_IP is a further address of this host that the target has no
connection with: a target QP towards it makes the target the initiator
of a connection (conf_init.py, conf_cack.py); without five of them some
of those checks do not run.  Checks rely on the wire format only
and allow any number of paths the target may use.

Prints one line per requirement ID of requirements.md: pass, fail (with the
reason) or untested, then a summary.  Exit status 1 if any check failed.
"""
import contextlib
import json
import os
import random
import re
import socket
import struct
import sys
import time

import mrpkt as m
from conf_ack import AckTests
from conf_cack import CarriedAckTests
from conf_dgm import DatagramTests
from conf_init import InitiatorTests
from conf_req import RequesterTests
from conf_stream import StreamTests
from conf_verbs import VerbsTests, acks
from peer import Peer
from verdict import Failed, need, record, results, run_groups

OUR_MAX_RX_PATHS = 8

HERE = os.path.dirname(os.path.abspath(__file__))
REQS = os.path.join(HERE, "..", "..", "Documentation", "metaroce",
                    "requirements.md")


class Agent:
    def __init__(self, ip, port):
        self.s = socket.create_connection((ip, port), timeout=60)
        self.f = self.s.makefile("rw")

    def __call__(self, op, **kw):
        kw["op"] = op
        self.f.write(json.dumps(kw) + "\n")
        self.f.flush()
        ans = json.loads(self.f.readline())
        if not ans.pop("ok", False):
            raise Failed("agent %s: %s" % (op, ans.get("error")))
        return ans


class Suite(AckTests, StreamTests, RequesterTests, DatagramTests, InitiatorTests,
            VerbsTests, CarriedAckTests):
    def __init__(self, local, target, aport, extra=()):
        self.local, self.target = local, target
        self.extra = list(extra)   # further addresses of ours, unknown to the target
        # How much slower than the stock kernel the target is (MROCE_SLOW,
        # e.g. 4 under the debug kernel): checks whose packets must come
        # within a target timer's span take its timers that much longer.
        self.slow = max(1.0, float(os.environ.get("MROCE_SLOW") or 1))
        self.peers = {}         # i -> our Peer at extra[i] (conf_init.py)
        self.first_psns = {}    # (target CID, Path ID) -> first PSN seen
        self.p = Peer(local, target)
        self.a = Agent(target, aport)
        self.nq = 0

    # Helpers ---------------------------------------------------------------
    def counters(self, *names):
        """The target's counters (only those named, if any: faster)."""
        return self.a("counters", names=list(names) or None)

    def tunable(self, name):
        """A tunable of the target (spec 17), None if it has no such one."""
        return self.a("tunable", name=name)["value"]

    @contextlib.contextmanager
    def tuned(self, **values):
        """Run with the target's tunables set to values, restored after;
        yields whether the target has them all (else none is changed)."""
        old = {k: self.tunable(k) for k in values}
        ok = None not in old.values()
        try:
            if ok:
                for k, v in values.items():
                    self.a("tunable", name=k, value=v)
                    # A value out of the tunable's range is refused.
                    now = self.tunable(k)
                    need(now == v, "tunable %s: %s refused, it is %s" % (k, v, now))
            yield ok
        finally:
            if ok:
                for k, v in old.items():
                    self.a("tunable", name=k, value=v)

    def new_qp(self, **kw):
        """A fresh target QP and our matching stream QPN."""
        self.nq += 1
        mine = (self.p.qpn + self.nq) & 0xFFFFFF
        kw.setdefault("peer_ip", self.local)
        q = self.a("qp", peer_qpn=mine, **kw)
        q["mine"] = mine
        q["ssn"] = 0
        q["msn"] = 0
        time.sleep(0.05)
        return q

    def replies(self, match, timeout=2.0):
        return self.p.recv(match, timeout)

    def ack_of(self, psn, timeout=3.0):
        """The first ACK that reports psn received."""
        return self.replies(lambda r: r["type"] == m.T_ACK and
                            r.get("cum_psn") is not None and
                            not r["ack_flags"] & 0x80 and m.sacked(r, psn),
                            timeout)

    def nak_for(self, q, timeout=3.0):
        return self.replies(lambda r: r["type"] == m.T_NAK and
                            r["resp_qpn"] == q["qpn"], timeout)

    def quiet(self, what, wait=0.7):
        """Nothing but unrelated traffic arrives: no reply to a bad packet."""
        got = [r for r in self.p.drain(wait) if r["type"] in
               (m.T_ACK, m.T_NAK, m.T_RESET, m.T_CONNECT_ACK)]
        need(not got, "%s: answered with %s" % (what, [hex(r["type"]) for r in got]))

    def check_envelope(self, r, ids_note=""):
        """Encapsulation of any packet the target sent as a reply."""
        record("MRC-ENC-001", r["dport"] == m.UDP_PORT, "UDP destination port %d" % r["dport"])
        record("MRC-ENC-016 MRC-ENC-017", r["crc_ok"], "bad CRC32C in a %#x" % r["type"])
        record("MRC-ENC-014", len(r["raw"]) == r["hdr_len"] + r["payload_len"] + 4,
               "UDP payload %d bytes for HdrLen %d + Payload Length %d + CRC" %
               (len(r["raw"]), r["hdr_len"], r["payload_len"]))
        record("MRC-ENC-004", r["tos"] >> 2 == 26, "DSCP %d, default is 26" % (r["tos"] >> 2))
        record("MRC-ENC-005", r["tos"] & 3 == 2, "ECN field %d, not ECT(0)" % (r["tos"] & 3))
        record("MRC-ENC-008", r["df"], "DF not set")
        # Linux's default TTL and hop limit (ip_default_ttl, hop_limit).
        hops = r.get("hlim", r.get("ttl"))
        record("MRC-ENC-009", hops == 64, "TTL / hop limit %s, the route's default is 64" % hops)
        record("MRC-HDR-004 MRC-HDR-005", r["hdr_len"] % 4 == 0 and r["hdr_len"] >= 32,
               "HdrLen %d" % r["hdr_len"])
        raw = r["raw"]
        record("MRC-HDR-003", raw[0] & 0x0F == 0 and r["flags"] & 0x00FF == 0,
               "reserved Base Header bits set in a %#x: %02x %04x" %
               (r["type"], raw[0], r["flags"]))
        allowed = {m.T_ACK: m.F_ECE | m.F_MAC, m.T_NAK: m.F_MAC,
                   m.T_CONNECT_ACK: m.F_MAC, m.T_RESET: m.F_MAC,
                   m.T_READ_RESP: m.F_AR | m.F_LAST | m.F_RETX | m.F_BKLG | m.F_MAC | m.F_AKX,
                   m.T_ATOMIC_RESP: m.F_AR | m.F_LAST | m.F_RETX | m.F_BKLG | m.F_MAC | m.F_AKX}
        if r["type"] in allowed:
            record("MRC-HDR-008", r["flags"] & ~allowed[r["type"]] == 0,
                   "flags %#x in a %#x" % (r["flags"], r["type"]))

    def check_reply_addr(self, r, sport, ids):
        record(ids + " MRC-ENC-011", r["ip_src"] == self.target and
               r["sport"] == sport and r["dport"] == m.UDP_PORT,
               "reply from %s:%d to port %d; request came from port %d" %
               (r["ip_src"], r["sport"], r["dport"], sport))

    def send(self, q, ptype, ext, payload=b"", **kw):
        return self.p.send_seq(ptype, ext, payload, **kw)

    def sx(self, q, ssn, msn=0, msg_len=0, offset=0, dqpn=None):
        return m.sx(q["qpn"] if dqpn is None else dqpn, q["mine"], ssn, msn,
                    msg_len, offset, segshift=2)

    # Tests -------------------------------------------------------------------
    def t_connect(self):
        # Several paths towards us: the target may use Path IDs 0 to 7
        # (checked on every packet it sends, in t_whole_run).
        self.p.cx_kw = dict(max_rx_paths=OUR_MAX_RX_PATHS)
        a = self.p.connect()
        need(a, "no CONNECT_ACK to our CONNECT")
        self.check_envelope(a)
        self.check_reply_addr(a, self.p.sport, "MRC-CONN-015")
        record("MRC-CONN-015", a["dcid"] == self.p.cid and a["token"] == self.p.token and
               a["scid"] not in (0, 0xFFFFFFFF),
               "CONNECT_ACK DCID %#x Token %#x" % (a["dcid"], a["token"]))
        record("MRC-HDR-016", a["hdr_len"] == 96 + 16 * a["num_addrs"],
               "CONNECT_ACK HdrLen %d for %d addresses" % (a["hdr_len"], a["num_addrs"]))
        record("MRC-ENC-022", a["max_seg_shift"] <= 4, "Max Seg Shift %d" % a["max_seg_shift"])
        record("MRC-CONN-005 MRC-SEC-006", a["cx_token"] != 0, "zero token")
        need(a["vmin"] <= 1 <= a["vmax"], "version range %d-%d" % (a["vmin"], a["vmax"]))
        addr = a["addrs"][0] if a["addrs"] else b""
        record("MRC-CONN-011", addr == m.addr16(self.target),
               "first plane address %s" % addr.hex())
        # A resent CONNECT is answered again, with the same CID.
        self.p.send_raw(self.p.connect_pkt())
        b = self.replies(lambda r: r["type"] == m.T_CONNECT_ACK, 2)
        record("MRC-CONN-016", b is not None and b["scid"] == a["scid"],
               "resent CONNECT: %s" % ("no answer" if not b else "new CID %#x" % b["scid"]))

    def t_wrap(self):
        """PSNs across 2^32 (serial number arithmetic)."""
        q = self.new_qp()
        self.p.psn = self.p.plw = 0xFFFFFFFE
        psns = []
        for i in range(4):
            psns.append(self.send(q, m.T_SEND, self.sx(q, i, i, 32), bytes([i]) * 32))
        a = None
        end = time.monotonic() + 4
        while time.monotonic() < end:
            a = self.ack_of(psns[-1], 1)
            if a and all(m.sacked(a, x) for x in psns):
                break
        wcs = [w for w in self.a("poll", qpn=q["qpn"], wait=2.0)["wcs"] if w["cq"] == "rcq"]
        record("MRC-HDR-001 MRC-PATH-009", a is not None and len(wcs) == 4 and
               all(w["status"] == 0 for w in wcs),
               "PSNs %s across the wrap: ACK %s, %d receive completions" %
               (psns, a and a["cum_psn"], len(wcs)))
        if not self.p.v6:   # our IPv4 packets carry a zero UDP checksum
            record("MRC-ENC-012", a is not None, "zero UDP checksum (IPv4) not accepted")
        self.p.resolve_all()

    def t_udp_checksum(self):
        """The UDP checksum: over IPv6 mandatory (a zero or wrong one is
        dropped), over IPv4 optional but verified when not zero."""
        q = self.new_qp()
        pkt, psn = self.p.seq_pkt(m.T_SEND, self.sx(q, 0, 0, 16), b"c" * 16,
                                  flags=m.F_AR | m.F_LAST)
        bad = [("wrong", 0x1234)] + ([("zero", False)] if self.p.v6 else [])
        for what, csum in bad:
            self.p.send_raw(pkt, csum=csum)
            got = [r for r in self.p.drain(0.7) if r["type"] in (m.T_ACK, m.T_NAK) and
                   m.sacked(r, psn)]
            wcs = self.a("poll", qpn=q["qpn"])["wcs"]
            record("MRC-ENC-013" if self.p.v6 else "MRC-ENC-012",
                   not got and not wcs, "%s UDP checksum: acknowledged %d times, "
                   "completions %s" % (what, len(got), wcs))
        self.p.send_raw(pkt)
        a = self.ack_of(psn)
        wcs = self.a("poll", qpn=q["qpn"], wait=2.0)["wcs"]
        record("MRC-ENC-013" if self.p.v6 else "MRC-ENC-012", a is not None and len(wcs) == 1,
               "the packet with a correct checksum: ACK %s, completions %s" %
               (a is not None, wcs))
        if self.p.v6:
            record("MRC-ENC-003", a is not None, "no ACK over IPv6")
            record("MRC-ENC-013", a is not None and a["udp_csum"] != 0 and a["udp_csum_ok"],
                   "the target's UDP checksum %s" % (a and hex(a["udp_csum"])))

    def t_send(self):
        q = self.new_qp()
        data = bytes(random.randrange(256) for _ in range(2048 + 100))
        psns = []
        for off in (0, 1024, 2048):
            chunk = data[off:off + 1024]
            flags = m.F_AR | (m.F_LAST if off == 2048 else 0)
            psns.append(self.send(q, m.T_SEND, self.sx(q, 0, 0, len(data), off), chunk,
                                  flags=flags))
        a = self.ack_of(psns[-1])
        need(a, "no ACK for a 3-segment SEND")
        self.check_envelope(a)
        self.check_reply_addr(a, self.p.sport, "MRC-ACK-001")
        record("MRC-ACK-002 MRC-ACK-006", all(m.sacked(a, x) for x in psns),
               "ACK CumPSN %d does not cover PSNs %s" % (a["cum_psn"], psns))
        wcs = self.a("poll", qpn=q["qpn"], wait=2.0)["wcs"]
        recv = [w for w in wcs if w["cq"] == "rcq"]
        ok = len(recv) == 1 and recv[0]["status"] == 0 and recv[0]["byte_len"] == len(data)
        got = bytes.fromhex(self.a("read_recv", qpn=q["qpn"], off=0, len=len(data))["hex"])
        record("MRC-PLC-011 MRC-PLC-015 MRC-PLC-016", ok and got == data,
               "receive completions %s, data %s" % (recv, "ok" if got == data else "differs"))
        # The Stream Record reports the completed SSN (0) for our stream.
        a = self.ack_of(psns[-1], 1.0) or a
        srs = [s for s in a.get("srs", []) if s["resp_qpn"] == q["qpn"]]
        record("MRC-ACK-009 MRC-ACK-010 MRC-ACK-013",
               any(s["req_qpn"] == q["mine"] and s["completed_ssn"] == 0 for s in srs),
               "Stream Records %s" % a.get("srs"))
        q["ssn"], q["msn"] = 1, 1
        return q

    def t_write_ooo(self):
        q = self.new_qp()
        data = bytes(random.randrange(256) for _ in range(3072))
        psns = []
        for off in (2048, 0, 1024):     # last segment first
            flags = m.F_AR | (m.F_LAST if off == 2048 else 0)
            psns.append(self.send(q, m.T_WRITE, self.sx(q, 0, 0, 3072, off) +
                                  m.rx(q["va"] + 512, q["rkey"]),
                                  data[off:off + 1024], flags=flags))
        a = self.ack_of(psns[-1])
        need(a, "no ACK for a WRITE")
        mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=0, len=4096)["hex"])
        record("MRC-PLC-008 MRC-PLC-010 MRC-ORD-001 MRC-HDR-013",
               mem[512:3584] == data and mem[:512] == b"\x5a" * 512 and
               mem[3584:] == b"\x5a" * 512, "target memory after out-of-order WRITE differs")
        # Duplicate at path level: same PSN again -> acknowledged, no effect.
        self.a("fill", qpn=q["qpn"], off=512, len=1024, byte=0x11)
        pkt, _ = self.p.seq_pkt(m.T_WRITE, self.sx(q, 0, 0, 3072, 0) +
                                m.rx(q["va"] + 512, q["rkey"]), data[:1024],
                                psn=psns[1], flags=m.F_AR)
        self.p.send_raw(pkt)
        a = self.ack_of(psns[1])
        mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=512, len=1024)["hex"])
        record("MRC-LOSS-020 MRC-LOSS-019", a is not None and mem == b"\x11" * 1024,
               "path duplicate: %s, memory %s" %
               ("no ACK" if a is None else "acked", "rewritten" if mem != b"\x11" * 1024 else "kept"))
        # Stream duplicate: the content again under a new PSN (RETX).
        psn = self.send(q, m.T_WRITE, self.sx(q, 0, 0, 3072, 0) +
                        m.rx(q["va"] + 512, q["rkey"]), data[:1024],
                        flags=m.F_AR | m.F_RETX)
        a = self.ack_of(psn)
        mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=512, len=1024)["hex"])
        record("MRC-PLC-005 MRC-PLC-006", a is not None and mem == b"\x11" * 1024,
               "stream duplicate of a completed WRITE: %s, memory %s" %
               ("no ACK" if a is None else "acked", "rewritten" if mem != b"\x11" * 1024 else "kept"))

    def t_access(self):
        for what, rkey_d, off, detail in (("invalid R_Key", m.BAD_KEY_XOR, 0, 1),
                                          ("range outside the region", 0, 65536 - 512, 4)):
            q = self.new_qp()
            psn = self.send(q, m.T_WRITE, self.sx(q, 0, 0, 1024, 0) +
                            m.rx(q["va"] + off, q["rkey"] ^ rkey_d), b"\xee" * 1024)
            n = self.nak_for(q)
            mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=0, len=q["len"])["hex"])
            untouched = mem == b"\x5a" * q["len"]
            record("MRC-PLC-033 MRC-PLC-034 MRC-SEC-001 MRC-ERR-004", untouched,
                   "%s: target memory changed" % what)
            ok = n is not None and n["code"] == m.NAK_REMOTE_ACCESS and \
                n["req_qpn"] == q["mine"] and n["ssn"] == 0
            record("MRC-ERR-001", ok, "%s: NAK %s" % (what, n and (n["code"], n["detail"], n["ssn"])))
            if n:
                self.check_reply_addr(n, self.p.sport, "MRC-ERR-001")
                record("MRC-ERR-001", n["path_id"] == self.p.path_id, "NAK Path ID")
            record("MRC-ERR-003", self.ack_of(psn, 1.5) is not None,
                   "%s: NAKed packet not acknowledged at path level" % what)
            if detail == 1:
                self.failed_stream(q)

    def failed_stream(self, q):
        """MRC-CONN-035, MRC-ERR-002: packets of a stream that failed with a
        fatal NAK are acknowledged at path level, not placed, and answered
        with that NAK at most once per rto_min_us."""
        rto_min = (self.tunable("rto_min_us") or 1000) / 1e6
        time.sleep(rto_min + 0.01)      # past the rate limit of the first NAK
        t0 = time.monotonic()
        psns = [self.send(q, m.T_WRITE, self.sx(q, i, 0, 256, 0) +
                          m.rx(q["va"] + 1024 * i, q["rkey"]), b"\x11" * 256)
                for i in range(1, 5)]
        burst = time.monotonic() - t0
        got = self.p.drain(1.0)
        naks = [r for r in got if r["type"] == m.T_NAK and r["resp_qpn"] == q["qpn"]]
        acked = [p for p in psns if any(
            r["type"] == m.T_ACK and r.get("cum_psn") is not None and m.sacked(r, p)
            for r in got)]
        mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=0, len=q["len"])["hex"])
        record("MRC-CONN-035", acked == psns and mem == b"\x5a" * q["len"] and naks and
               all(n["code"] == m.NAK_REMOTE_ACCESS for n in naks),
               "4 WRITEs of the failed stream: %d of them acknowledged, memory %s, NAKs %s" %
               (len(acked), "untouched" if mem == b"\x5a" * q["len"] else "changed",
                [n["code"] for n in naks]))
        record("MRC-ERR-002", len(naks) <= 1 + int(burst / rto_min),
               "%d NAKs for 4 packets sent within %.2f ms (rto_min_us %d)" %
               (len(naks), burst * 1000, rto_min * 1e6))

    def t_read(self):
        q = self.new_qp()
        self.a("fill", qpn=q["qpn"], off=0, len=256, byte=0x42)
        psn = self.send(q, m.T_READ_REQ, self.sx(q, 0, 0, 2500) + m.rx(q["va"], q["rkey"]))
        resp, seen = b"", {}
        end = time.monotonic() + 5
        while time.monotonic() < end and len(seen) < 3:
            r = self.replies(lambda r: r["type"] == m.T_READ_RESP, 1)
            if r:
                seen[r["offset"]] = r
        ok = sorted(seen) == [0, 1024, 2048] and all(
            r["ssn"] == 0 and r["msg_len"] == 2500 and r["dqpn"] == q["mine"] and
            r["sqpn"] == q["qpn"] and bool(r["flags"] & m.F_LAST) == (o == 2048)
            for o, r in seen.items())
        record("MRC-PLC-021 MRC-PLC-022 MRC-HDR-010 MRC-HDR-013", ok,
               "READ_RESP offsets %s" % sorted(seen))
        if ok:
            resp = b"".join(seen[o]["payload"] for o in (0, 1024, 2048))
            mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=0, len=2500)["hex"])
            record("MRC-PLC-022", resp == mem, "READ_RESP data differs from target memory")
            for r in seen.values():
                self.check_envelope(r)
        record("MRC-ACK-006", self.ack_of(psn, 1) is not None or ok, "READ_REQ not acknowledged")

    def t_atomic(self):
        q = self.new_qp()
        ext = self.sx(q, 0, 0, 8) + m.atx(q["va"] + 8, 3, 0, q["rkey"])
        self.send(q, m.T_ATOMIC_FA, ext)
        r = self.replies(lambda r: r["type"] == m.T_ATOMIC_RESP, 3)
        need(r, "no ATOMIC_RESP")
        record("MRC-PLC-029 MRC-PLC-032", r["orig"] == 0x5a5a5a5a5a5a5a5a and r["ssn"] == 0,
               "ATOMIC_RESP Original Value %#x SSN %d" % (r["orig"], r["ssn"]))
        # The same request again under a new PSN: answered from the cache.
        self.send(q, m.T_ATOMIC_FA, ext, flags=m.F_AR | m.F_LAST | m.F_RETX)
        r2 = self.replies(lambda r: r["type"] == m.T_ATOMIC_RESP, 3)
        mem = struct.unpack("<Q", bytes.fromhex(
            self.a("read", qpn=q["qpn"], off=8, len=8)["hex"]))[0]
        record("MRC-PLC-031", r2 is not None and r2["orig"] == r["orig"] and
               mem == 0x5a5a5a5a5a5a5a5a + 3,
               "duplicate ATOMIC: reply %s, target %#x (executed %s)" %
               ((r2 and hex(r2["orig"])), mem, "twice" if mem != 0x5a5a5a5a5a5a5a5a + 3 else "once"))
        # Misaligned target: INVALID_REQUEST detail 2.
        q = self.new_qp()
        self.send(q, m.T_ATOMIC_FA, self.sx(q, 0, 0, 8) + m.atx(q["va"] + 4, 1, 0, q["rkey"]))
        n = self.nak_for(q)
        record("MRC-ERR-001", n is not None and n["code"] == m.NAK_INVALID_REQUEST and
               n["detail"] == 2, "misaligned atomic: NAK %s" % ((n and (n["code"], n["detail"])),))

    def recv_statuses(self, q, n, wait=3.0):
        """The statuses of q's first n receive completions (fewer if they
        do not come within wait seconds)."""
        w, end = [], time.monotonic() + wait
        while len(w) < n and time.monotonic() < end:
            w += self.wcs(q, 0.5, "rcq")
        return [x["status"] for x in w]

    def t_rnr_length_seq(self):
        q = self.new_qp(recvs=0)
        self.send(q, m.T_SEND, self.sx(q, 0, 0, 64), b"r" * 64)
        n = self.nak_for(q)
        record("MRC-PLC-036 MRC-ERR-001", n is not None and n["code"] == m.NAK_RNR and
               n["param"] > 0, "no receive posted: NAK %s" % ((n and (n["code"], n["param"])),))
        q = self.new_qp(recvs=2, recv_len=256)
        self.send(q, m.T_SEND, self.sx(q, 0, 0, 512, 0), b"l" * 512, flags=m.F_AR | m.F_LAST)
        n = self.nak_for(q)
        st = self.recv_statuses(q, 2)
        record("MRC-PLC-014 MRC-ERR-001 MRC-ERR-005",
               n is not None and n["code"] == m.NAK_LENGTH and st == [1, 5],
               "512-byte SEND into a 256-byte receive: NAK %s, receive completions %s "
               "(want LOC_LEN_ERR 1, then FLUSH 5)" % ((n and n["code"]), st))
        # The same failure in the second message, before the first arrives:
        # the first receive is flushed, then the second fails (WQE order).
        q = self.new_qp(recvs=2, recv_len=256)
        self.send(q, m.T_SEND, self.sx(q, 1, 1, 512, 0), b"l" * 512, flags=m.F_AR | m.F_LAST)
        n = self.nak_for(q)
        st = self.recv_statuses(q, 2)
        record("MRC-ERR-005", n is not None and n["code"] == m.NAK_LENGTH and st == [5, 1],
               "512-byte SEND (MSN 1) into a 256-byte receive before MSN 0: NAK %s, "
               "receive completions %s (want FLUSH 5, then LOC_LEN_ERR 1)" %
               ((n and n["code"]), st))
        # A receive whose L_Key names no MR: NAK REMOTE_OPERATIONAL detail
        # 1, that receive completes with LOC_PROT_ERR, not a flush.
        q = self.new_qp(recvs=0)
        self.a("post_recv", qpn=q["qpn"], n=2, bad_lkey=True)
        self.send(q, m.T_SEND, self.sx(q, 0, 0, 16, 0), b"k" * 16, flags=m.F_AR | m.F_LAST)
        n = self.nak_for(q)
        st = self.recv_statuses(q, 2)
        record("MRC-PLC-015 MRC-ERR-005",
               n is not None and (n["code"], n["detail"]) == (m.NAK_REMOTE_OP, 1) and
               st == [4, 5],
               "SEND into a receive with a bad L_Key: NAK %s, receive completions %s "
               "(want LOC_PROT_ERR 4, then FLUSH 5)" %
               ((n and (n["code"], n["detail"])), st))
        q = self.new_qp()
        self.send(q, m.T_SEND, self.sx(q, 5000000, 0, 16), b"s" * 16)
        n = self.nak_for(q)
        record("MRC-ORD-014", n is not None and n["code"] == m.NAK_SEQUENCE,
               "SSN far beyond the window: NAK %s" % ((n and n["code"]),))
        q = self.new_qp()
        self.send(q, m.T_SEND, self.sx(q, 0, 0, 16, dqpn=0xFFFFF0), b"s" * 16)
        n = self.replies(lambda r: r["type"] == m.T_NAK and r["req_qpn"] == q["mine"], 2)
        record("MRC-CONN-033", n is not None and n["code"] == m.NAK_STREAM_CLOSED,
               "SEND to a QP that does not exist: NAK %s" % ((n and n["code"]),))

    def t_windows(self):
        q = self.new_qp()
        c0 = self.counters("drop_out_of_window")
        # PSN 300 beyond the PLW: outside the 256-packet window.
        self.p.drain(0.5)
        bad = (self.p.plw + 300) & 0xFFFFFFFF
        pkt, _ = self.p.seq_pkt(m.T_SEND, self.sx(q, 0, 0, 16), b"o" * 16, psn=bad)
        self.p.send_raw(pkt)
        got = [r for r in self.p.drain(0.7) if
               (r["type"] == m.T_ACK and r.get("cum_psn") is not None and
                not r["ack_flags"] & 0x80 and m.sacked(r, bad)) or
               (r["type"] == m.T_NAK and r["resp_qpn"] == q["qpn"])]
        record("MRC-HDR-018 MRC-PATH-014", not got,
               "PSN beyond PLW + 256 acknowledged or NAKed")
        c1 = self.counters("drop_out_of_window")
        record("MRC-HDR-017 MRC-PATH-013 MRC-CNT-003",
               c1["drop_out_of_window"] == c0["drop_out_of_window"] + 1,
               "drop_out_of_window %d -> %d" % (c0["drop_out_of_window"], c1["drop_out_of_window"]))
        wcs = self.a("poll", qpn=q["qpn"])["wcs"]
        record("MRC-ENC-025", not wcs, "out-of-window packet completed %s" % wcs)

    def t_malformed(self):
        q = self.new_qp()
        good, _ = self.p.seq_pkt(m.T_SEND, self.sx(q, 0, 0, 16), b"m" * 16,
                                 psn=self.p.psn)
        body = good[:-4]
        cases = [
            ("MRC-ENC-018", "drop_bad_crc", body + b"\0\0\0\0"),
            ("MRC-HDR-007", "drop_bad_version", m.seal(bytes([0x20]) + body[1:])),
            ("MRC-ENC-015", "drop_bad_header", good[:-1]),
            ("MRC-HDR-011", "drop_bad_header", m.seal(body[:1] + b"\x0c" + body[2:])),
            ("MRC-HDR-016", "drop_bad_header", m.seal(body[:4] + b"\x0f" + body[5:6] +
                                                        struct.pack(">H", 20) + body[8:])),
            ("MRC-HDR-012", "drop_bad_header",
             m.seal(body[:6] + struct.pack(">H", 4) + body[8:] + b"pppp")
             if False else m.packet(m.T_READ_REQ, self.sx(q, 0, 0, 16) + m.rx(q["va"], q["rkey"]),
                                    b"pppp", **self.p.hdr_kw(psn=self.p.psn, plw=self.p.plw))),
            ("MRC-SEC-004 MRC-SEC-005", "drop_bad_token",
             m.seal(body[:24] + struct.pack(">Q", self.p.peer_token ^ 1) + body[32:])),
            ("MRC-HDR-017", "drop_no_conn",
             m.seal(body[:8] + struct.pack(">I", self.p.peer_cid ^ 0x5555) + body[12:])),
        ]
        for n, (ids, counter, pkt) in enumerate(cases):
            self.p.drain(0.3)
            c0 = self.counters(counter)
            self.p.send_raw(pkt)
            got = [r for r in self.p.drain(0.7) if r["type"] in
                   (m.T_ACK, m.T_NAK, m.T_RESET, m.T_CONNECT_ACK)]
            c1 = self.counters(counter)
            d = c1[counter] - c0[counter]
            record(ids + " MRC-CNT-003", d == 1, "%s moved by %d" % (counter, d))
            resets = [r for r in got if r["type"] == m.T_RESET]
            others = [r for r in got if r["type"] != m.T_RESET]
            record("MRC-HDR-018 MRC-SEC-005" if counter != "drop_no_conn" else "MRC-HDR-018",
                   not others, "%s: answered with %s" % (counter, [hex(r["type"]) for r in others]))
            if n < 5:   # failed steps 1 to 5 of spec 4.7: never a RESET
                record("MRC-CONN-048 MRC-ENC-018", not resets, "%s: answered with RESET" % counter)
            elif counter == "drop_no_conn" and resets:
                r = resets[0]
                record("MRC-CONN-045", r["dcid"] == self.p.cid and r["scid"] == 0 and
                       r["token"] == self.p.peer_token,
                       "stateless RESET DCID %#x SCID %#x Token %#x" %
                       (r["dcid"], r["scid"], r["token"]))
        wcs = self.a("poll", qpn=q["qpn"])["wcs"]
        record("MRC-ENC-025", not wcs, "malformed packets completed %s" % wcs)
        # The same PSN, well-formed, is still new: nothing above consumed it.
        psn = self.p.send_seq(m.T_SEND, self.sx(q, 0, 0, 16), b"m" * 16)
        record("MRC-ENC-025", self.ack_of(psn) is not None,
               "good packet after the malformed ones not acknowledged")

    def t_spoof(self):
        """Wrong source address or port: identified by DCID and Token only."""
        q = self.new_qp()
        spoof = m.spoofed(self.local)
        psn = self.p.send_seq(m.T_SEND, self.sx(q, 0, 0, 16), b"1" * 16)
        need(self.ack_of(psn), "no ACK")
        pkt, _ = self.p.seq_pkt(m.T_SEND, self.sx(q, 1, 1, 16), b"2" * 16)
        self.p.send_raw(pkt, sport=0xC000 + 7)
        a = self.ack_of(_, 2)
        record("MRC-CONN-024 MRC-CONN-023 MRC-PATH-008", a is not None,
               "packet of the connection from another UDP source port ignored")
        if a:
            record("MRC-ENC-011", a["sport"] == 0xC000 + 7, "ACK to port %d" % a["sport"])
        wcs = self.a("poll", qpn=q["qpn"], wait=1.0)["wcs"]
        record("MRC-CONN-024", len([w for w in wcs if w["cq"] == "rcq"]) == 2,
               "completions %s" % wcs)
        del spoof


    def t_second_connect(self):
        """A CONNECT from the same address with another SCID is another
        connection (spec 6.3.2): the existing one must keep working."""
        q = self.new_qp()
        psn = self.p.send_seq(m.T_SEND, self.sx(q, 0, 0, 16), b"a" * 16)
        need(self.ack_of(psn), "no ACK before the second CONNECT")
        other = Peer(self.local, self.target, sport=self.p.sport ^ 0x11,
                     listen=False)      # self.p receives for both
        other.epoch = self.p.epoch
        self.p.send_raw(other.connect_pkt())
        a = self.replies(lambda r: r["type"] == m.T_CONNECT_ACK and
                         r["dcid"] == other.cid, 3)
        record("MRC-CONN-015", a is not None and a["scid"] != self.p.peer_cid,
               "second CONNECT (new SCID): %s" %
               ("no CONNECT_ACK" if a is None else "CONNECT_ACK with CID %#x, the "
                "existing connection's is %#x" % (a["scid"], self.p.peer_cid)))
        psn = self.p.send_seq(m.T_SEND, self.sx(q, 1, 1, 16), b"b" * 16)
        record("MRC-CONN-015 MRC-CONN-004", self.ack_of(psn) is not None,
               "the existing connection stopped answering after a CONNECT with "
               "another SCID from the same address")
        need(a, "no CONNECT_ACK to the second CONNECT")
        # The second connection works on its own (MRC-CONN-002): its
        # packets are acknowledged on it.  A new QP towards us attaches at
        # RTR to one of the two (MRC-CONN-031): its stream packets on the
        # second are delivered if that is the one, else refused with NAK
        # STREAM_CLOSED (MRC-CONN-033), never placed.
        other.peer_cid, other.peer_token = a["scid"], a["cx_token"]
        other.path_id = 0
        q2 = self.new_qp()
        data = bytes(range(48))
        psn2 = other.send_seq(m.T_SEND, self.sx(q2, 0, 0, len(data)), data)
        got2 = [r for r in self.p.drain(1.0) if r["dcid"] == other.cid]
        a2 = acks(got2, psn2)
        n2 = [r["code"] for r in got2 if r["type"] == m.T_NAK]
        w = self.wcs(q2, 1.0, "rcq")
        buf = bytes.fromhex(self.a("read_recv", qpn=q2["qpn"], off=0, len=48)["hex"])
        delivered = [x["status"] for x in w] == [0] and buf == data and not n2
        refused = not w and buf == b"\xa5" * 48 and n2 == [m.NAK_STREAM_CLOSED]
        psn = self.p.send_seq(m.T_SEND, self.sx(q, 2, 2, 16), b"c" * 16)
        a1 = self.ack_of(psn)
        record("MRC-CONN-002", a2 and a2[0]["scid"] == a["scid"] and
               (delivered or refused) and a1 is not None,
               "a SEND on the second connection: path ACK %s, NAKs %s, receive completions "
               "%s, buffer %s; the first connection: ACK %s" %
               (bool(a2), n2, w, "the data" if buf == data else
                "untouched" if buf == b"\xa5" * 48 else "other bytes", a1 is not None))

    def t_limits(self):
        """Resource limits (spec 16.4, 6.4).  At max_conns_per_peer (default
        4) a CONNECT from our address makes room by freeing the oldest
        half-open connection from it (MRC-CONN-056, counted in
        conn_half_open_evicted); once every connection from it is
        confirmed, a CONNECT is refused with RESET RESOURCE, addressed with
        its CX's token, with a Retry After, and counted in conn_rejected.
        Connections accepted but never used are half-open and freed,
        silently, after half_open_timeout_ms (default 1000 ms).  Ours keeps
        working throughout."""
        # A slow target may take longer than the default 1 s to answer
        # five CONNECTs and our counter reads: half-open connections then
        # expire before the checks look at them.
        with self.tuned(half_open_timeout_ms=int(1000 * self.slow)) as ok:
            self.limits(self.slow if ok else 1.0)

    def limits(self, hot):
        """t_limits with half_open_timeout_ms hot seconds."""
        q = self.new_qp()
        names = ("conn_rejected", "conn_half_open", "conn_half_open_expired",
                 "conn_half_open_evicted")
        self.p.drain(1.2)   # earlier tests' unused connections expire

        def other(i):
            o = Peer(self.local, self.target, sport=self.p.sport ^ (0x40 + i),
                     listen=False)
            o.epoch = self.p.epoch
            return o

        def answers(os_, wait=0.3, most=3.0):
            """CONNECT_ACKs and RESETs to the connections os_, by index:
            what comes within wait seconds, and on until each has an
            answer or most seconds passed (a slow target, e.g. a debug
            kernel beside another VM, answers late)."""
            acks, resets = {}, {}
            end = time.monotonic() + most
            while True:
                for r in self.p.drain(wait):
                    for i, o in enumerate(os_):
                        if r["dcid"] == o.cid and r["type"] == m.T_CONNECT_ACK:
                            acks[i] = r
                            o.peer_cid, o.peer_token = r["scid"], r["cx_token"]
                        elif r["dcid"] == o.cid and r["type"] == m.T_RESET:
                            resets[i] = r
                if len(set(acks) | set(resets)) >= len(os_) or time.monotonic() >= end:
                    return acks, resets

        def confirm(o):
            """A PROBE with the target's token confirms o; answered?"""
            pid = random.randrange(1 << 32)
            pbx = struct.pack(">IB3xQ", pid, 0, 0)
            self.p.send_raw(m.packet(m.T_PROBE, pbx,
                                     **o.hdr_kw(path_id=0, psn=0, plw=0)))
            return self.p.recv(lambda r: r["type"] == m.T_PROBE_REPLY and
                               r["dcid"] == o.cid and
                               struct.unpack(">I", r["raw"][32:36])[0] == pid,
                               2.0)

        # 1. Five CONNECTs, one after the other (more than the free slots):
        # all are accepted, the oldest half-open ones freed to make room.
        c0 = self.counters(*names)
        others = [other(i) for i in range(5)]
        for o in others:
            self.p.send_raw(o.connect_pkt())
            time.sleep(0.05)
        acks, resets = answers(others)
        c1 = self.counters(*names)
        ev = c1["conn_half_open_evicted"] - c0["conn_half_open_evicted"]
        newest = confirm(others[-1]) if 4 in acks else None
        record("MRC-CONN-056",
               sorted(acks) == list(range(5)) and not resets and ev >= 1 and
               c1["conn_rejected"] == c0["conn_rejected"] and newest,
               "5 CONNECTs from our address at max_conns_per_peer: accepted %s, "
               "refused %s, conn_half_open_evicted +%d, conn_rejected +%d; the "
               "newest confirmed by a PROBE: %s" %
               (sorted(acks), sorted(resets), ev,
                c1["conn_rejected"] - c0["conn_rejected"], newest is not None))
        # 2. Every slot confirmed: the next CONNECT is refused.
        alive = [o for o in others[ev:] if o.peer_cid and confirm(o)]
        extra = other(5)
        self.p.send_raw(extra.connect_pkt())
        acks, resets = answers([extra])
        c2 = self.counters(*names)
        shape = [(r["reason"], r["scid"], r["token"] == extra.token,
                  r["retry_after"] > 0) for r in resets.values()]
        record("MRC-SEC-007 MRC-CONN-045",
               not acks and shape == [(4, 0, True, True)] and
               c2["conn_rejected"] - c1["conn_rejected"] == 1 and
               c2["conn_half_open_evicted"] == c1["conn_half_open_evicted"],
               "%d of our connections confirmed, one more CONNECT: accepted %s, "
               "RESET (reason, SCID, CX token, Retry After > 0) %s, "
               "conn_rejected +%d" % (len(alive), bool(acks), shape,
                                       c2["conn_rejected"] - c1["conn_rejected"]))
        # 3. Those go (RESET with the target's token); two CONNECTs left
        # unused are freed after half_open_timeout_ms, nothing sent to them.
        for o in others:
            if o.peer_cid:
                self.p.send_raw(m.packet(m.T_RESET, m.rsx(1, o.epoch),
                                         **o.hdr_kw(scid=0)))
        self.p.drain(0.3)
        c3 = self.counters(*names)
        unused = [other(6 + i) for i in range(2)]
        for o in unused:
            self.p.send_raw(o.connect_pkt())
        acks, _ = answers(unused)
        c4 = self.counters(*names)
        record("MRC-CONN-028", sorted(acks) == [0, 1] and
               c4["conn_half_open"] - c3["conn_half_open"] == 2,
               "2 CONNECTs: accepted %s, conn_half_open +%d" %
               (sorted(acks), c4["conn_half_open"] - c3["conn_half_open"]))
        cids = {o.cid for o in unused}
        sent = [r for r in self.p.drain(hot + 0.6) if r["dcid"] in cids]
        c5 = self.counters(*names)
        record("MRC-CONN-028",
               c5["conn_half_open"] == c3["conn_half_open"] and
               c5["conn_half_open_expired"] - c4["conn_half_open_expired"] == 2 and
               not sent,
               "%.1f s later: conn_half_open %d (was %d), conn_half_open_expired +%d, "
               "%d packets to the half-open ones" %
               (hot + 0.6, c5["conn_half_open"], c3["conn_half_open"],
                c5["conn_half_open_expired"] - c4["conn_half_open_expired"],
                len(sent)))
        psn = self.p.send_seq(m.T_SEND, self.sx(q, 0, 0, 16), b"L" * 16)
        record("MRC-CONN-028", self.ack_of(psn) is not None,
               "our own connection stopped answering")

    def t_bad_cx(self):
        """CONNECTs with invalid CX fields (spec 5.7): dropped and counted
        in drop_bad_header, no CONNECT_ACK (a RESET PROTOCOL may answer)."""
        cases = [("version range without 1", dict(vmin=2, vmax=2)),
                 ("Max Seg Shift 5", dict(maxsh=5)),
                 ("Seg Win Shift 5", dict(seg_win_shift=5)),
                 ("Seg Win Shift 17", dict(seg_win_shift=17)),
                 ("Rx Message Slots 1", dict(rx_msg_slots=1)),
                 ("Rx Message Slots 2^21", dict(rx_msg_slots=1 << 21))]
        for what, kw in cases:
            other = Peer(self.local, self.target, sport=self.p.sport ^ 0x22,
                         listen=False)
            self.p.drain(0.2)
            c0 = self.counters("drop_bad_header")
            self.p.send_raw(other.connect_pkt(**kw))
            got = [r for r in self.p.drain(0.7) if r["dcid"] == other.cid]
            c1 = self.counters("drop_bad_header")
            acks = [r for r in got if r["type"] == m.T_CONNECT_ACK]
            resets = [r for r in got if r["type"] == m.T_RESET]
            d = c1["drop_bad_header"] - c0["drop_bad_header"]
            record("MRC-HDR-017", not acks and d == 1,
                   "CONNECT with %s: %s, drop_bad_header +%d" %
                   (what, "accepted" if acks else "not accepted", d))
            if resets:
                record("MRC-CONN-045", resets[0]["reason"] in (3, 5) and
                       resets[0]["token"] == other.token,
                       "RESET reason %d, Token %s the CX's, for %s" %
                       (resets[0]["reason"], "=" if resets[0]["token"] == other.token
                        else "!=", what))

    def t_auth_connect(self):
        """A CONNECT that offers authentication (AUTH, with or without a
        MAC) to a target without authentication mode: a stateless RESET
        AUTH, no connection, drop_auth (MRC-CONN-027)."""
        if self.tunable("auth"):
            return      # authentication mode on: a check for 16.5
        for what, mac in (("with a MAC", True), ("without a MAC", False)):
            other = Peer(self.local, self.target, sport=self.p.sport ^ 0x33, listen=False)
            pkt = other.connect_pkt(caps=m.CAP_AUTH | m.CAP_ATOMIC)
            if mac:
                body = bytearray(pkt[:-4])
                body[2:4] = struct.pack(">H", struct.unpack(">H", body[2:4])[0] | m.F_MAC)
                pkt = m.seal(bytes(body) + os.urandom(16))
            self.p.drain(0.2)
            c0 = self.counters("drop_auth", "conn_active")
            self.p.send_raw(pkt, sport=other.sport)
            got = [r for r in self.p.drain(0.7) if r["dcid"] == other.cid]
            c1 = self.counters("drop_auth", "conn_active")
            rs = [(r["type"], r.get("reason"), r["scid"], r["token"] == other.token,
                   r["flags"] & m.F_MAC) for r in got]
            record("MRC-CONN-027", rs == [(m.T_RESET, 7, 0, True, 0)] and
                   c1["drop_auth"] == c0["drop_auth"] + 1 and
                   c1["conn_active"] == c0["conn_active"],
                   "CONNECT with AUTH %s: answered (type, reason, SCID, CX token, MAC) %s; "
                   "drop_auth +%d, conn_active +%d" %
                   (what, rs, c1["drop_auth"] - c0["drop_auth"],
                    c1["conn_active"] - c0["conn_active"]))
            if got:
                self.check_reply_addr(got[0], other.sport, "MRC-CONN-045")

    def t_whole_run(self):
        """Rules every packet the target sent during the run must follow."""
        mine = [r for r in self.p.seen if r["dcid"] == self.p.cid]
        for pp in [self.p] + list(self.peers.values()):
            for r in pp.seen:
                self.check_envelope(r)
        seqs = sorted(r["psn"] for r in mine if r["type"] in (m.T_ACK, m.T_NAK, m.T_PROBE_REPLY))
        # One ACK Sequence per connection, +1 per ACK, NAK and PROBE_REPLY
        # (serial numbers: unwrap around the first one).
        rel = sorted(m.diff(x, seqs[0]) for x in seqs) if seqs else []
        record("MRC-ACK-001 MRC-HDR-001", rel == list(range(rel[0], rel[0] + len(rel)))
               if rel else False, "ACK Sequence values not consecutive: %d values over %s" %
               (len(rel), rel and (rel[0], rel[-1])))
        hint = self.p.accept["caps"] & m.CAP_HINT

        def hint_bad(h):
            if not hint:
                return h != 0
            return m.hint_decode(h) is None or m.hint_decode(h) > 400000
        bad = [r["rate_hint"] for r in mine if r["type"] in (m.T_ACK, m.T_PROBE_REPLY) and
               "rate_hint" in r and hint_bad(r["rate_hint"])]
        record("MRC-ACK-004", not bad, "Rate Hints %s (HINT capability %s)" %
               ([hex(x) for x in bad[:5]], bool(hint)))
        css = 256 << min(self.p.accept["max_seg_shift"], 2)
        big = [len(r["raw"]) for r in mine if r["type"] == m.T_ACK and
               (r["num_sr"] > 58 or len(r["raw"]) > 72 + css + 4)]
        record("MRC-HDR-015", not big, "ACKs larger than a data packet: %s" % big)
        if self.p.v6:
            # One Flow Label per entropy (UDP source port), all of them used.
            flows = {}
            for pp in [self.p] + list(self.peers.values()):
                for r in pp.seen:
                    flows.setdefault(r["sport"], set()).add(r["flow"])
            bad = {sp: f for sp, f in flows.items() if len(f) != 1 or 0 in f}
            labels = {f for fs in flows.values() for f in fs}
            record("MRC-ENC-010", flows and not bad and len(labels) > len(flows) // 2,
                   "Flow Labels per source port %s; %d labels for %d ports" %
                   (sorted(bad.items())[:4], len(labels), len(flows)))
        # Every target QP towards us used the connection we opened.
        cons = [r for r in self.p.seen if r["type"] == m.T_CONNECT]
        record("MRC-CONN-001", not cons and self.nq > 10,
               "%d QPs towards us; the target sent %d CONNECTs to our address" %
               (self.nq, len(cons)))
        paths, sent, errs = {}, set(), []
        for r in mine:
            t = r["type"]
            if not (0x01 <= t <= 0x1F or t == m.T_PROBE):
                continue
            if r["path_id"] >= OUR_MAX_RX_PATHS:
                errs.append("Path ID %d, we allow %d" % (r["path_id"], OUR_MAX_RX_PATHS))
            if not 0 <= m.diff(r["psn"], r["plw"]) < 256:
                errs.append("path %d PSN %d PLW %d" % (r["path_id"], r["psn"], r["plw"]))
            last = paths.get(r["path_id"])
            if last is not None and m.diff(r["plw"], last) < 0:
                errs.append("path %d PLW moved back %d -> %d" % (r["path_id"], last, r["plw"]))
            paths[r["path_id"]] = r["plw"]
            if t != m.T_PROBE:
                if (r["path_id"], r["psn"]) in sent:
                    errs.append("path %d PSN %d sent twice" % (r["path_id"], r["psn"]))
                sent.add((r["path_id"], r["psn"]))
        record("MRC-PATH-002 MRC-CONN-026", not any("allow" in e for e in errs), str(errs[:3]))
        record("MRC-PATH-011 MRC-PATH-012 MRC-PATH-009", not [e for e in errs if "allow" not in e],
               str(errs[:3]))
        need(sent, "the target sent no sequenced packets")
        print("# target used Path IDs %s towards us" % sorted(paths))


def load_ids():
    ids = []
    for line in open(REQS):
        mm = re.match(r"\| (MRC-[A-Z]+-\d+) \|", line)
        if mm:
            ids.append(mm.group(1))
    return ids


def main(argv):
    local, target = argv[1], argv[2]
    aport = int(argv[3]) if len(argv) > 3 else 4794
    s = Suite(local, target, aport, argv[4:])
    tests = [s.t_connect, s.t_wrap, s.t_send, s.t_write_ooo, s.t_access, s.t_read,
             s.t_atomic, s.t_rnr_length_seq, s.t_windows, s.t_malformed, s.t_udp_checksum,
             s.t_ack_sack, s.t_ack_ce, s.t_ack_coalesce, s.t_plw, s.t_multipath_rx,
             s.t_probe, s.t_sync, s.t_sr_drain, s.t_not_ready, s.t_nak_fields, s.t_order, s.t_consistency,
             s.t_seg_window, s.t_write_imm, s.t_zero_len, s.t_requester,
             s.t_req_not_ready,
             s.t_req_stream_close, s.t_req_stream_close_stale,
             s.t_rtr_ssn, s.t_attach_rules, s.t_tombstone, s.t_foreign_pd,
             s.t_read_contexts, s.t_req_rd_limit, s.t_req_credit,
             s.t_datagram_rx, s.t_datagram_tx,
             s.t_spoof, s.t_second_connect, s.t_limits, s.t_bad_cx, s.t_auth_connect,
             s.t_prehandshake, s.t_unknown_prehandshake, s.t_rate_hint, s.t_rate_share,
             s.t_init_fail, s.t_init_connect_required, s.t_init_connect, s.t_init_paths,
             s.t_init_simultaneous, s.t_init_seg_window, s.t_cack_responder,
             s.t_cack_requester, s.t_whole_run]
    # MROCE_COMP_ONLY="t_a t_b": only those groups (a developer's rerun).
    only = os.environ.get("MROCE_COMP_ONLY", "").split()
    if only:
        tests = [t for t in tests if t.__name__ in only]
    crashed = run_groups(tests)
    ids = load_ids()
    n = {"pass": 0, "fail": 0, "untested": 0}
    for i in ids:
        st, note = results.get(i, ("untested", ""))
        n[st] += 1
        print("%-14s %s%s" % (i, st, ("  (%s)" % note) if note else ""))
    extra = sorted(set(results) - set(ids))
    for i in extra:
        print("%-14s %s (not in requirements.md)" % (i, results[i][0]))
    print("summary: %d requirements: %d pass, %d fail, %d untested; %d test groups aborted"
          % (len(ids), n["pass"], n["fail"], n["untested"], len(crashed)))
    for c in crashed:
        print("aborted: %s" % c)
    return 1 if n["fail"] or crashed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
