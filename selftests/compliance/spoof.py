# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Spoof packets at a live connection (hostile input, issue 8).

    spoof.py CAPTURE TARGET_IP PEER_IP KIND COUNT

From a capture of live traffic between TARGET_IP and PEER_IP, take the
latest packets the peer sent to the target and send COUNT variants of KIND:
  token    valid-looking packets from a wrong source address and random
           ports, with a wrong Token            (drop_bad_token)
  scid     the right Token but a wrong SCID     (drop_bad_token)
  psn      the right credentials, PSN beyond PLW + 256 or PLW beyond the
           65536 window                         (drop_out_of_window)
  ack      ACKs acknowledging PSNs never sent   (drop_out_of_window)
  replay   captured sequenced packets and ACKs again, from other source
           ports (old PSNs: duplicate, late or out of window; stale ACKs)
  connect  a CONNECT from the peer's address with another SCID and token
"""
import random
import struct
import sys

import mrpkt as m
from capture import pcap_packets
from peer import Peer


def main():
    cap, target, peer, kind, count = sys.argv[1:6]
    count = int(count)
    pk = [pl for s, d, pl in pcap_packets(cap) if s == peer and d == target]
    seq = [pl for pl in pk if 0x01 <= pl[1] <= 0x1F]
    if not seq:
        print("no sequenced packets from %s to %s in the capture" % (peer, target))
        return 1
    back = [pl for s, d, pl in pcap_packets(cap) if s == target and d == peer
            and 0x01 <= pl[1] <= 0x1F]
    acks = [pl for pl in pk if pl[1] == m.T_ACK]
    p = Peer(peer, target, listen=False)
    last = seq[-1]
    spoof_src = m.spoofed(peer)
    for i in range(count):
        b = bytearray(random.choice(seq[-64:])[:-4])
        src, sport = peer, random.randrange(1024, 65536)
        if kind == "token":
            b[24:32] = struct.pack(">Q", random.randrange(1, 1 << 64))
            src = spoof_src
        elif kind == "scid":
            b[12:16] = struct.pack(">I", random.randrange(1, 0xFFFFFFFF))
        elif kind == "psn":
            plw = struct.unpack(">I", last[20:24])[0]
            if i % 2:
                psn = (plw + 256 + random.randrange(0, 1 << 20)) & 0xFFFFFFFF
                b[16:24] = struct.pack(">II", psn, plw)
            else:
                far = (plw + 70000 + random.randrange(0, 1 << 20)) & 0xFFFFFFFF
                b[16:24] = struct.pack(">II", far, far)
        elif kind == "ack":
            bb = m.parse_bth(last)
            # Far beyond the PSNs the target has sent.
            hi = m.parse_bth(back[-1])["psn"] if back else bb["psn"]
            akx = struct.pack(">IIIHHBBH", (hi + 0x01000000 + i) & 0xFFFFFFFF,
                              0, 0, 0, 0, 0, 0, 0) + b"\xff" * 32
            b = bytearray(m.bth(m.T_ACK, 84, 0, dcid=bb["dcid"], scid=bb["scid"],
                                token=bb["token"], psn=i) + akx)
        elif kind == "replay":
            # Sequenced packets and ACKs (probes are answered by design).
            b = bytearray(random.choice(seq + acks)[:-4])
        elif kind == "connect":
            q = Peer(peer, target, listen=False)
            b = bytearray(q.connect_pkt()[:-4])
        p.send_raw(m.seal(bytes(b)), src=src, sport=sport)
    print("sent %d %s packets" % (count, kind))
    return 0


if __name__ == "__main__":
    sys.exit(main())
