# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Play a MetaRoCE peer from a host (or network namespace) that has no
MetaRoCE device of its own: send crafted packets with any source address and
port through a raw IP socket, receive what the device under test sends
through a packet socket (the port may be bound by the metaroce module, which
drops packets for addresses without a device).

    p = Peer("10.77.0.2", "10.77.0.1")
    p.connect()                         # CONNECT / CONNECT_ACK
    p.send_seq(m.T_WRITE, m.sx(...) + m.rx(va, rkey), payload)
    pkt = p.recv(lambda q: q["type"] == m.T_ACK)
"""
import os
import queue
import random
import select
import socket
import struct
import threading
import time

import mrpkt as m

ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
PACKET_OUTGOING = 4
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SOL_PACKET, PACKET_AUXDATA, PACKET_VNET_HDR = 263, 8, 15
TP_STATUS_CSUMNOTREADY = 0x8
ACK_CLASS = (m.T_ACK, m.T_NAK, m.T_PROBE_REPLY)


def ifname_of(ip):
    """The interface that holds address ip."""
    fam = "-6" if ":" in ip else "-4"
    for line in os.popen("ip -o %s addr show" % fam).read().splitlines():
        f = line.split()
        if f[3].split("/")[0] == ip:
            return f[1]
    raise RuntimeError("no interface with address %s" % ip)


def csum16(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(">%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def udp6_pseudo(src, dst, ulen):
    """The IPv6 pseudo-header of a UDP datagram of ulen bytes (RFC 8200
    8.1), src and dst packed."""
    return src + dst + struct.pack(">IxxxB", ulen, socket.IPPROTO_UDP)


def udp6_checksum(src, dst, udp):
    """The UDP checksum over the IPv6 pseudo-header."""
    return csum16(udp6_pseudo(src, dst, len(udp)) + udp) or 0xFFFF


class Peer:
    def __init__(self, local_ip, target_ip, port=m.UDP_PORT, sport=None,
                 qpn=0x0C0FFE, listen=True):
        self.local, self.target, self.port = local_ip, target_ip, port
        self.sport = sport or random.randrange(0xC000, 0x10000)
        self.qpn = qpn
        self.v6 = ":" in local_ip
        fam = socket.AF_INET6 if self.v6 else socket.AF_INET
        eth = ETH_P_IPV6 if self.v6 else ETH_P_IP
        self.tx = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_RAW)
        if listen:
            self.rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                                    socket.htons(eth))
            self.rx.bind((ifname_of(local_ip), eth))
            self.rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
            self.rx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            self.rx.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
            # A sender's UDP GSO batch crosses a veth whole: the virtio
            # header in front of each frame (SOCK_RAW only: the Ethernet
            # header follows) gives its segment size.
            self.rx.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
        self.cid = random.randrange(1, 0xFFFFFFFF)
        self.token = random.randrange(1, 1 << 64)
        self.epoch = random.randrange(1, 1 << 64)
        self.peer_cid = self.peer_token = None
        self.psn = random.randrange(0, 1 << 32)
        self.plw = self.psn
        self.path_id = 0
        self.log = []           # every packet received, parsed
        self.rxs = {}           # receive state of the target's paths
        self.q = queue.Queue()
        self.lock = threading.Lock()
        self.ack_seq = random.randrange(0, 1 << 32)
        self.auto_ack = True
        self.cx_kw = {}         # CX fields of our CONNECTs
        self.ack_seqs = []      # (DCID, PSN) of every ACK-class packet
        self.seen = []          # every packet received, in arrival order
        # Called in the receive thread with each packet before the
        # automatic answers; when it returns True they are skipped.
        self.hook = None
        # Called first: when it returns True, the packet counts as lost
        # (in seen, but neither acknowledged nor queued for recv()).
        self.lose = None
        if listen:
            threading.Thread(target=self._loop, daemon=True).start()

    # Raw I/O -------------------------------------------------------------
    def send_raw(self, payload, src=None, sport=None, dport=None, tos=0x6A,
                 dst=None, csum=True):
        """One UDP datagram with MetaRoCE payload; any source address.
        The UDP checksum is csum if that is an int (not a bool); else over
        IPv6 it is computed unless csum is False (then it is zero), and over
        IPv4 it is zero."""
        src = src or self.local
        dst = dst or self.target
        given = not isinstance(csum, bool)
        udp = struct.pack(">HHHH", sport or self.sport, dport or self.port,
                          8 + len(payload), csum if given else 0) + payload
        if self.v6:
            s6, d6 = (socket.inet_pton(socket.AF_INET6, a) for a in (src, dst))
            if csum is True:
                udp = udp[:6] + struct.pack(">H", udp6_checksum(s6, d6, udp)) + udp[8:]
            ip = struct.pack(">IHBB16s16s", 6 << 28 | tos << 20 | 0x12345,
                             len(udp), socket.IPPROTO_UDP, 64, s6, d6)
            self.tx.sendto(ip + udp, (dst, 0))
            return
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, tos, 20 + len(udp), 0, 0x4000,
                         64, socket.IPPROTO_UDP, 0, socket.inet_aton(src),
                         socket.inet_aton(dst))
        self.tx.sendto(ip + udp, (dst, 0))

    def _read(self, timeout):
        r, _, _ = select.select([self.rx], [], [], timeout)
        if not r:
            return None
        data, anc, _, addr = self.rx.recvmsg(65535 + 24, 128)
        if addr[2] == PACKET_OUTGOING or len(data) < 24:
            return False
        gso_type, gso_size = data[1], struct.unpack("<H", data[4:6])[0]
        data = data[24:]
        # Kernel receive time (CLOCK_REALTIME, as time.time()): on a veth
        # pair, within microseconds of the target's transmission.
        kt, partial = None, False
        for level, typ, val in anc:
            if level == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS and len(val) >= 16:
                sec, ns = struct.unpack("qq", val[:16])
                kt = sec + ns / 1e9
            elif level == SOL_PACKET and typ == PACKET_AUXDATA and len(val) >= 4:
                # Checksum offload (veth): the field holds the sum of the
                # pseudo-header only, for the device to complete.
                partial = bool(struct.unpack("I", val[:4])[0] & TP_STATUS_CSUMNOTREADY)
        extra = {}
        if self.v6:
            if len(data) < 48 or data[6] != 17:
                return False
            ihl = 40
            src = socket.inet_ntop(socket.AF_INET6, data[8:24])
            dst = socket.inet_ntop(socket.AF_INET6, data[24:40])
            w = struct.unpack(">I", data[:4])[0]
            tos, df = (w >> 20) & 0xFF, True
            ulen, ucsum = struct.unpack(">HH", data[44:48])
            ph = udp6_pseudo(data[8:24], data[24:40], ulen)
            extra = dict(flow=w & 0xFFFFF, hlim=data[7], udp_csum=ucsum,
                         udp_csum_ok=ucsum == ~csum16(ph) & 0xFFFF
                         if partial else csum16(ph + data[40:40 + ulen]) == 0)
        else:
            if len(data) < 28 or data[9] != 17:
                return False
            ihl = (data[0] & 15) * 4
            src, dst = socket.inet_ntoa(data[12:16]), socket.inet_ntoa(data[16:20])
            tos = data[1]
            df = bool(struct.unpack(">H", data[6:8])[0] & 0x4000)
            extra = dict(ttl=data[8], iphdr=data[:ihl])
        sport, dport, ulen = struct.unpack(">HHH", data[ihl:ihl + 6])
        if dst != self.local or src != self.target or dport != self.port:
            return False
        dgram = data[ihl + 8:ihl + ulen]
        # A GSO batch: datagrams of gso_size bytes each but the last, as
        # the device in front of a wire would send them.
        step = gso_size if gso_type and gso_size else len(dgram) or 1
        out = []
        for off in range(0, len(dgram), step):
            payload = dgram[off:off + step]
            if len(payload) < 36:
                continue
            p = m.parse(payload)
            p.update(ip_src=src, ip_dst=dst, sport=sport, dport=dport, tos=tos,
                     df=df, raw=payload, t=time.monotonic(),
                     kt=kt if kt is not None else time.time(), **extra)
            out.append(p)
        return out

    def _loop(self):
        """Receive thread: answer at once (CONNECT, ACKs, PROBE_REPLYs),
        since a multipath target judges its paths by how fast they come,
        and queue every packet for recv()."""
        while True:
            for p in self._read(1.0) or ():
                self.seen.append(p)
                if self.lose and self.lose(p):
                    continue
                try:
                    self._auto(p)
                except OSError:
                    pass
                self.q.put(p)

    def recv(self, match=lambda p: True, timeout=3.0):
        """The first packet from the target that satisfies match, or None.
        Packets that do not match are consumed."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            try:
                p = self.q.get(timeout=left)
            except queue.Empty:
                return None
            self.log.append(p)
            if match(p):
                return p

    def drain(self, wait=0.3):
        """Everything the target sends within the next wait seconds."""
        out = []
        end = time.monotonic() + wait
        while True:
            left = end - time.monotonic()
            p = self.recv(timeout=left) if left > 0 else None
            if p is None:
                return out
            out.append(p)

    def _auto(self, p):
        t = p["type"]
        if t in ACK_CLASS:
            self.ack_seqs.append((p["dcid"], p["psn"]))
        ours = self.peer_cid and p["dcid"] == self.cid
        if ours and 0x01 <= t <= 0x1F:
            with self.lock:
                self._rx_seq(p)
        if self.hook and self.hook(p):
            return
        if t == m.T_CONNECT and p.get("cx_token"):
            self.answer_connect(p)
        elif not ours:
            return
        elif 0x01 <= t <= 0x1F:
            if self.auto_ack:
                self.send_raw(self.ack_pkt(m.T_ACK, p["path_id"]), sport=p["sport"])
        elif t == m.T_PROBE and self.auto_ack:
            self.send_raw(self.probe_reply(p), sport=p["sport"])

    def _rx_seq(self, p):
        """Receive state of the target's path (spec 7.3.2), simplified: the
        PLW is applied, PSNs are recorded, cum advances over what arrived."""
        st = self.rxs.setdefault(p["path_id"], dict(cum=(p["plw"] - 1) & 0xFFFFFFFF,
                                                    got=set(), rx=0))
        st["rx"] += 1
        if m.diff(p["plw"] - 1, st["cum"]) > 0:
            st["cum"] = (p["plw"] - 1) & 0xFFFFFFFF
        if m.diff(p["psn"], st["cum"]) > 0:
            st["got"].add(p["psn"])
        while (st["cum"] + 1) & 0xFFFFFFFF in st["got"]:
            st["cum"] = (st["cum"] + 1) & 0xFFFFFFFF
            st["got"].discard(st["cum"])
        st["got"] = {x for x in st["got"] if 0 < m.diff(x, st["cum"]) <= 256}

    def ack_pkt(self, ptype, path_id, pbx=b"", srs=()):
        """An ACK (or PROBE_REPLY echoing pbx) of our state of path_id,
        with Stream Records srs: (flags, requester QPN, responder QPN,
        Completed SSN, MSN Limit) each."""
        with self.lock:
            return self._ack_pkt(ptype, path_id, pbx, srs)

    def _ack_pkt(self, ptype, path_id, pbx, srs):
        st = self.rxs.get(path_id)
        if st:
            akx = m.akx(st["cum"], st["rx"], st["got"], srs=srs)
        else:
            akx = m.akx(0, 0, flags=m.ACKF_NO_STATE, srs=srs)
        return self.ack_class(ptype, path_id, pbx + akx)

    def ack_class(self, ptype, path_id, ext):
        """An ACK, NAK or PROBE_REPLY for path_id with extension headers
        ext, under the next ACK Sequence."""
        self.ack_seq = (self.ack_seq + 1) & 0xFFFFFFFF
        return m.packet(ptype, ext, **self.hdr_kw(path_id=path_id, psn=self.ack_seq,
                                                  plw=0))

    def probe_reply(self, probe, akx=None):
        """The PROBE_REPLY to PROBE probe (parsed): its PBX echoed, with AKX
        akx, by default our receive state of its path."""
        pbx = probe["raw"][32:48]
        if akx is None:
            return self.ack_pkt(m.T_PROBE_REPLY, probe["path_id"], pbx)
        return self.ack_class(m.T_PROBE_REPLY, probe["path_id"], pbx + akx)

    # Connection ------------------------------------------------------------
    def connect_pkt(self, ptype=m.T_CONNECT, scid=None, **kw):
        # We acknowledge every path the target opens: let it open many
        # (255, since 0, which means 256, is refused by some targets).
        for k, v in self.cx_kw.items():
            kw.setdefault(k, v)
        kw.setdefault("max_rx_paths", 255)
        ext = m.cx(self.token, epoch=self.epoch,
                   addrs=[m.addr16(self.local)], **kw)
        if ptype == m.T_CONNECT:
            return m.packet(ptype, ext, scid=self.cid)
        return m.packet(ptype, ext, dcid=self.peer_cid,
                        scid=self.cid if scid is None else scid,
                        token=self.peer_token)

    def answer_connect(self, c):
        """Accept the target's CONNECT c (parsed): take its CID and token,
        send our CONNECT_ACK as a reply to it."""
        self.peer_cid, self.peer_token = c["scid"], c["cx_token"]
        self.send_raw(self.connect_pkt(m.T_CONNECT_ACK), sport=c["sport"])

    def connect(self, timeout=5.0):
        """CONNECT to the target; returns its CONNECT_ACK (parsed) or None."""
        for _ in range(3):
            self.send_raw(self.connect_pkt())
            a = self.recv(lambda p: p["type"] == m.T_CONNECT_ACK and
                          p["dcid"] == self.cid, timeout / 3)
            if a:
                self.peer_cid, self.peer_token = a["scid"], a["cx_token"]
                self.accept = a
                return a
        return None

    # Sending on the connection ------------------------------------------
    def hdr_kw(self, **kw):
        d = dict(dcid=self.peer_cid, scid=self.cid, token=self.peer_token,
                 path_id=self.path_id)
        d.update(kw)
        return d

    def seq_pkt(self, ptype, ext, payload=b"", flags=m.F_AR | m.F_LAST,
                psn=None, plw=None, **kw):
        """A sequenced packet; takes the next PSN unless psn is given."""
        if psn is None:
            psn = self.psn
            self.psn = (self.psn + 1) & 0xFFFFFFFF
            if (psn - self.plw) & 0xFFFFFFFF >= 128:
                self.plw = psn      # older packets count as resolved
        if plw is None:
            plw = self.plw
        return m.packet(ptype, ext, payload, flags=flags,
                        **self.hdr_kw(psn=psn, plw=plw, **kw)), psn

    def send_seq(self, ptype, ext, payload=b"", **kw):
        pkt, psn = self.seq_pkt(ptype, ext, payload, **kw)
        self.send_raw(pkt)
        return psn

    def resolve_all(self):
        """Everything sent is resolved: the next packet's PLW says so."""
        self.plw = self.psn
