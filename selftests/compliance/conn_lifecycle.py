# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Connection lifecycle checks (spec 6.2, 6.5.4, 6.6, 6.7): this host plays
the peer of a device on the same machine, connects with CONNECTs of its own
(no QP is needed on the target) and checks RESET, CONN_CLOSE, TOMBSTONE
and STREAM_CLOSE behaviour on the wire and in the target's counters.

    conn_lifecycle.py LOCAL_IP TARGET_IP TARGET_DEV

LOCAL_IP has no MetaRoCE device.  The target's counters and tunables are
read from sysfs (of the initial namespace, through /proc/1/root), so the
target must run in the same kernel.  Prints one line per requirement ID
(pass / fail with the reason), then a summary; exit status 1 on failure.
"""
import os
import random
import struct
import sys
import time

import mrpkt as m
from peer import Peer

results = {}


def record(ids, ok, note=""):
    for i in ids.split():
        if results.get(i, ("pass",))[0] == "fail":
            continue
        results[i] = ("pass", "") if ok else ("fail", note)


class Target:
    def __init__(self, dev):
        self.dev = dev

    def _path(self, rel):
        for root in ("/proc/1/root", ""):
            p = root + rel
            if os.path.exists(p):
                return p
        raise FileNotFoundError(rel)

    def cnt(self, name):
        with open(self._path("/sys/class/infiniband/%s/ports/1/hw_counters/%s"
                             % (self.dev, name))) as f:
            return int(f.read())

    def tunable(self, name, value=None):
        p = self._path("/sys/module/metaroce/parameters/" + name)
        if value is None:
            with open(p) as f:
                return int(f.read())
        with open(p, "w") as f:
            f.write(str(value))


def ccx(op, reason=0):
    return struct.pack(">BBBBI", op, 0, 0, 0, reason)


def cc_op(r):
    return r["raw"][32] if r["type"] == m.T_CONN_CLOSE else None


class Checks:
    def __init__(self, local, target, dev):
        self.local, self.target = local, target
        self.t = Target(dev)
        self.p = None

    def fresh(self):
        """A new connection from a new peer incarnation of ours."""
        if self.p is None:
            self.p = Peer(self.local, self.target)
        p = self.p
        p.cid = random.randrange(1, 0xFFFFFFFF)
        p.token = random.randrange(1, 1 << 64)
        p.peer_cid = p.peer_token = None
        p.drain(0.2)
        a = p.connect()
        if a:
            # A packet other than CONNECT confirms it: not half-open (6.4).
            pbx = struct.pack(">IB3xQ", random.randrange(1 << 32), 0, 0)
            p.send_raw(m.packet(m.T_PROBE, pbx, **p.hdr_kw(path_id=0, psn=p.psn,
                                                            plw=p.plw)))
            p.recv(lambda r: r["type"] == m.T_PROBE_REPLY and r["dcid"] == p.cid, 2)
        return a

    def answers(self, match, wait=0.7):
        return [r for r in self.p.drain(wait) if match(r)]

    def request_answered(self, p, wait=0.7):
        """Send CONN_CLOSE REQUEST on p's connection; the op answered."""
        p.drain(0.2)
        p.send_raw(m.packet(m.T_CONN_CLOSE, ccx(1), **p.hdr_kw(path_id=0)))
        got = self.answers(lambda r: r["type"] == m.T_CONN_CLOSE and
                           r["dcid"] == p.cid, wait)
        return cc_op(got[0]) if got else None

    # RESET ------------------------------------------------------------------
    def t_reset_validation(self):
        a = self.fresh()
        record("MRC-CONN-047", a is not None, "no CONNECT_ACK")
        if not a:
            return
        p, t = self.p, self.t
        bad, rr = t.cnt("drop_bad_token"), t.cnt("resets_rcvd")
        p.send_raw(m.packet(m.T_RESET, m.rsx(1, p.epoch),
                            **p.hdr_kw(token=p.peer_token ^ 0x10, scid=0)))
        time.sleep(0.3)
        record("MRC-CONN-047", t.cnt("drop_bad_token") == bad + 1 and
               t.cnt("resets_rcvd") == rr,
               "RESET with a wrong token: drop_bad_token +%d resets_rcvd +%d" %
               (t.cnt("drop_bad_token") - bad, t.cnt("resets_rcvd") - rr))
        # A wrong-token RESET changes nothing: the connection still answers
        # (a REQUEST is answered, not dropped), and is then closed by it.
        op = self.request_answered(p)
        record("MRC-CONN-047 MRC-CONN-041", op == 2,
               "after a bad RESET, CONN_CLOSE REQUEST answered with %s" % op)

        # Valid: the token we put in our packets (the target's own), SCID 0.
        self.fresh()
        rr, nc = t.cnt("resets_rcvd"), t.cnt("drop_no_conn")
        p.send_raw(m.packet(m.T_RESET, m.rsx(6, p.epoch),
                            **p.hdr_kw(scid=0)))
        time.sleep(0.3)
        record("MRC-CONN-047 MRC-CNT-003", t.cnt("resets_rcvd") == rr + 1,
               "valid RESET: resets_rcvd +%d" % (t.cnt("resets_rcvd") - rr))
        # Its CID is now a tombstone: silence, counted (C17, MRC-CONN-009).
        op = self.request_answered(p)
        resets = self.answers(lambda r: r["type"] == m.T_RESET, 0.3)
        record("MRC-CONN-009 MRC-CONN-043 MRC-CONN-008",
               op is None and not resets and
               t.cnt("drop_no_conn") > nc,
               "packet to a reset connection: answer %s, RESETs %d, "
               "drop_no_conn +%d" % (op, len(resets),
                                     t.cnt("drop_no_conn") - nc))

        # Valid: the token the target gave us (the one it puts in its
        # packets to us), SCID our CID.
        self.fresh()
        rr = t.cnt("resets_rcvd")
        p.send_raw(m.packet(m.T_RESET, m.rsx(3, p.epoch),
                            **p.hdr_kw(token=p.token)))
        time.sleep(0.3)
        record("MRC-CONN-047", t.cnt("resets_rcvd") == rr + 1,
               "RESET with the target's peer token: resets_rcvd +%d" %
               (t.cnt("resets_rcvd") - rr))

    def t_stateless(self):
        p, t = self.p or Peer(self.local, self.target), self.t
        self.p = p
        p.drain(0.2)
        dcid, scid, tok = (random.randrange(1, 0xFFFFFFFF) for _ in range(3))
        sport = 0xC000 + random.randrange(0x3FFF)
        rs = t.cnt("resets_sent")
        p.send_raw(m.packet(m.T_CONN_CLOSE, ccx(1), dcid=dcid, scid=scid,
                            token=tok), sport=sport)
        got = self.answers(lambda r: r["type"] == m.T_RESET)
        ok = (len(got) == 1 and got[0]["dcid"] == scid and
              got[0]["scid"] == 0 and got[0]["token"] == tok and
              got[0]["reason"] == 1 and got[0]["epoch"] != 0 and
              got[0]["sport"] == sport and got[0]["dport"] == m.UDP_PORT and
              got[0]["hdr_len"] == 48 and got[0]["payload_len"] == 0)
        record("MRC-CONN-045", ok and t.cnt("resets_sent") == rs + 1,
               "stateless RESET: %s" % [(hex(r["dcid"]), r["scid"],
                                        hex(r["token"]), r.get("reason"),
                                        r["sport"]) for r in got])
        # Never to a RESET, nor to SCID 0 (MRC-CONN-048).
        p.send_raw(m.packet(m.T_RESET, m.rsx(1), dcid=dcid ^ 1, scid=scid ^ 1,
                            token=tok))
        p.send_raw(m.packet(m.T_CONN_CLOSE, ccx(1), dcid=dcid ^ 2, scid=0,
                            token=tok))
        got = self.answers(lambda r: r["type"] == m.T_RESET)
        record("MRC-CONN-048", not got,
               "answered a RESET or SCID 0 with %d RESETs" % len(got))
        # One per second per (peer address, DCID) (MRC-CONN-049).
        scid = random.randrange(1, 0xFFFFFFFF)
        for _ in range(5):
            p.send_raw(m.packet(m.T_CONN_CLOSE, ccx(1), dcid=dcid ^ 4,
                                scid=scid, token=tok))
        got = self.answers(lambda r: r["type"] == m.T_RESET)
        record("MRC-CONN-049", len(got) == 1,
               "5 packets for one DCID within a second: %d RESETs" % len(got))
        # At most reset_rate_limit per second per device.
        old = t.tunable("reset_rate_limit")
        t.tunable("reset_rate_limit", 10)
        try:
            time.sleep(1.1)
            lim = t.cnt("drop_rate_limited")
            t0 = time.monotonic()
            for i in range(40):
                p.send_raw(m.packet(m.T_CONN_CLOSE, ccx(1), dcid=dcid ^ 8,
                                    scid=random.randrange(1, 0xFFFFFFFF),
                                    token=tok))
            dt = time.monotonic() - t0
            got = self.answers(lambda r: r["type"] == m.T_RESET, 0.5)
            record("MRC-CONN-049", len(got) <= (20 if dt < 1 else 40) and
                   len(got) >= 10 and t.cnt("drop_rate_limited") > lim,
                   "40 packets in %.2fs at limit 10/s: %d RESETs, "
                   "drop_rate_limited +%d" % (dt, len(got),
                                              t.cnt("drop_rate_limited") - lim))
        finally:
            t.tunable("reset_rate_limit", old)

    # CONN_CLOSE and idle reclaim ----------------------------------------
    def t_conn_close(self):
        a = self.fresh()
        if not a:
            record("MRC-CONN-041", False, "no CONNECT_ACK")
            return
        p, t = self.p, self.t
        closed = t.cnt("conn_closed")
        op = self.request_answered(p)
        record("MRC-CONN-041", op == 2 and t.cnt("conn_closed") == closed + 1,
               "REQUEST on an idle connection answered %s, conn_closed +%d" %
               (op, t.cnt("conn_closed") - closed))
        op = self.request_answered(p)
        record("MRC-CONN-043", op is None, "tombstone answered %s" % op)
        # Malformed CONN_CLOSE: dropped, counted.
        self.fresh()
        bh = t.cnt("drop_bad_header")
        p.send_raw(m.packet(m.T_CONN_CLOSE, ccx(7), **p.hdr_kw(path_id=0)))
        got = self.answers(lambda r: r["type"] == m.T_CONN_CLOSE)
        record("MRC-HDR-017", not got and t.cnt("drop_bad_header") == bh + 1,
               "CONN_CLOSE Op 7: answers %d, drop_bad_header +%d" %
               (len(got), t.cnt("drop_bad_header") - bh))
        self.request_answered(p)    # closed: at most 4 per peer address

    def t_idle(self):
        t = self.t
        old = t.tunable("conn_idle_timeout_s")
        rto = t.tunable("rto_initial_us")
        t.tunable("conn_idle_timeout_s", 1)
        # REQUESTs are resent after the largest RTO: leave us time to answer.
        t.tunable("rto_initial_us", 200000)
        try:
            self.fresh()
            p = self.p
            t0 = time.monotonic()
            req = p.recv(lambda r: r["type"] == m.T_CONN_CLOSE and
                         r["dcid"] == p.cid, 3.5)
            ok = req is not None and cc_op(req) == 1
            record("MRC-CONN-040", ok, "no CONN_CLOSE REQUEST after the idle "
                   "timeout (1 s)")
            if not ok:
                return
            record("MRC-CONN-040", time.monotonic() - t0 > 0.5,
                   "REQUEST %.2fs after connecting" % (time.monotonic() - t0))
            # REFUSE: the target goes back to ESTABLISHED, asks again later.
            p.send_raw(m.packet(m.T_CONN_CLOSE, ccx(3), **p.hdr_kw()))
            p.drain(0.6)
            req = p.recv(lambda r: r["type"] == m.T_CONN_CLOSE and
                         r["dcid"] == p.cid, 3.5)
            record("MRC-CONN-040 MRC-CONN-008",
                   req is not None and cc_op(req) == 1,
                   "no new REQUEST after REFUSE")
            closed = t.cnt("conn_closed")
            p.send_raw(m.packet(m.T_CONN_CLOSE, ccx(2), **p.hdr_kw()))
            time.sleep(0.3)
            record("MRC-CONN-040", t.cnt("conn_closed") == closed + 1,
                   "ACCEPT did not close: conn_closed +%d" %
                   (t.cnt("conn_closed") - closed))
            op = self.request_answered(p)
            record("MRC-CONN-043", op is None, "closed connection answered")
        finally:
            t.tunable("conn_idle_timeout_s", old)
            t.tunable("rto_initial_us", rto)

    # Peer restart and STREAM_CLOSE -----------------------------------------
    def t_restart(self):
        self.fresh()
        p, t = self.p, self.t
        old_cid, old_tok, old_peer = p.cid, p.token, (p.peer_cid, p.peer_token)
        pr = t.cnt("conn_peer_restart")
        p.epoch = random.randrange(1, 1 << 64)     # we "restart"
        # Every connection of the target is to our address (ours, and any
        # its device peer there left): with max_conns_per_peer at their
        # number, the new incarnation's CONNECT is accepted only if our
        # old connection fails first (MRC-CONN-017).
        per_peer = t.tunable("max_conns_per_peer")
        t.tunable("max_conns_per_peer", max(1, t.cnt("conn_active")))
        try:
            a = self.fresh()
        finally:
            t.tunable("max_conns_per_peer", per_peer)
        record("MRC-CONN-044 MRC-CONN-017", a is not None and
               t.cnt("conn_peer_restart") == pr + 1,
               "CONNECT with a new epoch (max_conns_per_peer reached): %s, "
               "conn_peer_restart +%d" % ("accepted" if a else "refused",
                                          t.cnt("conn_peer_restart") - pr))
        new = (p.cid, p.token, p.peer_cid, p.peer_token)
        p.cid, p.token = old_cid, old_tok
        p.peer_cid, p.peer_token = old_peer
        op = self.request_answered(p)
        record("MRC-CONN-044 MRC-CONN-017", op is None,
               "the old connection still answers (%s)" % op)
        p.cid, p.token, p.peer_cid, p.peer_token = new

        # A RESET with a new epoch (any reason: CONNECT_REQUIRED here, which
        # an established connection otherwise ignores) fails the connection
        # it came on and every other one of the peer's old incarnation:
        # three, with the one just made.
        self.fresh()
        first = (p.cid, p.token, p.peer_cid, p.peer_token)
        self.fresh()
        pr, cf = t.cnt("conn_peer_restart"), t.cnt("conn_failed")
        p.send_raw(m.packet(m.T_RESET, m.rsx(2, random.randrange(1, 1 << 64)),
                            **p.hdr_kw(token=p.token)))
        time.sleep(0.3)
        record("MRC-CONN-044", t.cnt("conn_peer_restart") == pr + 3 and
               t.cnt("conn_failed") == cf + 3,
               "RESET with a new epoch on one of three connections: "
               "conn_peer_restart +%d conn_failed +%d" %
               (t.cnt("conn_peer_restart") - pr, t.cnt("conn_failed") - cf))
        second = (p.cid, p.token, p.peer_cid, p.peer_token)
        for which, ids in (("the RESET's", second), ("an older", first),
                           ("the oldest", new)):
            p.cid, p.token, p.peer_cid, p.peer_token = ids
            op = self.request_answered(p)
            record("MRC-CONN-044", op is None,
                   "after a new-epoch RESET, %s connection answers (%s)" %
                   (which, op))
        p.cid, p.token, p.peer_cid, p.peer_token = second

    def t_stream_close(self):
        self.fresh()
        p = self.p
        ns = self.t.cnt("stream_closes_rcvd")
        scx = struct.pack(">BBBBI", 1, 0, 0, 0, 0)
        psn = p.send_seq(m.T_STREAM_CLOSE, m.sx(0x123, p.qpn, 0, segshift=0) +
                         scx)
        got = p.drain(0.7)
        acked = [r for r in got if r["type"] == m.T_ACK and
                 r.get("cum_psn") is not None and m.sacked(r, psn)]
        naks = [r for r in got if r["type"] == m.T_NAK]
        record("MRC-CONN-038", acked and not naks and
               self.t.cnt("stream_closes_rcvd") == ns,
               "STREAM_CLOSE for no stream: %d ACKs, %d NAKs" %
               (len(acked), len(naks)))


def main(argv):
    local, target, dev = argv[1:4]
    c = Checks(local, target, dev)
    for name in ("t_stateless", "t_reset_validation", "t_conn_close",
                 "t_restart", "t_stream_close", "t_idle"):
        try:
            getattr(c, name)()
        except Exception as ex:  # noqa: BLE001
            record("MRC-CONN-008", False, "%s: %r" % (name, ex))
    fails = 0
    for i in sorted(results):
        st, note = results[i]
        fails += st == "fail"
        print("%-14s %s %s" % (i, st, note))
    print("summary: %d checked, %d failed" % (len(results), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
