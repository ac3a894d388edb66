# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Prepare a fuzzing corpus (tools/mrfuzz.c format) for the hostile input
test: connect to the target as a peer of its own, have the target agent
(target.py) attach an RC QP to that connection, and write valid packets of
every type for it (class F), plus the MetaRoCE packets of a capture of live
traffic (class L, never sent with valid credentials by the fuzzer).

    fuzzprep.py LOCAL_IP TARGET_IP AGENT_PORT CAPTURE OUT [STATE [NEXT_PSN]]

STATE keeps our connection's identity between runs, so that each run
reconnects to the same connection (a resent CONNECT) and attaches a fresh
QP; NEXT_PSN is where the previous fuzzing run left the path.
"""
import json
import os
import socket
import struct
import sys

import mrpkt as m
from capture import pcap_packets
from peer import Peer


def agent(port, target_ip, **req):
    s = socket.create_connection((target_ip, port), timeout=30)
    f = s.makefile("rw")
    f.write(json.dumps(req) + "\n")
    f.flush()
    ans = json.loads(f.readline())
    s.close()
    if not ans.get("ok"):
        raise RuntimeError("agent: %s" % ans)
    return ans


def new_peer(local, target):
    """A connection of a new identity, or None (said why)."""
    p = Peer(local, target)
    if p.connect():
        return p
    print("no CONNECT_ACK from the target")
    return None


def main():
    local, target, aport, cap, out = sys.argv[1:6]
    state = sys.argv[6] if len(sys.argv) > 6 else None
    p = Peer(local, target)
    if state and os.path.exists(state):
        st = json.load(open(state))
        p.cid, p.token, p.epoch, p.sport = st["cid"], st["token"], st["epoch"], st["sport"]
        p.psn = p.plw = int(sys.argv[7]) if len(sys.argv) > 7 else st["psn"]
    if not p.connect():
        # The fuzzing may have failed our connection or changed it beyond
        # what a resent CONNECT restores: start over with a new identity.
        p = new_peer(local, target)
        if not p:
            return 1
    try:
        q = agent(int(aport), target, op="qp", peer_ip=local, peer_qpn=p.qpn)
    except RuntimeError as err:
        # The target's new QP attached to our connection and went to the
        # error state with it before reaching RTS (its modify then fails
        # EINVAL): the connection the last run fuzzed may fail some time
        # after its resent CONNECT was answered, when its paths' probes
        # run out (the fuzzer answers none).  Once more, on a new one.
        print("agent: %s; again on a new connection" % err)
        p = new_peer(local, target)
        if not p:
            return 1
        q = agent(int(aport), target, op="qp", peer_ip=local, peer_qpn=p.qpn)
    qpn, rkey, va = q["qpn"], q["rkey"], q["va"]
    seqs = []

    def s(t, ext, payload=b"", **kw):
        seqs.append(p.seq_pkt(t, ext, payload, **kw)[0])

    for ssn in range(4):
        s(m.T_SEND, m.sx(qpn, p.qpn, ssn, ssn, 300, 0), b"s" * 300)
        s(m.T_WRITE, m.sx(qpn, p.qpn, ssn, 0, 2048, 1024) + m.rx(va + 64, rkey),
          b"w" * 1024)
    s(m.T_SEND_IMM, m.sx(qpn, p.qpn, 5, 4, 16) + b"IMMD", b"i" * 16)
    s(m.T_SEND_INV, m.sx(qpn, p.qpn, 6, 5, 16) + struct.pack(">I", rkey), b"v" * 16)
    s(m.T_WRITE_IMM, m.sx(qpn, p.qpn, 7, 6, 8) + m.rx(va, rkey) + b"IMMD", b"x" * 8)
    s(m.T_READ_REQ, m.sx(qpn, p.qpn, 8, 0, 4096) + m.rx(va, rkey))
    s(m.T_READ_RESP, m.sx(qpn, p.qpn, 0, 0, 512, 0), b"r" * 512)
    s(m.T_ATOMIC_CS, m.sx(qpn, p.qpn, 9, 0, 8) + m.atx(va + 8, 5, 0x5a5a5a5a5a5a5a5a, rkey))
    s(m.T_ATOMIC_FA, m.sx(qpn, p.qpn, 10, 0, 8) + m.atx(va + 16, 1, 0, rkey))
    s(m.T_ATOMIC_RESP, m.sx(qpn, p.qpn, 0, 0, 8) + struct.pack(">Q", 7))
    s(m.T_STREAM_CLOSE, m.sx(qpn, p.qpn, 0) + b"\1\0\0\0\0\0\0\0")
    kw = p.hdr_kw()
    ctrl = [
        m.packet(m.T_ACK, struct.pack(">IIIHHBBH", 0, 0, 0, 0, 0, 1, 0, 0) +
                 b"\x80" + b"\0" * 31 + struct.pack(">IIII", 0x80000000 | qpn,
                                                    p.qpn, 0, 8), **kw),
        m.packet(m.T_NAK, struct.pack(">IIIIII", (1 << 24) | qpn, p.qpn, 0, 0, 100, 0), **kw),
        m.packet(m.T_PROBE, b"\0" * 16, b"\0" * 64, **kw),
        m.packet(m.T_PROBE_REPLY, b"\0" * 68, **kw),
        m.packet(m.T_SYNC, struct.pack(">I", 2 << 24) +
                 struct.pack(">III", qpn, p.qpn, 0) * 2, **kw),
        m.packet(m.T_CONN_CLOSE, struct.pack(">II", 1 << 24, 0), **kw),
        m.packet(m.T_RESET, struct.pack(">BBHQI", 1, 0x11, 0, 1, 0), **kw),
        p.connect_pkt(m.T_CONNECT_ACK),
        p.connect_pkt(m.T_CONNECT),
        m.datagram(1, 2, m.GSI_QKEY, b"g" * 256),
        m.datagram(qpn, 2, 0x11111111, b"u" * 64, imm=5),
    ]
    if state:
        json.dump(dict(cid=p.cid, token=p.token, epoch=p.epoch, sport=p.sport,
                       psn=p.psn), open(state, "w"))
    live = [pl for _, _, pl in pcap_packets(cap)]
    with open(out, "w") as f:
        for pkt in seqs + ctrl:
            f.write("F %s\n" % pkt.hex())
        for pkt in live[:2000]:
            f.write("L %s\n" % pkt.hex())
    print("corpus: %d packets of our connection (QP 0x%x), %d of live traffic"
          % (len(seqs) + len(ctrl), qpn, len(live[:2000])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
