# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Build and parse MetaRoCE v1 packets (Documentation/metaroce/spec.md, 5).

Used by the compliance suite and selftests to play the peer: the UDP payload
built here is what a MetaRoCE endpoint puts after the UDP header.
"""
import struct

VERSION = 1
UDP_PORT = 4793

T_SEND, T_SEND_IMM, T_SEND_INV, T_WRITE, T_WRITE_IMM = 0x01, 0x02, 0x03, 0x04, 0x05
T_READ_REQ, T_READ_RESP, T_ATOMIC_CS, T_ATOMIC_FA = 0x06, 0x07, 0x08, 0x09
T_ATOMIC_RESP, T_STREAM_CLOSE = 0x0A, 0x0B
T_ACK, T_NAK, T_PROBE, T_PROBE_REPLY, T_SYNC = 0x20, 0x21, 0x22, 0x23, 0x24
T_CONNECT, T_CONNECT_ACK, T_CONN_CLOSE, T_RESET = 0x28, 0x29, 0x2A, 0x2B
T_DATAGRAM = 0x30

F_AR, F_SE, F_LAST, F_RETX = 0x8000, 0x4000, 0x2000, 0x1000
F_ECE, F_BKLG, F_MAC = 0x0800, 0x0400, 0x0200

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
