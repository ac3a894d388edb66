# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The MetaRoCE packets of a capture: a classic pcap file as tcpdump -w
writes it, of Ethernet or raw IP frames."""
import struct

import mrpkt as m


def pcap_packets(path, port=m.UDP_PORT):
    """(source, destination, UDP payload) of every IPv4 UDP datagram to
    port in the capture, in order; addresses dotted.  A frame that holds a
    UDP GSO batch gives each of its packets."""
    data = open(path, "rb").read()
    linktype = struct.unpack("<I", data[20:24])[0]
    off, out = 24, []
    while off + 16 <= len(data):
        incl = struct.unpack("<I", data[off + 8:off + 12])[0]
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        ip = frame[14:] if linktype == 1 else frame
        if len(ip) < 28 or ip[0] >> 4 != 4 or ip[9] != 17:
            continue
        ihl = (ip[0] & 15) * 4
        dport, ulen = struct.unpack(">HH", ip[ihl + 2:ihl + 6])
        if dport == port:
            out += [(".".join(map(str, ip[12:16])), ".".join(map(str, ip[16:20])), pl)
                    for pl in m.split_batch(ip[ihl + 8:ihl + ulen])]
    return out
