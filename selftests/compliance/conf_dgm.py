# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Conformance checks of the datagram service (spec 14): DATAGRAMs we
craft to a target UD QP, and those a target UD QP sends us.  A mixin of
conformance.Suite."""
import random
import socket
import struct

import mrpkt as m
from verdict import need, record

QKEY = 0x11111111
WC_SUCCESS, WC_LOC_LEN_ERR, WC_RECV, WC_WITH_IMM, WC_GRH = 0, 1, 128, 2, 1
# A UD receive's sl: the RoCE packet type, UDP and IPv4 or IPv6 (MRC-DGM-010).
SL_UDP_IPV4, SL_UDP_IPV6 = 0xa, 0x9


class DatagramTests:
    def ud_wcs(self, u, wait, cq):
        return [w for w in self.a("poll", qpn=u["qpn"], wait=wait)["wcs"] if w["cq"] == cq]

    def t_datagram_rx(self):
        u = self.a("ud_qp", qkey=QKEY, recvs=1, recv_len=2048)
        c0 = self.counters("conn_active")
        data = bytes(random.randrange(256) for _ in range(100))
        sqpn = 0x123456
        self.p.send_raw(m.datagram(u["qpn"], sqpn, QKEY, data, imm=0xCAFEBABE))
        w = self.ud_wcs(u, 2.0, "rcq")
        buf = bytes.fromhex(self.a("read_recv", qpn=u["qpn"], off=0, len=160)["hex"])
        ok = len(w) == 1 and w[0]["status"] == WC_SUCCESS and w[0]["opcode"] == WC_RECV and \
            w[0]["byte_len"] == 140 and w[0]["flags"] & WC_WITH_IMM and \
            w[0]["flags"] & WC_GRH and socket.ntohl(w[0]["imm"]) == 0xCAFEBABE and \
            w[0]["sl"] == (SL_UDP_IPV6 if self.p.v6 else SL_UDP_IPV4)
        record("MRC-DGM-010", ok, "datagram receive completion %s" % w)
        udp_len = 8 + 48 + 100 + 4
        if self.p.v6:       # the whole IPv6 header
            ip = buf[:40]
            hdr_ok = ip[0] >> 4 == 6 and ip[6] == socket.IPPROTO_UDP and \
                ip[8:24] == m.addr16(self.local) and ip[24:40] == m.addr16(self.target) and \
                struct.unpack(">H", ip[4:6])[0] == udp_len
        else:               # 20 zero bytes, then the IPv4 header
            ip = buf[20:40]
            hdr_ok = buf[:20] == bytes(20) and ip[0] == 0x45 and \
                ip[9] == socket.IPPROTO_UDP and ip[12:16] == socket.inet_aton(self.local) and \
                ip[16:20] == socket.inet_aton(self.target) and \
                struct.unpack(">H", ip[2:4])[0] == 20 + udp_len
        record("MRC-DGM-008", hdr_ok and buf[40:140] == data and buf[140:] == b"\xa5" * 20,
               "GRH area %s, payload %s" % (buf[:40].hex(), "ok" if buf[40:140] == data else "wrong"))
        # Not acknowledged, no connection state.
        got = [r for r in self.p.drain(0.3) if r["type"] in (m.T_ACK, m.T_NAK, m.T_RESET) and
               r["dcid"] != self.p.cid]
        c1 = self.counters("conn_active")
        record("MRC-DGM-002", not got and c1["conn_active"] == c0["conn_active"],
               "datagram answered with %s, conn_active %d -> %d" %
               ([hex(r["type"]) for r in got], c0["conn_active"], c1["conn_active"]))
        # Wrong Q_Key, then no receive posted: dropped and counted.
        for what, qkey, ctr in (("wrong Q_Key", QKEY ^ 1, "ud_drop_qkey"),
                                ("no receive posted", QKEY, "ud_drop_no_recv")):
            c0 = self.counters(ctr)
            self.p.send_raw(m.datagram(u["qpn"], sqpn, qkey, data))
            w = self.ud_wcs(u, 0.3, "rcq")
            c1 = self.counters(ctr)
            record("MRC-DGM-006" if ctr == "ud_drop_qkey" else "MRC-DGM-007",
                   not w and c1[ctr] - c0[ctr] == 1,
                   "datagram with %s: completions %s, %s +%d" % (what, w, ctr, c1[ctr] - c0[ctr]))
        # A receive too small for GRH + payload: LOC_LEN_ERR, nothing written.
        self.a("post_recv", qpn=u["qpn"], n=1, len=100)
        self.p.send_raw(m.datagram(u["qpn"], sqpn, QKEY, data))
        w = self.ud_wcs(u, 2.0, "rcq")
        buf = bytes.fromhex(self.a("read_recv", qpn=u["qpn"], off=2048, len=160)["hex"])
        record("MRC-DGM-009", [x["status"] for x in w] == [WC_LOC_LEN_ERR] and
               buf == b"\xa5" * 160, "datagram into a 100-byte receive: completions %s, "
               "buffer %s" % (w, "untouched" if buf == b"\xa5" * 160 else "written"))

    def datagram_from(self, u, timeout=2.0):
        return self.replies(lambda r: r["type"] == m.T_DATAGRAM and
                            struct.unpack(">I", r["raw"][36:40])[0] & 0xFFFFFF == u["qpn"],
                            timeout)

    def t_datagram_tx(self):
        u = self.a("ud_qp", qkey=QKEY, recvs=0)
        self.a("fill", qpn=u["qpn"], off=0, len=300, byte=0x6E)
        dq = 0x0456AB
        self.a("post_ud", qpn=u["qpn"], peer_ip=self.local, dqpn=dq, qkey=0x22222222,
               len=200, imm=0x01020304)
        r = self.datagram_from(u)
        need(r, "no DATAGRAM from a UD send")
        self.check_envelope(r)
        dflags_dqpn, sq, qk, imm = struct.unpack(">IIII", r["raw"][32:48])
        base = (r["flags"], r["path_id"], r["dcid"], r["scid"], r["psn"], r["plw"],
                r["token"], r["hdr_len"], r["payload_len"])
        record("MRC-DGM-003", base == (0, 0, 0, 0, 0, 0, 0, 48, 200) and
               dflags_dqpn == (m.DX_IMM << 24 | dq) and sq == u["qpn"] and qk == 0x22222222 and
               imm == 0x01020304 and r["payload"] == b"\x6e" * 200 and r["sport"] >= 0xC000,
               "DATAGRAM base %s DX %#x %#x %#x %#x, UDP source port %d" %
               (base, dflags_dqpn, sq, qk, imm, r["sport"]))
        self.a("post_ud", qpn=u["qpn"], peer_ip=self.local, dqpn=dq, qkey=0x80000000, len=8)
        r2 = self.datagram_from(u)
        qk2 = r2 and struct.unpack(">I", r2["raw"][40:44])[0]
        record("MRC-DGM-004", qk2 == QKEY, "remote Q_Key 0x80000000 sent as %s" %
               (qk2 is not None and hex(qk2)))
        record("MRC-DGM-003", r2 is not None and r2["sport"] == r["sport"],
               "UDP source port changed between datagrams of one QP pair")
        w0 = self.ud_wcs(u, 1.0, "cq")
        mtu = 256 << self.p.accept["max_seg_shift"]
        self.a("post_ud", qpn=u["qpn"], peer_ip=self.local, dqpn=dq, qkey=QKEY, len=mtu + 8)
        w = self.ud_wcs(u, 2.0, "cq")
        r3 = self.datagram_from(u, 0.3)
        record("MRC-DGM-005", r3 is None and [x["status"] for x in w] == [WC_LOC_LEN_ERR] and
               [x["status"] for x in w0] == [0, 0],
               "UD send of active_mtu + 8 bytes: %s, completions %s" %
               ("sent" if r3 else "not sent", [x["status"] for x in w0 + w]))
