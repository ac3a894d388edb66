# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check a tcpdump capture of real MetaRoCE traffic as the Wireshark
dissector (tools/wireshark/metaroce.lua) decodes it, through tshark.

    capcheck.py CAPTURE CHECK [ARGS...]

Checks (each prints what it found and exits 1 on the first mismatch):
  all                     every UDP datagram to the MetaRoCE port decodes,
                          Ver 1, known Type, HdrLen as in spec 5.6, UDP
                          length per spec 4.4, CRC32C good
  ud CIP CQPN SIP SQPN SIZE N
                          DATAGRAMs of ibv_ud_pingpong between client CIP
                          (QP CQPN) and server SIP: N each way, with the
                          QPNs, Q_Key 0x11111111 and Payload Length SIZE
  rc CIP CQPN SIP SQPN SIZE N
                          SENDs of ibv_rc_pingpong: N messages each way
                          with SSNs consecutive, segments covering SIZE
                          exactly, LAST on the last one, QPNs as printed
  psn                     PSN rules per path: new PSNs strictly increase,
                          PLW <= PSN < PLW + 256, PLW never moves back;
                          ACKs acknowledge only PSNs that were sent
  connect IP_A IP_B       one CONNECT / CONNECT_ACK exchange whose CX is
                          valid and lists the sender's address first
  ops TYPE...             each named packet Type occurs
  rdma                    READ_RESP answers a READ_REQ (SSN, length,
                          swapped QPNs), ATOMIC_RESP an ATOMIC request
  carried                 READ_RESP/ATOMIC_RESP packets carry AKXs (flag
                          AKX, spec 8.6) that acknowledge their request's
                          PSN ("psn" checks every carried AKX as an ACK)
"""
import ipaddress
import subprocess
import sys
import os

HERE = os.path.dirname(os.path.abspath(__file__))
LUA = os.path.join(HERE, "..", "..", "tools", "wireshark", "metaroce.lua")

FIELDS = [
    "frame.number", "ip.src", "ip.dst", "udp.srcport", "udp.dstport",
    "udp.length", "metaroce.ver", "metaroce.type", "metaroce.flags",
    "metaroce.hdrlen", "metaroce.path_id", "metaroce.payload_len",
    "metaroce.dcid", "metaroce.scid", "metaroce.psn", "metaroce.ack_seq",
    "metaroce.plw", "metaroce.token", "metaroce.sx.segshift",
    "metaroce.sx.dqpn", "metaroce.sx.sqpn", "metaroce.sx.ssn",
    "metaroce.sx.msn", "metaroce.sx.msg_len", "metaroce.sx.offset",
    "metaroce.rx.rkey", "metaroce.dx.dqpn", "metaroce.dx.sqpn",
    "metaroce.dx.qkey", "metaroce.akx.cum_psn", "metaroce.akx.num_sr",
    "metaroce.akx.flags", "metaroce.akx.acked_path_id",
    "metaroce.akx.sacked_psn", "metaroce.sr.req_qpn", "metaroce.sr.resp_qpn",
    "metaroce.cx.vmin", "metaroce.cx.vmax", "metaroce.cx.num_addrs",
    "metaroce.cx.max_seg_shift", "metaroce.cx.seg_win_shift",
    "metaroce.cx.rx_msg_slots", "metaroce.cx.addr", "metaroce.cx.token",
    "metaroce.crc.status", "metaroce.mac", "_ws.expert.message",
]

T = dict(SEND=0x01, SEND_IMM=0x02, SEND_INV=0x03, WRITE=0x04, WRITE_IMM=0x05,
         READ_REQ=0x06, READ_RESP=0x07, ATOMIC_CS=0x08, ATOMIC_FA=0x09,
         ATOMIC_RESP=0x0A, STREAM_CLOSE=0x0B, ACK=0x20, NAK=0x21, PROBE=0x22,
         PROBE_REPLY=0x23, SYNC=0x24, CONNECT=0x28, CONNECT_ACK=0x29,
         CONN_CLOSE=0x2A, RESET=0x2B, DATAGRAM=0x30)
NAME = {v: k for k, v in T.items()}
HDRLEN = {0x01: 14, 0x02: 15, 0x03: 15, 0x04: 17, 0x05: 18, 0x06: 17,
          0x07: 14, 0x08: 22, 0x09: 22, 0x0A: 16, 0x0B: 16, 0x21: 14,
          0x22: 12, 0x23: 25, 0x2A: 10, 0x2B: 12, 0x30: 12}
F_LAST, F_RETX, F_MAC, F_AKX = 0x2000, 0x1000, 0x0200, 0x0100


def carries(p):
    """Does stream packet p carry an AKX (spec 8.6)?"""
    return 0x01 <= p.type <= 0x0B and bool(p.flags & F_AKX)


def num(v):
    return int(v, 0) if v else None


class Pkt(dict):
    def __getattr__(self, k):
        v = self.get(k, "")
        if k in ("srcip", "dstip", "addr", "expert", "crc", "sacked", "mac"):
            return v
        return num(v.split(",")[0]) if v else None


def load(cap, port=4793):
    cmd = ["tshark", "-n", "-X", "lua_script:" + LUA, "-r", cap,
           "-o", "metaroce.udp_port:%d" % port, "-Y", "udp.port == %d" % port,
           "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
           "-E", "aggregator=,"]
    for fld in FIELDS:
        cmd += ["-e", fld]
    cache = cap + ".fields"
    if os.path.exists(cache) and os.path.getmtime(cache) >= os.path.getmtime(cap):
        out = open(cache).read()         # tshark is slow under TCG: once per capture
    else:
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        with open(cache, "w") as f:
            f.write(out)
    pkts = []
    for line in out.splitlines():
        vals = line.split("\t")
        d = Pkt()
        for fld, v in zip(FIELDS, vals):
            key = fld.split(".")[-1]
            if fld == "ip.src":
                key = "srcip"
            elif fld == "ip.dst":
                key = "dstip"
            elif fld == "metaroce.crc.status":
                key = "crc"
            elif fld == "metaroce.cx.token":
                key = "cx_token"
            elif fld == "metaroce.dx.dqpn":
                key = "dx_dqpn"
            elif fld == "metaroce.dx.sqpn":
                key = "dx_sqpn"
            elif fld == "metaroce.akx.flags":
                key = "ack_flags"
            elif fld == "metaroce.akx.sacked_psn":
                key = "sacked"
            elif fld == "_ws.expert.message":
                key = "expert"
            elif fld.startswith("metaroce.sr."):
                key = "sr_" + key
            d[key] = v
        pkts.append(d)
    return pkts


class Fail(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Fail(msg)


def check_all(pkts):
    need(pkts, "no MetaRoCE packets captured")
    for p in pkts:
        fr = p.number
        need(p.ver == 1, "frame %d: Ver %s" % (fr, p.get("ver")))
        need(p.type in NAME, "frame %d: undefined Type %s" % (fr, p.get("type")))
        fix = HDRLEN.get(p.type)
        if fix and carries(p):
            fix += 13
        if fix:
            need(p.hdrlen == fix, "frame %d: %s HdrLen %d, spec 5.6 says %d" %
                 (fr, NAME[p.type], p.hdrlen, fix))
        mac = 16 if p.flags & F_MAC else 0
        need(p.length == 8 + p.hdrlen * 4 + p.payload_len + mac + 4,
             "frame %d: UDP length %d, headers say %d" %
             (fr, p.length, 8 + p.hdrlen * 4 + p.payload_len + mac + 4))
        need(p.crc == "1", "frame %d: CRC32C status %r" % (fr, p.crc))
        need(p.dstport == 4793, "frame %d: UDP destination port %d" % (fr, p.dstport))
        need(not p.expert, "frame %d: dissector reports %s" % (fr, p.expert))
    print("%d packets, all decoded, lengths consistent, CRC32C good" % len(pkts))


def check_ud(pkts, cip, cqpn, sip, sqpn, size, n):
    dg = [p for p in pkts if p.type == T["DATAGRAM"]]
    for ia, a, ib, b in ((cip, cqpn, sip, sqpn), (sip, sqpn, cip, cqpn)):
        mine = [p for p in dg if p.srcip == ia and p.dstip == ib]
        for p in mine:
            need(p.dx_sqpn == a and p.dx_dqpn == b,
                 "frame %d: %s -> %s QPN 0x%x -> 0x%x, pingpong used 0x%x -> 0x%x" %
                 (p.number, ia, ib, p.dx_sqpn, p.dx_dqpn, a, b))
        need(len(mine) == n, "%d DATAGRAMs QPN 0x%x -> 0x%x, expected %d" %
             (len(mine), a, b, n))
        for p in mine:
            need(p.qkey == 0x11111111, "frame %d: Q_Key 0x%x" % (p.number, p.qkey))
            need(p.payload_len == size, "frame %d: Payload Length %d, sent %d" %
                 (p.number, p.payload_len, size))
            need(p.dcid == 0 and p.scid == 0 and p.token == 0,
                 "frame %d: DATAGRAM with DCID/SCID/Token set" % p.number)
            need(p.srcport >= 0xC000, "frame %d: datagram source port %d < 0xC000" %
                 (p.number, p.srcport))
    print("%d DATAGRAMs each way, QPNs 0x%x/0x%x, %d bytes, Q_Key 0x11111111" %
          (n, cqpn, sqpn, size))


def check_rc(pkts, cip, cqpn, sip, sqpn, size, n):
    sends = [p for p in pkts if p.type == T["SEND"]]
    for ia, a, ib, b in ((cip, cqpn, sip, sqpn), (sip, sqpn, cip, cqpn)):
        msgs = {}
        for p in sends:
            if p.srcip != ia or p.dstip != ib:
                continue
            need(p.sqpn == a and p.dqpn == b,
                 "frame %d: %s -> %s QPN 0x%x -> 0x%x, pingpong used 0x%x -> 0x%x" %
                 (p.number, ia, ib, p.sqpn, p.dqpn, a, b))
            msgs.setdefault(p.ssn, []).append(p)
        need(len(msgs) == n, "%d SEND messages QPN 0x%x -> 0x%x, expected %d" %
             (len(msgs), a, b, n))
        ssns = sorted(msgs)
        need(ssns == list(range(ssns[0], ssns[0] + n)),
             "SSNs not consecutive: %s" % ssns[:10])
        msns = set()
        for ssn, segs in msgs.items():
            seg = 256 << segs[0].segshift
            got = {}
            for p in segs:
                need(p.msg_len == size, "frame %d: Message Length %d, sent %d" %
                     (p.number, p.msg_len, size))
                need(p.offset % seg == 0, "frame %d: Offset %d not a multiple of %d" %
                     (p.number, p.offset, seg))
                need(256 << p.segshift == seg, "frame %d: SegShift changed" % p.number)
                last = p.offset + p.payload_len == size
                need(bool(p.flags & F_LAST) == last, "frame %d: LAST %s at %d+%d of %d" %
                     (p.number, bool(p.flags & F_LAST), p.offset, p.payload_len, size))
                need(last or p.payload_len == seg,
                     "frame %d: short segment without LAST" % p.number)
                if p.offset in got:
                    need(got[p.offset] == p.payload_len,
                         "frame %d: resent segment differs" % p.number)
                got[p.offset] = p.payload_len
                msns.add(p.msn)
            need(sum(got.values()) == size and sorted(got) ==
                 list(range(0, size, seg)) if size else list(got) == [0],
                 "SSN %d: segments %s do not cover %d bytes" % (ssn, sorted(got), size))
        need(len(msns) == n, "%d distinct MSNs for %d SENDs" % (len(msns), n))
    print("%d SEND messages each way, QPNs 0x%x/0x%x, %d bytes in whole segments" %
          (n, cqpn, sqpn, size))


def diff(a, b):
    d = (a - b) & 0xFFFFFFFF
    return d - (1 << 32) if d & 0x80000000 else d


def check_psn(pkts):
    paths = {}
    sent = {}
    for p in pkts:
        if not 0x01 <= p.type <= 0x1F:
            continue
        key = (p.srcip, p.dstip, p.scid, p.path_id)
        st = paths.setdefault(key, dict(hi=None, plw=None, n=0))
        need(0 <= diff(p.psn, p.plw) < 256, "frame %d: PSN %d outside [PLW %d, +256)" %
             (p.number, p.psn, p.plw))
        if st["plw"] is not None:
            need(diff(p.plw, st["plw"]) >= 0, "frame %d: PLW moved back %d -> %d" %
                 (p.number, st["plw"], p.plw))
        st["plw"] = p.plw
        if not p.flags & F_RETX or st["hi"] is None or diff(p.psn, st["hi"]) > 0:
            if st["hi"] is not None:
                need(diff(p.psn, st["hi"]) > 0, "frame %d: new PSN %d not above %d" %
                     (p.number, p.psn, st["hi"]))
            st["hi"] = p.psn
        st["n"] += 1
        sent.setdefault(key, set()).add(p.psn)
    need(paths, "no sequenced packets")
    acks = 0
    carried = 0
    for p in pkts:
        if (p.type not in (T["ACK"], T["PROBE_REPLY"]) and not carries(p)) or \
                p.ack_flags & 0x80:
            continue            # NO_STATE: nothing to check
        key = (p.dstip, p.srcip, p.dcid, p.acked_path_id if carries(p) else p.path_id)
        carried += carries(p)
        got = sent.get(key)
        if p.type == T["PROBE_REPLY"] and not got:
            continue            # a probed path that has not carried data yet
        need(got, "frame %d: ACK for path %s that sent nothing" % (p.number, key))
        hi = paths[key]["hi"]
        need(diff(p.cum_psn, hi) <= 0, "frame %d: Cumulative PSN %d beyond highest sent %d" %
             (p.number, p.cum_psn, hi))
        for s in filter(None, p.sacked.split(",")):
            need(int(s) in got, "frame %d: SACK of PSN %s never sent" % (p.number, s))
        acks += 1
    need(acks, "no ACKs")
    print("%d ACKs, %d of them carried in stream packets, cover only sent PSNs" %
          (acks, carried))
    for k, st in sorted(paths.items()):
        print("path %s:%s CID 0x%x id %d: %d sequenced packets, PSN up to %d" %
              (k[0], k[1], k[2], k[3], st["n"], st["hi"]))
    print("%d ACKs, each within what its path sent" % acks)


def v4mapped(ip):
    return str(ipaddress.IPv6Address("::ffff:" + ip))


def check_connect(pkts, ip_a, ip_b):
    cs = [p for p in pkts if p.type == T["CONNECT"]]
    ca = [p for p in pkts if p.type == T["CONNECT_ACK"]]
    need(cs and ca, "CONNECT %d, CONNECT_ACK %d" % (len(cs), len(ca)))
    for p in cs + ca:
        need(p.vmin == 1 and p.vmax == 1, "frame %d: VMin/VMax %s/%s" %
             (p.number, p.vmin, p.vmax))
        need(1 <= p.num_addrs <= 8, "frame %d: Num Addrs %d" % (p.number, p.num_addrs))
        need(p.hdrlen == 24 + 4 * p.num_addrs, "frame %d: HdrLen %d for %d addresses" %
             (p.number, p.hdrlen, p.num_addrs))
        addrs = p.addr.split(",")
        need(len(addrs) == p.num_addrs, "frame %d: %d addresses decoded" %
             (p.number, len(addrs)))
        need(ipaddress.IPv6Address(addrs[0]) == ipaddress.IPv6Address(v4mapped(p.srcip)),
             "frame %d: first plane address %s, source %s" % (p.number, addrs[0], p.srcip))
        need(0 <= p.max_seg_shift <= 4, "frame %d: Max Seg Shift %d" %
             (p.number, p.max_seg_shift))
        need(6 <= p.seg_win_shift <= 16, "frame %d: Seg Win Shift %d" %
             (p.number, p.seg_win_shift))
        need(64 <= p.rx_msg_slots <= 1048576, "frame %d: Rx Message Slots %d" %
             (p.number, p.rx_msg_slots))
        need(p.scid not in (0, 0xFFFFFFFF), "frame %d: SCID 0x%x" % (p.number, p.scid))
    for p in cs:
        need(p.dcid == 0 and p.token == 0, "frame %d: CONNECT with DCID/Token" % p.number)
    c = cs[0]
    acks = [p for p in ca if p.dcid == c.scid]
    need(acks, "no CONNECT_ACK answers CONNECT SCID 0x%x" % c.scid)
    a = acks[0]
    need(a.token == c.cx_token, "CONNECT_ACK Token 0x%x is not the CONNECT's CX Token 0x%x" %
         (a.token, c.cx_token))
    need({c.srcip, a.srcip} == {ip_a, ip_b}, "handshake between %s and %s" %
         (c.srcip, a.srcip))
    # Later packets of the connection carry the peer's CID and token.
    later = [p for p in pkts if p.number > a.number and p.type < 0x28 and
             p.srcip == c.srcip and p.dcid]
    need(later, "no packets after the handshake")
    for p in later:
        need(p.dcid == a.scid and p.scid == c.scid and p.token == a.cx_token,
             "frame %d: DCID/SCID/Token 0x%x/0x%x/0x%x, handshake gave 0x%x/0x%x/0x%x" %
             (p.number, p.dcid, p.scid, p.token, a.scid, c.scid, a.cx_token))
    print("CONNECT %s -> CONNECT_ACK %s: CIDs 0x%x/0x%x, %d later packets use them" %
          (c.srcip, a.srcip, c.scid, a.scid, len(later)))


def check_ops(pkts, names):
    seen = {p.type for p in pkts}
    for n in names:
        need(T[n] in seen, "no %s packet" % n)
    print("present: %s" % " ".join(names))


def first_requests(pkts):
    """READ and ATOMIC requests by (source QPN, destination QPN, SSN), each
    its first transmission: a resend (a TLP, or a request whose
    acknowledgment was lost) may follow the response."""
    reqs = {}
    for p in pkts:
        if p.type in (T["READ_REQ"], T["ATOMIC_CS"], T["ATOMIC_FA"]):
            reqs.setdefault((p.sqpn, p.dqpn, p.ssn), p)
    return reqs


def check_rdma(pkts):
    reqs = first_requests(pkts)
    nr = 0
    for p in pkts:
        if p.type not in (T["READ_RESP"], T["ATOMIC_RESP"]):
            continue
        q = reqs.get((p.dqpn, p.sqpn, p.ssn))
        need(q, "frame %d: %s SSN %d answers no request" % (p.number, NAME[p.type], p.ssn))
        need(q.number < p.number, "frame %d: response before its request" % p.number)
        need(p.msg_len == q.msg_len, "frame %d: response length %d, request %d" %
             (p.number, p.msg_len, q.msg_len))
        if p.type == T["ATOMIC_RESP"]:
            need(q.type != T["READ_REQ"] and p.msg_len == 8,
                 "frame %d: ATOMIC_RESP to a READ" % p.number)
        else:
            need(q.type == T["READ_REQ"], "frame %d: READ_RESP to an atomic" % p.number)
        nr += 1
    need(nr, "no READ or ATOMIC responses")
    print("%d responses, each matching its request's SSN, QPNs and length" % nr)


def check_carried(pkts):
    reqs = first_requests(pkts)
    n = 0
    for p in pkts:
        if p.type not in (T["READ_RESP"], T["ATOMIC_RESP"]) or not carries(p):
            continue
        q = reqs.get((p.dqpn, p.sqpn, p.ssn))
        if not q or p.acked_path_id != q.path_id:
            continue            # it carries another path's ACK
        got = {int(s) for s in filter(None, p.sacked.split(","))}
        need(diff(q.psn, p.cum_psn) <= 0 or q.psn in got,
             "frame %d: carried AKX for path %d (cum %d) misses request PSN %d" %
             (p.number, p.acked_path_id, p.cum_psn, q.psn))
        n += 1
    need(n, "no response carries its request's ACK")
    print("%d responses carry an AKX reporting their request" % n)


def main(argv):
    cap, what, args = argv[1], argv[2], argv[3:]
    pkts = load(cap)
    try:
        if what == "all":
            check_all(pkts)
        elif what in ("ud", "rc"):
            cip, c, sip, s, size, n = args
            (check_ud if what == "ud" else check_rc)(
                pkts, cip, int(c, 0), sip, int(s, 0), int(size), int(n))
        elif what == "psn":
            check_psn(pkts)
        elif what == "connect":
            check_connect(pkts, *args)
        elif what == "ops":
            check_ops(pkts, args)
        elif what == "rdma":
            check_rdma(pkts)
        elif what == "carried":
            check_carried(pkts)
        else:
            print("unknown check " + what)
            return 2
    except Fail as e:
        print("FAIL: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
