# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Conformance checks of carried ACKs and implied completion (spec 8.6)
with a peer whose CX has CACK: the target's READ and ATOMIC responses
carry the ACK of their request and no Stream Record follows; the AKXs we
carry in our own stream packets acknowledge the target's packets; a
response of ours completes the target's earlier WRITE without a Stream
Record; malformed carried AKXs drop their packet.  A mixin of
conformance.Suite (uses conf_init.py's peers at further addresses)."""
import time

import mrpkt as m
from conf_init import until, wr_status
from verdict import need, record

WC_SUCCESS = 0


class CarriedAckTests:
    def cack_peer(self):
        """Our CACK peer at further address 4, connected by a target QP
        (the target initiates), or None."""
        pp = self.init_peer(4, caps=m.CAP_ATOMIC | m.CAP_CACK)
        if not pp:
            return None, None
        known = getattr(self, "cack_caps", None) is not None
        q = self.new_qp(peer_ip=pp.local, timeout=18)
        # A second QP finds the connection there, unless it was reclaimed.
        c = self.connect_of(pp, 1.0 if known else 3.0)
        need(c or known, "no CONNECT towards an address the target had no connection with")
        pp.hook = None
        pp.auto_ack = True
        if c:
            pp.answer_connect(c)
            self.cack_caps = c["caps"]
        if not self.cack_caps & m.CAP_CACK:
            print("# the target's CX lacks CACK: carried ACK checks skipped")
            return None, None
        return pp, q

    @staticmethod
    def carries(r, pp, psn):
        """Does the target's packet r carry an ACK of our path that reports
        psn, in the form MRC-ACK-019 gives it?"""
        a = r.get("carried")
        return bool(r["flags"] & m.F_AKX and a and a["acked_path_id"] == pp.path_id and
                    m.sacked(a, psn) and a["num_sr"] == 0 and a["rate_hint"] == 0 and
                    a["akx_reserved"] == 0 and not a["ack_flags"] & m.ACKF_NO_STATE)

    def own_acks(self, pp, since):
        """The ACKs of our path the target sent since pp.seen[since]."""
        return [r for r in pp.seen[since:] if r["type"] == m.T_ACK and
                r["path_id"] == pp.path_id]

    # For the connection these checks make, the target computes no rate
    # hint (a target that does sends an ACK of its own now and then,
    # MRC-ACK-021), and its probe and retransmission timers wait longer
    # than our answers, made in Python, take: a packet resent would be
    # one our carried ACK did not acknowledge.
    # A slow target (MROCE_SLOW) waits longer, within the ranges of spec
    # 17 (pto_min_us and rto_initial_us are at their maximum already).
    def cack_tunables(self):
        return dict(hint=0, pto_min_us=100000, rto_initial_us=1000000,
                    rto_min_us=int(min(300000 * self.slow, 1000000)))

    def t_cack_responder(self):
        """The target as responder (MRC-ACK-019, MRC-ACK-021, MRC-ACK-023):
        an 8-byte READ and an ATOMIC, each answered by one packet that
        carries the ACK of the request; no ACK of their own follows, and
        no Stream Record: the responses imply the completions."""
        with self.tuned(**self.cack_tunables()):
            self.cack_responder()

    def t_cack_requester(self):
        """The target as requester (MRC-ACK-020, MRC-ACK-023): we
        acknowledge its WRITE and READ_REQ only with AKXs carried in our
        own READ_REQ and in the READ_RESP we answer with, and send no
        Stream Record: nothing is resent, both work requests complete
        (the WRITE because our response implies it).  Carried AKXs with a
        Num SR, a Reserved byte or an Acked Path ID out of range drop
        their packet (drop_bad_header)."""
        with self.tuned(**self.cack_tunables()):
            self.cack_requester()

    def cack_responder(self):
        pp, q = self.cack_peer()
        if not pp:
            return
        self.a("fill", qpn=q["qpn"], off=0, len=64, byte=0x3C)
        n0 = len(pp.seen)
        psn = pp.send_seq(m.T_READ_REQ, self.sx(q, 0, 0, 64) + m.rx(q["va"], q["rkey"]),
                          flags=m.F_LAST)
        r = pp.recv(lambda r: r["type"] == m.T_READ_RESP and r.get("dqpn") == q["mine"], 3.0)
        need(r, "no READ_RESP")
        ext = self.sx(q, 1, 0, 8) + m.atx(q["va"] + 8, 5, 0, q["rkey"])
        psn2 = pp.send_seq(m.T_ATOMIC_FA, ext, flags=m.F_LAST)
        r2 = pp.recv(lambda r: r["type"] == m.T_ATOMIC_RESP and r.get("dqpn") == q["mine"],
                     3.0)
        need(r2, "no ATOMIC_RESP")
        time.sleep(0.5)
        acks = self.own_acks(pp, n0)
        self.check_envelope(r)
        self.check_envelope(r2)
        record("MRC-ACK-019",
               self.carries(r, pp, psn) and r["hdr_len"] == 56 + 52 and
               r["payload"] == b"\x3c" * 64 and self.carries(r2, pp, psn2) and
               r2["hdr_len"] == 64 + 52 and r2["orig"] == 0x3c3c3c3c3c3c3c3c,
               "READ_RESP flags %#x HdrLen %d carried %s; ATOMIC_RESP flags %#x HdrLen %d "
               "carried %s" % (r["flags"], r["hdr_len"], r.get("carried"), r2["flags"],
                               r2["hdr_len"], r2.get("carried")))
        record("MRC-ACK-021 MRC-ACK-023", not acks,
               "%d ACKs of our path after the responses that carried them (Stream Records: "
               "%s)" % (len(acks), [a.get("srs") for a in acks]))

    def cack_requester(self):
        pp, q = self.cack_peer()
        if not pp:
            return
        pp.auto_ack = False
        c0 = self.counters("acks_carried_rcvd", "drop_bad_header")
        n0 = len(pp.seen)
        self.a("post_send", qpn=q["qpn"], opcode="write", len=100, rkey=0x4400, va=0,
               wr_id=1)
        self.a("post_send", qpn=q["qpn"], opcode="read", len=16, rkey=0x4400, va=0x100,
               wr_id=2)
        got = lambda: {r["type"]: r for r in pp.seen[n0:] if r.get("dqpn") == q["mine"] and
                       r["type"] in (m.T_WRITE, m.T_READ_REQ)}
        until(lambda: len(got()) == 2, 3.0)
        pk = got()
        need(len(pk) == 2, "the target's WRITE and READ_REQ: %s" % sorted(pk))
        w, rr = pk[m.T_WRITE], pk[m.T_READ_REQ]

        def carried(path):
            with pp.lock:
                st = pp.rxs[path]
                return m.akx(st["cum"], st["rx"], st["got"], acked_path=path)

        n1 = len(pp.seen)
        # Our READ (SSN 0 of our stream) carries the ACK of the WRITE's path.
        pp.send_raw(pp.seq_pkt(m.T_READ_REQ, self.sx(q, 0, 0, 8) + m.rx(q["va"], q["rkey"]) +
                               carried(w["path_id"]), flags=m.F_LAST | m.F_AKX)[0],
                    sport=w["sport"])
        # Our answer to its READ carries the ACK of the READ_REQ's path.
        pp.send_raw(pp.seq_pkt(m.T_READ_RESP, m.sx(q["qpn"], q["mine"], rr["ssn"], 0, 16, 0,
                                                   segshift=rr["segshift"]) +
                               carried(rr["path_id"]), b"\x77" * 16,
                               flags=m.F_LAST | m.F_AKX)[0], sport=rr["sport"])
        wcs = self.swcs(q, 3.0)
        # A slow target's probe timer (pto_min_us is at its maximum) may
        # fire before our ACKs are processed; once its work requests
        # completed, it must send nothing again.
        since = len(pp.seen) if self.slow > 1 else n1
        time.sleep(0.3)
        resent = [(hex(r["type"]), r["psn"]) for r in pp.seen[since:]
                  if r.get("dqpn") == q["mine"] and r["type"] in (m.T_WRITE, m.T_READ_REQ)]
        c1 = self.counters("acks_carried_rcvd", "drop_bad_header")
        mem = bytes.fromhex(self.a("read", qpn=q["qpn"], off=0, len=16)["hex"])
        record("MRC-ACK-020", not resent and
               c1["acks_carried_rcvd"] - c0["acks_carried_rcvd"] == 2,
               "sent again after our carried ACKs: %s; acks_carried_rcvd +%d" %
               (resent, c1["acks_carried_rcvd"] - c0["acks_carried_rcvd"]))
        record("MRC-ACK-023", wr_status(wcs) == [(1, WC_SUCCESS), (2, WC_SUCCESS)] and
               mem == b"\x77" * 16,
               "completions %s with no Stream Record (READ data %s)" %
               (wr_status(wcs), "ok" if mem == b"\x77" * 16 else "differs"))
        # Malformed carried AKXs: the READ (SSN 1) they ride on is dropped.
        pp.auto_ack = True
        with pp.lock:
            st = pp.rxs[w["path_id"]]
            good = dict(cum=st["cum"], rx_count=st["rx"], got=set(st["got"]))
        bad = (dict(num_sr=1), dict(reserved=1), dict(acked_path=250))
        n2 = len(pp.seen)
        for kw in bad:
            a = m.akx(good["cum"], good["rx_count"], good["got"],
                      **dict(dict(acked_path=w["path_id"]), **kw))
            pp.send_seq(m.T_READ_REQ, self.sx(q, 1, 0, 8) + m.rx(q["va"], q["rkey"]) + a,
                        flags=m.F_LAST | m.F_AKX)
        time.sleep(0.5)
        answered = [r for r in pp.seen[n2:] if r["type"] == m.T_READ_RESP and r["ssn"] == 1]
        c2 = self.counters("acks_carried_rcvd", "drop_bad_header")
        record("MRC-ACK-020", not answered and
               c2["drop_bad_header"] - c1["drop_bad_header"] == len(bad) and
               c2["acks_carried_rcvd"] == c1["acks_carried_rcvd"],
               "READs with a bad carried AKX: %d answered, drop_bad_header +%d of %d" %
               (len(answered), c2["drop_bad_header"] - c1["drop_bad_header"], len(bad)))
        # The stream is intact: the same READ without the AKX is answered.
        pp.send_seq(m.T_READ_REQ, self.sx(q, 1, 0, 8) + m.rx(q["va"], q["rkey"]),
                    flags=m.F_LAST)
        r = pp.recv(lambda r: r["type"] == m.T_READ_RESP and r.get("ssn") == 1 and
                    r.get("dqpn") == q["mine"], 3.0)
        record("MRC-ACK-020", r is not None, "no READ_RESP to a well-formed READ after them")
        self.a("destroy", qpn=q["qpn"])
