# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Build and parse MetaRoCE v1 packets (Documentation/metaroce/spec.md, 5).

Used by the compliance suite and selftests to play the peer: the UDP payload
built here is what a MetaRoCE endpoint puts after the UDP header.
"""
import socket
import struct
from fractions import Fraction

VERSION = 1
UDP_PORT = 4793

T_SEND, T_SEND_IMM, T_SEND_INV, T_WRITE, T_WRITE_IMM = 0x01, 0x02, 0x03, 0x04, 0x05
T_READ_REQ, T_READ_RESP, T_ATOMIC_CS, T_ATOMIC_FA = 0x06, 0x07, 0x08, 0x09
T_ATOMIC_RESP, T_STREAM_CLOSE = 0x0A, 0x0B
T_ACK, T_NAK, T_PROBE, T_PROBE_REPLY, T_SYNC = 0x20, 0x21, 0x22, 0x23, 0x24
T_CONNECT, T_CONNECT_ACK, T_CONN_CLOSE, T_RESET = 0x28, 0x29, 0x2A, 0x2B
T_DATAGRAM = 0x30

F_AR, F_SE, F_LAST, F_RETX = 0x8000, 0x4000, 0x2000, 0x1000
ACKF_NO_STATE, ACKF_REORDERED = 0x80, 0x40
F_ECE, F_BKLG, F_MAC, F_AKX = 0x0800, 0x0400, 0x0200, 0x0100

GSI_QKEY = 0x80010000
DX_IMM = 0x80


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), as spec 4.5 defines it."""
    crc = 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


def bth(ptype, hdr_len_bytes, payload_len, flags=0, path_id=0, dcid=0,
        scid=0, psn=0, plw=0, token=0, ver=VERSION):
    """The 32-byte base header (spec 5.2)."""
    return struct.pack(">BBHBBHIIIIQ", (ver & 0xF) << 4, ptype, flags,
                       hdr_len_bytes // 4, path_id, payload_len, dcid, scid,
                       psn, plw, token)


def dx(dqpn, sqpn, qkey, imm=None):
    """The 16-byte datagram extension (spec 5.5.16)."""
    dflags = DX_IMM if imm is not None else 0
    return struct.pack(">IIII", (dflags << 24) | (dqpn & 0xFFFFFF),
                       sqpn & 0xFFFFFF, qkey, imm or 0)


def seal(headers_and_payload: bytes) -> bytes:
    """Append the CRC32C trailer."""
    return headers_and_payload + struct.pack(">I", crc32c(headers_and_payload))


def datagram(dqpn, sqpn, qkey, payload=b"", imm=None, flags=0):
    """A complete DATAGRAM UDP payload."""
    hdr = bth(T_DATAGRAM, 48, len(payload), flags=flags) + dx(dqpn, sqpn, qkey, imm)
    return seal(hdr + payload)


def parse_bth(pkt: bytes):
    (vr, ptype, flags, hlen, path_id, plen, dcid, scid, psn, plw,
     token) = struct.unpack(">BBHBBHIIIIQ", pkt[:32])
    return dict(ver=vr >> 4, type=ptype, flags=flags, hdr_len=hlen * 4,
                path_id=path_id, payload_len=plen, dcid=dcid, scid=scid,
                psn=psn, plw=plw, token=token)


def split_batch(dgram: bytes):
    """The MetaRoCE packets of a UDP payload that a capture shows whole
    although a device sent it as several datagrams (a UDP GSO batch, spec
    4.8): each packet's own lengths say where the next one starts.  What
    does not parse as a packet ends the walk, as one last payload."""
    out = []
    while dgram:
        n = 0
        if len(dgram) >= 36:
            p = parse_bth(dgram)
            n = p["hdr_len"] + p["payload_len"] + 4 + (16 if p["flags"] & F_MAC else 0)
        if n < 36 or n >= len(dgram):
            out.append(dgram)
            break
        out.append(dgram[:n])
        dgram = dgram[n:]
    return out


# Extension headers (spec 5.5) and whole packets of a connection.

EXT = {T_SEND: 24, T_SEND_IMM: 28, T_SEND_INV: 28, T_WRITE: 36,
       T_WRITE_IMM: 40, T_READ_REQ: 36, T_READ_RESP: 24, T_ATOMIC_CS: 56,
       T_ATOMIC_FA: 56, T_ATOMIC_RESP: 32, T_STREAM_CLOSE: 32, T_NAK: 24,
       T_PROBE: 16, T_PROBE_REPLY: 68, T_CONN_CLOSE: 8, T_RESET: 16,
       T_DATAGRAM: 16}

NAK_RNR, NAK_NOT_READY, NAK_REMOTE_ACCESS, NAK_INVALID_REQUEST = 1, 2, 3, 4
NAK_LENGTH, NAK_REMOTE_OP, NAK_SEQUENCE, NAK_STREAM_CLOSED = 5, 6, 7, 8
CAP_AUTH, CAP_HINT, CAP_ATOMIC, CAP_CACK = 0x8000, 0x4000, 0x2000, 0x1000


def sx(dqpn, sqpn, ssn, msn=0, msg_len=0, offset=0, segshift=2):
    return struct.pack(">IIIIII", (segshift << 28) | (dqpn & 0xFFFFFF),
                       sqpn & 0xFFFFFF, ssn, msn, msg_len, offset)


def rx(va, rkey):
    return struct.pack(">QI", va, rkey)


# The reference implementation's keys are a table index followed by an
# 8-bit random tag.  Flipping a tag bit names the same region with a wrong
# tag: always invalid.  Flipping an index bit could name a neighbouring
# region whose random tag happens to match (1 in 256), which then fails on
# its access rights instead.
BAD_KEY_XOR = 0x01


def bad_rkey(rkey):
    return rkey ^ BAD_KEY_XOR


def atx(va, swap_add, compare, rkey):
    return struct.pack(">QQQII", va, swap_add, compare, rkey, 0)


def cx(token, epoch=0x1122334455667788, guid=0x0200000000000001, addrs=(),
       caps=CAP_ATOMIC, maxsh=2, max_rx_paths=1, seg_win_shift=11,
       rx_msg_slots=1024, max_streams=1024, vmin=1, vmax=1, num_addrs=None):
    hdr = struct.pack(">BBHQQQBBBBIII16sHH", (vmin << 4) | vmax,
                      len(addrs) if num_addrs is None else num_addrs, caps,
                      epoch, token, guid, maxsh << 4, max_rx_paths,
                      seg_win_shift, 0, rx_msg_slots, max_streams, 0,
                      b"\0" * 16, 10, 0)
    return hdr + b"".join(addrs)


def addr16(ip):
    """An address in the 16-byte form of plane addresses and GIDs (spec
    5.5.12): an IPv6 address as is, an IPv4 address IPv4-mapped."""
    if ":" in ip:
        return socket.inet_pton(socket.AF_INET6, ip)
    return b"\0" * 10 + b"\xff\xff" + socket.inet_aton(ip)


def spoofed(ip):
    """Another address of ip's subnet (host part 99 of a /24 or /64)."""
    if ":" in ip:
        return ip.rsplit(":", 1)[0] + ":99"
    return ip.rsplit(".", 1)[0] + ".99"


def akx(cum, rx_count, got=(), ce_count=0, rate_hint=0, ack_delay=0,
        flags=0, srs=(), acked_path=0, reserved=0, num_sr=None):
    """An AKX (spec 5.5.7) with Cumulative PSN cum and the SACK bits of the
    PSNs got above it, then the Stream Records srs: (flags, requester QPN,
    responder QPN, Completed SSN, MSN Limit) each.  acked_path: the Acked
    Path ID of a carried AKX (spec 8.6)."""
    sack = bytearray(32)
    for x in got:
        i = diff(x, cum) - 1
        if 0 <= i < 256:
            sack[i // 8] |= 0x80 >> (i % 8)
    return struct.pack(">IIIHHBBBB", cum & 0xFFFFFFFF, ce_count, rx_count,
                       rate_hint, ack_delay,
                       len(srs) if num_sr is None else num_sr, flags,
                       acked_path, reserved) + \
        bytes(sack) + b"".join(struct.pack(">IIII", f << 24 | req, resp, c, lim)
                               for f, req, resp, c, lim in srs)


def rsx(reason, epoch=0x5EED, retry_after=0):
    """A Reset Extension (spec 5.5.13)."""
    return struct.pack(">BBHQI", reason, 0x11, retry_after, epoch, 0)


RST_NO_CONNECTION, RST_CONNECT_REQUIRED, RST_PROTOCOL, RST_RESOURCE = 1, 2, 3, 4


def hint_encode(mbps):
    """The Rate Hint of a share of mbps Mb/s (spec 12.4.3), rounded down."""
    s = Fraction(mbps)
    if s < 1:
        return 0x0800
    e = 0
    while 2 ** (e + 1) <= s:
        e += 1
    if e + 1 > 31:
        return 0xFFFF
    return (e + 1) << 11 | int((s / 2 ** e - 1) * 2048)


def hint_decode(h):
    """The rate of a Rate Hint in Mb/s, None for no hint (or reserved)."""
    e, mant = h >> 11, h & 0x7FF
    return None if e == 0 else (1 + Fraction(mant, 2048)) * 2 ** (e - 1)


assert hint_encode(23750) == 0x7B98 and hint_decode(0x7B98) == 23744


def packet(ptype, ext=b"", payload=b"", **kw):
    """A complete sealed UDP payload: base header, ext, payload, CRC."""
    return seal(bth(ptype, 32 + len(ext), len(payload), **kw) + ext + payload)


def parse_akx(a: bytes, p: dict):
    """The fields of the AKX a (spec 5.5.7) into p."""
    (p["cum_psn"], p["ce_count"], p["rx_count"], p["rate_hint"],
     p["ack_delay"], p["num_sr"], p["ack_flags"], p["acked_path_id"],
     p["akx_reserved"]) = struct.unpack(">IIIHHBBBB", a[:20])
    p["sack"] = a[20:52]
    return p


def parse(pkt: bytes):
    """Base header and the extension fields of the types a peer answers
    with (ACK, NAK, CONNECT*, RESET, stream packets).  A stream packet's
    carried AKX (flag AKX, spec 8.6) is p["carried"], parsed as an ACK's."""
    p = parse_bth(pkt)
    t = p["type"]
    e = pkt[32:p["hdr_len"]]
    if T_SEND <= t <= T_STREAM_CLOSE and len(e) >= 24:
        w = struct.unpack(">IIIIII", e[:24])
        p.update(segshift=w[0] >> 28, dqpn=w[0] & 0xFFFFFF,
                 sqpn=w[1] & 0xFFFFFF, ssn=w[2], msn=w[3], msg_len=w[4],
                 offset=w[5])
        if t == T_ATOMIC_RESP and len(e) >= 32:
            p["orig"] = struct.unpack(">Q", e[24:32])[0]
        a = e[EXT[t]:]
        if p["flags"] & F_AKX and len(a) >= 52:
            p["carried"] = parse_akx(a, {})
    elif t in (T_ACK, T_PROBE_REPLY):
        a = e if t == T_ACK else e[16:]
        if len(a) >= 52:
            parse_akx(a, p)
            srs = []
            for i in range(p["num_sr"] if t == T_ACK else 0):
                r = a[52 + 16 * i:68 + 16 * i]
                if len(r) < 16:
                    break
                f, q, c, m = struct.unpack(">IIII", r)
                srs.append(dict(flags=f >> 24, req_qpn=f & 0xFFFFFF,
                                resp_qpn=q & 0xFFFFFF, completed_ssn=c,
                                msn_limit=m))
            p["srs"] = srs
    elif t == T_NAK and len(e) >= 24:
        w = struct.unpack(">IIIIII", e[:24])
        p.update(code=w[0] >> 24, req_qpn=w[0] & 0xFFFFFF, detail=w[1] >> 24,
                 resp_qpn=w[1] & 0xFFFFFF, ssn=w[2], msn=w[3], param=w[4],
                 completed_ssn=w[5])
    elif t in (T_CONNECT, T_CONNECT_ACK) and len(e) >= 64:
        (vv, n, caps, epoch, token, guid, ms, mrp, sws, _, slots,
         streams) = struct.unpack(">BBHQQQBBBBII", e[:40])
        p.update(vmin=vv >> 4, vmax=vv & 15, num_addrs=n, caps=caps,
                 epoch=epoch, cx_token=token, guid=guid, max_seg_shift=ms >> 4,
                 max_rx_paths=mrp or 256, seg_win_shift=sws,
                 rx_msg_slots=slots, max_streams=streams,
                 addrs=[e[64 + 16 * i:80 + 16 * i] for i in range(n)])
    elif t == T_RESET and len(e) >= 16:
        r, vv, ra, ep = struct.unpack(">BBHQ", e[:12])
        p.update(reason=r, retry_after=ra, epoch=ep)
    p["payload"] = pkt[p["hdr_len"]:p["hdr_len"] + p["payload_len"]]
    p["crc_ok"] = len(pkt) >= 36 and crc32c(pkt[:-4]) == \
        struct.unpack(">I", pkt[-4:])[0]
    return p


def sacked(ack, psn):
    """Does ACK (parsed) report psn as received?"""
    d = (psn - ack["cum_psn"]) & 0xFFFFFFFF
    if d == 0 or d >= 0x80000000:
        return True
    i = d - 1
    return i < 256 and bool(ack["sack"][i // 8] & (0x80 >> (i % 8)))


def diff(a, b):
    """Serial number difference a - b (spec 2.3)."""
    d = (a - b) & 0xFFFFFFFF
    return d - (1 << 32) if d & 0x80000000 else d
