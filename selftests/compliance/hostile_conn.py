# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Hostile-wire checks of the connection layer (hostile.py): off-path
CONNECTs, epochs, reflection.

The off-path attacker of these checks sends from addresses of the extra
list (routed to this host, unknown to the target) and never uses what the
target sends there: it knows only what it chose itself (SCID, token,
epoch) and what is public (addresses, the peer's Device GUID)."""
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
    TESTS = ["h_prehandshake_confirm", "h_prehandshake_attach",
             "h_epoch_teardown", "h_sync_reflection", "h_connect_ack_resend"]

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

    def legit_peer(self, ip):
        """A peer of ours at ip with a confirmed connection (a PROBE in the
        DCID form answered), or None."""
        pp = Peer(ip, self.target)
        pp.cx_kw = dict(max_rx_paths=8)
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
        it stays half-open and is freed after half_open_timeout_ms."""
        if not self.extra:
            record("F02", False, "no extra address to spoof from")
            return
        src = self.extra[0]
        names = ("conn_half_open", "conn_half_open_expired")
        hot = self.tunable("half_open_timeout_ms") or 1000
        self.p.drain(hot / 1000.0 + 0.3)   # earlier half-open ones expire
        c0 = self.counters(*names)
        scid, token = rnd_cid(), rnd_token()
        self.spoof_connect(src, scid, token)
        time.sleep(0.3)
        pbx = struct.pack(">IB3xQ", random.randrange(1 << 32), 0,
                          random.randrange(1 << 64))
        self.spoof_prehs(src, m.T_PROBE, pbx, scid, token)
        time.sleep(0.3)
        c1 = self.counters(*names)
        time.sleep(hot / 1000.0 + 0.5)
        c2 = self.counters(*names)
        d1 = c1["conn_half_open"] - c0["conn_half_open"]
        dx = c2["conn_half_open_expired"] - c0["conn_half_open_expired"]
        record("F02", d1 == 1 and dx == 1,
               "spoofed CONNECT + pre-handshake PROBE: conn_half_open %+d after "
               "the PROBE (1 expected), conn_half_open_expired %+d after %d ms "
               "(1 expected)" % (d1, dx, hot))

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
        self.spoof_connect(src, scid, token)
        time.sleep(0.2)
        q = self.new_qp(peer_ip=src, recvs=2)
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
    def h_sync_reflection(self):
        """F05: one SYNC of 64 entries naming no stream yields at most one
        NAK (no amplification towards the SYNC's source address)."""
        self.p.drain(0.3)
        names = ("rx_packets", "syncs_rcvd", "nak_closed_sent",
                 "drop_rate_limited", "drop_bad_header", "drop_bad_token",
                 "drop_no_conn", "drop_bad_crc")
        c0 = self.counters(*names)
        entries = [(random.randrange(1, 1 << 24), random.randrange(1, 1 << 24),
                    random.randrange(1 << 32)) for _ in range(64)]
        body = struct.pack(">B3x", len(entries)) + b"".join(
            struct.pack(">III", *e) for e in entries)
        self.p.send_raw(m.packet(m.T_SYNC, body,
                                 **self.p.hdr_kw(path_id=0, psn=0, plw=0)))
        got = [r for r in self.p.drain(1.0) if r["dcid"] == self.p.cid]
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
        self.p.drain(0.3)
        pkt = self.p.connect_pkt()
        for _ in range(10):
            self.p.send_raw(pkt)
        got = [r for r in self.p.drain(0.8) if r["type"] == m.T_CONNECT_ACK and
               r["dcid"] == self.p.cid]
        record("F05", len(got) <= 2,
               "10 duplicate CONNECTs at once: %d CONNECT_ACKs" % len(got))
