# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Hostile-wire checks of the connection layer (hostile.py): off-path
CONNECTs, epochs, reflection.

The off-path attacker of these checks sends from addresses of the extra
list (routed to this host, unknown to the target) and never uses what the
target sends there: it knows only what it chose itself (SCID, token,
epoch) and what is public (addresses, the peer's Device GUID)."""
import math
import random
import struct
import time

import mrpkt as m
from peer import Peer
from verdict import record as _record


def record(fid, ok, note):
    """The finding's verdict (a failure sticks), and each check's own line
    in the log, so that every check of a finding shows."""
    print("# %s %s: %s" % (fid, "pass" if ok else "fail", note))
    _record(fid, ok, note)


def rnd_cid():
    return random.randrange(1, 0xFFFFFFFF)


def rnd_token():
    return random.randrange(1, 1 << 64)


class ConnHostile:
    TESTS = ["h_prehandshake_confirm", "h_prehandshake_attach", "h_halfopen_pin",
             "h_epoch_teardown", "h_sync_reflection", "h_connect_ack_resend",
             "h_nak_rate"]

    # Helpers -----------------------------------------------------------
    def spoof_connect(self, src, scid, token, epoch=None, guid=None):
        """A CONNECT from src (spoofed) with the attacker's own SCID and
        token."""
        kw = dict(epoch=epoch or random.randrange(1, 1 << 64),
                  addrs=[m.addr16(src)], max_rx_paths=8)
        if guid is not None:
            kw["guid"] = guid
        self.p.send_raw(m.packet(m.T_CONNECT, m.cx(token, **kw), scid=scid),
                        src=src, sport=random.randrange(0xC000, 0x10000))

    def spoof_prehs(self, src, ptype, ext, scid, token, payload=b"",
                    flags=0, psn=None):
        """A packet in the pre-handshake form (DCID 0) from src."""
        psn = random.randrange(1 << 32) if psn is None else psn
        self.p.send_raw(m.packet(ptype, ext, payload, flags=flags, scid=scid,
                                 token=token, psn=psn, plw=psn),
                        src=src, sport=random.randrange(0xC000, 0x10000))

    def legit_peer(self, ip, guid=None):
        """A peer of ours at ip with a confirmed connection (a PROBE in the
        DCID form answered), or None."""
        pp = Peer(ip, self.target)
        pp.cx_kw = dict(max_rx_paths=8)
        if guid is not None:
            pp.cx_kw["guid"] = guid
        if not pp.connect():
            return None
        if not self.probe_of(pp):
            return None
        return pp

    @staticmethod
    def probe_of(pp, timeout=2.0):
        """pp's connection answers a PROBE (DCID form) on path 0."""
        pid = random.randrange(1 << 32)
        pbx = struct.pack(">IB3xQ", pid, 0, random.randrange(1 << 64))
        pp.send_raw(m.packet(m.T_PROBE, pbx, **pp.hdr_kw(path_id=0, psn=0, plw=0)))
        return pp.recv(lambda r: r["type"] == m.T_PROBE_REPLY and
                       r["dcid"] == pp.cid and
                       struct.unpack(">I", r["raw"][32:36])[0] == pid, timeout)

    # F02 -----------------------------------------------------------------
    def h_prehandshake_confirm(self):
        """F02: a spoofed CONNECT followed by a pre-handshake PROBE carrying
        the attacker's own token must not confirm the half-open connection:
        the PROBE is not answered, and the connection is freed after
        half_open_timeout_ms (a pre-handshake packet then gets RESET
        CONNECT_REQUIRED).  The replies go to the spoofed address, which is
        routed to us: we watch them, the attacker would not see them."""
        if not self.extra:
            record("F02", False, "no extra address to spoof from")
            return
        src = self.extra[0]
        watch = Peer(src, self.target)      # receives only
        hot = self.tunable("half_open_timeout_ms") or 1000
        c0 = self.counters("conn_half_open_expired", "drop_unconfirmed")
        scid, token = rnd_cid(), rnd_token()

        def pre_probe():
            pbx = struct.pack(">IB3xQ", random.randrange(1 << 32), 0,
                              random.randrange(1 << 64))
            self.spoof_prehs(src, m.T_PROBE, pbx, scid, token)
            return [r for r in watch.drain(0.6) if r["dcid"] == scid]

        self.spoof_connect(src, scid, token)
        time.sleep(0.2)
        first = pre_probe()
        time.sleep(hot / 1000.0 + 0.3)
        later = pre_probe()
        c1 = self.counters("conn_half_open_expired", "drop_unconfirmed")
        replied = [r for r in first if r["type"] == m.T_PROBE_REPLY]
        freed = [r for r in later if r["type"] == m.T_RESET and
                 r["reason"] == m.RST_CONNECT_REQUIRED]
        record("F02", not replied and freed,
               "spoofed CONNECT + pre-handshake PROBE: answered with %s; "
               "%d ms later a pre-handshake PROBE is answered with %s; "
               "conn_half_open_expired %+d, drop_unconfirmed %+d" %
               ([hex(r["type"]) for r in first], hot + 300,
                [(hex(r["type"]), r.get("reason")) for r in later],
                c1["conn_half_open_expired"] - c0["conn_half_open_expired"],
                c1.get("drop_unconfirmed", 0) - c0.get("drop_unconfirmed", 0)))

    def h_prehandshake_attach(self):
        """F02: a local QP towards an address from which a spoofed CONNECT
        came must not get the attacker's data: no pre-handshake SEND with
        the attacker's token is placed (local streams use only confirmed
        connections)."""
        if len(self.extra) < 2:
            record("F02", False, "no extra address to spoof from")
            return
        src = self.extra[1]
        scid, token = rnd_cid(), rnd_token()
        # Long enough a half-open life that the QP surely finds it under
        # load (the agent takes a while to make a QP under TCG).
        with self.tuned(half_open_timeout_ms=4000):
            self.spoof_connect(src, scid, token)
            time.sleep(0.2)
            q = self.new_qp(peer_ip=src, recvs=2)
            self.h_attach_inject(q, src, scid, token)

    def h_attach_inject(self, q, src, scid, token):
        """The attacker's SEND to q, in the pre-handshake form from src."""
        data = b"H" * 32
        self.spoof_prehs(src, m.T_SEND, self.sx(q, 0, 0, len(data)), scid,
                         token, data, flags=m.F_AR | m.F_LAST)
        time.sleep(0.5)
        w = [x for x in self.a("poll", qpn=q["qpn"], wait=0.5)["wcs"]
             if x["cq"] == "rcq"]
        buf = bytes.fromhex(self.a("read_recv", qpn=q["qpn"], off=0,
                                   len=len(data))["hex"])
        # Flushed receives (the unconfirmed connection expired) are fine.
        record("F02", all(x["status"] != 0 for x in w) and buf != data,
               "pre-handshake SEND with the attacker's token to a QP towards "
               "the spoofed address: receive completions %s, data %s" %
               ([x["status"] for x in w], "placed" if buf == data else "not placed"))
        try:
            self.a("destroy", qpn=q["qpn"])
        except Exception:  # noqa: BLE001
            pass

    def h_halfopen_pin(self):
        """F02: spoofed CONNECTs in an address's name, max_conns_per_peer of
        them, must not lock the real owner of the address out: its CONNECT
        is accepted (the oldest half-open connection makes room,
        conn_half_open_evicted) and its connection works."""
        if len(self.extra) < 5:
            record("F02", False, "no extra address to spoof from")
            return
        ip = self.extra[4]
        per_peer = self.tunable("max_conns_per_peer") or 4
        c0 = self.counters("conn_half_open_evicted", "conn_rejected")
        # Device GUIDs of their own: one of another peer with a new epoch
        # would start a restart check (F03) and hold the CONNECT back.
        with self.tuned(half_open_timeout_ms=10000):
            for _ in range(per_peer):
                self.spoof_connect(ip, rnd_cid(), rnd_token(),
                                   guid=random.randrange(1, 1 << 64))
                time.sleep(0.05)
            time.sleep(0.3)
            pp = self.legit_peer(ip, guid=random.randrange(1, 1 << 64))
        c1 = self.counters("conn_half_open_evicted", "conn_rejected")
        # (a target without the counter fails on pp alone)
        ev = c1.get("conn_half_open_evicted", 0) - c0.get("conn_half_open_evicted", 0)
        record("F02", pp is not None and ev > 0 and
               c1["conn_rejected"] == c0["conn_rejected"],
               "%d spoofed half-open CONNECTs from %s, then the real one: %s; "
               "conn_half_open_evicted %+d, conn_rejected %+d" %
               (per_peer, ip, "connected and answers" if pp else "locked out",
                ev, c1["conn_rejected"] - c0["conn_rejected"]))

    # F03 -----------------------------------------------------------------
    def h_epoch_teardown(self):
        """F03: a spoofed CONNECT with a new epoch and the peer's (public)
        Device GUID from the peer's address must not fail the peer's live
        connection: it still answers, conn_peer_restart does not move."""
        if len(self.extra) < 3:
            record("F03", False, "no extra address to spoof from")
            return
        ip = self.extra[2]
        pp = self.legit_peer(ip)
        if not pp:
            record("F03", False, "no confirmed connection from %s" % ip)
            return
        c0 = self.counters("conn_peer_restart", "conn_failed")
        guid = 0x0200000000000001          # mrpkt's default, public
        for _ in range(3):
            self.spoof_connect(ip, rnd_cid(), rnd_token(), guid=guid)
            time.sleep(0.1)
        time.sleep(1.0)
        alive = self.probe_of(pp) is not None
        c1 = self.counters("conn_peer_restart", "conn_failed")
        record("F03", alive and c1["conn_peer_restart"] == c0["conn_peer_restart"],
               "3 spoofed CONNECTs with new epochs: the peer's connection %s, "
               "conn_peer_restart %+d, conn_failed %+d" %
               ("answers" if alive else "is gone",
                c1["conn_peer_restart"] - c0["conn_peer_restart"],
                c1["conn_failed"] - c0["conn_failed"]))

    # F05 -----------------------------------------------------------------
    def f05_peer(self):
        """A confirmed peer of our own for the F05 checks (the suite's
        main connection may have expired half-open meanwhile)."""
        if not hasattr(self, "_f05"):
            self._f05 = (self.legit_peer(self.extra[3])
                         if len(self.extra) > 3 else None)
        return self._f05

    def h_sync_reflection(self):
        """F05: one SYNC of 64 entries naming no stream yields at most one
        NAK (no amplification towards the SYNC's source address)."""
        pp = self.f05_peer()
        if not pp:
            record("F05", False, "no confirmed connection for the SYNC")
            return
        pp.drain(0.3)
        names = ("syncs_rcvd", "nak_closed_sent", "drop_rate_limited")
        c0 = self.counters(*names)
        entries = [(random.randrange(1, 1 << 24), random.randrange(1, 1 << 24),
                    random.randrange(1 << 32)) for _ in range(64)]
        body = struct.pack(">B3x", len(entries)) + b"".join(
            struct.pack(">III", *e) for e in entries)
        pp.send_raw(m.packet(m.T_SYNC, body, **pp.hdr_kw(path_id=0, psn=0, plw=0)))
        got = [r for r in pp.drain(1.0) if r["dcid"] == pp.cid]
        naks = [r for r in got if r["type"] == m.T_NAK]
        c1 = self.counters(*names)
        record("F05", len(naks) <= 1 and c1["syncs_rcvd"] > c0["syncs_rcvd"],
               "one SYNC of 64 unknown streams (%d bytes): %d NAKs, %d packets "
               "in all (%d bytes); counters %s" %
               (len(body) + 36, len(naks), len(got),
                sum(len(r["raw"]) for r in got),
                " ".join("%s %+d" % (k, c1[k] - c0[k]) for k in names)))

    def h_connect_ack_resend(self):
        """F05: duplicate CONNECTs are answered with a CONNECT_ACK at most
        once per rto_initial_us, not once each."""
        pp = self.f05_peer()
        if not pp:
            record("F05", False, "no confirmed connection for the CONNECTs")
            return
        pp.drain(0.3)
        pkt = pp.connect_pkt()
        for _ in range(10):
            pp.send_raw(pkt)
        got = [r for r in pp.drain(0.8) if r["type"] == m.T_CONNECT_ACK and
               r["dcid"] == pp.cid]
        record("F05", 1 <= len(got) <= 2 and got[0]["scid"] == pp.peer_cid,
               "10 duplicate CONNECTs at once: %d CONNECT_ACKs (%s)" %
               (len(got), ", ".join("CID %#x" % r["scid"] for r in got)))

    def h_nak_rate(self):
        """F05: NAKs per connection are limited by their own tunable,
        nak_rate (not probe_reply_rate): 40 SYNCs, each naming one unknown
        stream (one NAK STREAM_CLOSED each), in one burst with nak_rate 5
        draw at most 5 NAKs plus 5 a second for as long as the burst and
        its replies took (a slow kernel takes seconds), the rest counted in
        drop_rate_limited; PROBEs are still answered."""
        pp = self.f05_peer()
        if not pp:
            record("F05", False, "no confirmed connection for the SENDs")
            return
        pp.drain(0.3)
        c0 = self.counters("drop_rate_limited")
        with self.tuned(nak_rate=5) as ok:
            if not ok:
                record("F05", False, "the target has no nak_rate tunable")
                return
            t0 = time.monotonic()
            for i in range(40):
                body = struct.pack(">B3xIII", 1, 0x600000 + i,
                                   random.randrange(0x700000, 0x7FFFFF), 0)
                pp.send_raw(m.packet(m.T_SYNC, body,
                                     **pp.hdr_kw(path_id=0, psn=0, plw=0)))
            got = [r for r in pp.drain(0.8) if r["dcid"] == pp.cid]
            span = time.monotonic() - t0
            probe = self.probe_of(pp) is not None
        naks = [r for r in got if r["type"] == m.T_NAK]
        c1 = self.counters("drop_rate_limited")
        limited = c1["drop_rate_limited"] - c0["drop_rate_limited"]
        most = 5 + math.ceil(5 * span) + 1     # burst, rate x time, one at the edge
        record("F05", 1 <= len(naks) <= most and limited >= 40 - most and probe,
               "40 SYNCs naming unknown streams at nak_rate 5: %d NAKs (at most %d "
               "in %.1f s), drop_rate_limited %+d; a PROBE then %s" %
               (len(naks), most, span, limited, "answered" if probe else "unanswered"))
