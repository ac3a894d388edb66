# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""State for the stateful fuzzer (tools/mrsfuzz.c) and the checks after it.

    sfuzzprep.py prep LOCAL TARGET AGENT_PORT STATE ROUND [NR NW NS [PSN]]
        Connect to the target as a peer of our own (the same connection as
        the previous round when STATE.json names one and the target still
        has it), have the target agent (target.py) create NR READ-holding,
        NW written and NS sacrificial RC QPs towards it (QP timeout 0: open
        READs wait for ever), and write STATE (mrsfuzz's input) and
        STATE.json (ours).
    sfuzzprep.py post TARGET AGENT_PORT STATE
        The target posts its work towards us: 4 READs of 64 KiB on each
        READ-holding QP (into MR offsets 64 KiB, 128 KiB, ...), then one
        SEND; one SEND on each sacrificial QP.  Prints the READ count.
    sfuzzprep.py destroy TARGET AGENT_PORT STATE
        Destroy the first READ-holding QP, its READs open; its QPN goes to
        STATE.destroyed (mrsfuzz -D).
    sfuzzprep.py check TARGET AGENT_PORT STATE REPORT
        After mrsfuzz: every READ of a QP still there completed with
        exactly the data mrsfuzz sent (pat(SSN, offset)); each written QP
        is alive, holds the valid data in every chunk a completed WRITE
        wrote and nothing in region C; no MR of any QP holds a poison byte
        (0xEE: every mutated packet carries it; the byte before names the
        class).  Then destroys the QPs.
        Prints one line per finding; exit status 1 if any.
"""
import json
import os
import sys

import mrpkt as m
from fuzzprep import agent
from peer import Peer

MR_LEN = 5 * 65536
READ_LEN = 65536
NREADS = 4
WCHUNK, NCHUNK, REGION_C = 4096, 8, 49152
POISON = 0xEE


def pat(ssn, off):
    b = (ssn * 131 + off * 7 + (off >> 8) * 13 + 1) & 0xFF
    return 0x11 if b in (POISON, 0x5A, 0xA5) else b


def pattern(ssn, start, n):
    return bytes(pat(ssn, start + i) for i in range(n))


def prep(local, target, aport, state, rnd, nr=2, nw=2, ns=3, psn=None):
    aport, rnd, nr, nw, ns = int(aport), int(rnd), int(nr), int(nw), int(ns)
    p = Peer(local, target)
    sj = state + ".json"
    if os.path.exists(sj):
        st = json.load(open(sj))
        p.cid, p.token, p.epoch, p.sport = st["cid"], st["token"], st["epoch"], st["sport"]
        p.psn = p.plw = int(psn) if psn else st["psn"]
    a = p.connect()
    if not a:
        p = Peer(local, target)
        a = p.connect()
        if not a:
            print("no CONNECT_ACK from the target")
            return 1
    # A valid packet confirms the connection: else it stays half-open and
    # is freed after half_open_timeout_ms (spec 6.4).
    p.send_raw(p.ack_pkt(m.T_ACK, 0))
    css = min(a["max_seg_shift"], 2)
    qps = []
    # One g QP: only packets beyond a segment window go to it (mrsfuzz).
    for i, role in enumerate("r" * nr + "w" * nw + "s" * ns + "g"):
        pqpn = 0x100000 + rnd * 64 + i
        q = agent(aport, target, op="qp", peer_ip=local, peer_qpn=pqpn,
                  mr_len=MR_LEN, timeout=0, rd_atomic=NREADS, recvs=16)
        qps.append(dict(tqpn=q["qpn"], pqpn=pqpn, rkey=q["rkey"], va=q["va"],
                        len=MR_LEN, role=role))
    with open(state, "w") as f:
        f.write("target %s\nlocal %s\nsport %d\ncid %d\npeer_cid %d\n"
                "token %d\npeer_token %d\nepoch %d\npsn %d\ncss %d\nslots %d\n"
                % (target, local, p.sport, p.cid, p.peer_cid, p.token,
                   p.peer_token, p.epoch, p.psn, css, a["rx_msg_slots"]))
        f.write("connect %s\n" % p.connect_pkt().hex())
        for q in qps:
            f.write("qp %d %d %d %d %d %s\n" % (q["tqpn"], q["pqpn"], q["rkey"],
                                                 q["va"], q["len"], q["role"]))
    json.dump(dict(cid=p.cid, token=p.token, epoch=p.epoch, sport=p.sport,
                   psn=p.psn, qps=qps, destroyed=[]), open(sj, "w"))
    print("connection CID 0x%x (target 0x%x), CSS %d, slots %d; QPs %s"
          % (p.cid, p.peer_cid, css, a["rx_msg_slots"],
             " ".join("%s:0x%x" % (q["role"], q["tqpn"]) for q in qps)))
    return 0


def post(target, aport, state):
    aport = int(aport)
    st = json.load(open(state + ".json"))
    n = 0
    for q in st["qps"]:
        if q["role"] == "r":
            for i in range(NREADS):
                agent(aport, target, op="post_send", qpn=q["tqpn"], opcode="read",
                      len=READ_LEN, rkey=0x1234, va=0x10000000 + i * READ_LEN,
                      off=READ_LEN * (1 + i), wr_id=i)
                n += 1
            agent(aport, target, op="post_send", qpn=q["tqpn"], opcode="send",
                  len=64, off=0, wr_id=NREADS)
        elif q["role"] == "s":
            agent(aport, target, op="post_send", qpn=q["tqpn"], opcode="send",
                  len=64, off=0, wr_id=0)
    print(n)
    return 0


def destroy(target, aport, state):
    sj = state + ".json"
    st = json.load(open(sj))
    q = next(q for q in st["qps"] if q["role"] == "r")
    agent(int(aport), target, op="destroy", qpn=q["tqpn"])
    st["destroyed"].append(q["tqpn"])
    json.dump(st, open(sj, "w"))
    with open(state + ".destroyed", "w") as f:
        f.write("".join("%d\n" % n for n in st["destroyed"]))
    print("destroyed 0x%x" % q["tqpn"])
    return 0


def check(target, aport, state, report):
    aport = int(aport)
    st = json.load(open(state + ".json"))
    rep, names, conn_dead = {}, {}, False
    for line in open(report):
        f = line.split()
        if f[0] == "qp":
            rep[int(f[1])] = dict(dead=int(f[4]), closed=int(f[6]),
                                  chunks=int(f[8], 16))
        elif f[0] == "class":
            names[int(f[1])] = f[2]
        elif f[0] == "conn_dead":
            conn_dead = f[1] == "1"

    def poisoner(mem, i):
        # Poison payloads start with their class number + 1.
        while i > 0 and mem[i - 1] == POISON:
            i -= 1
        return names.get(mem[i - 1], "?") if i else "?"

    bad = []
    counts = dict(reads=0, read_bytes=0, chunks=0, qps=0)
    for q in st["qps"]:
        qpn = q["tqpn"]
        if qpn in st["destroyed"]:
            continue
        r = rep.get(qpn, dict(dead=0, closed=0, chunks=0))
        mem = bytes.fromhex(agent(aport, target, op="read", qpn=qpn, off=0,
                                  len=MR_LEN)["hex"])
        counts["qps"] += 1
        if POISON in mem:
            i = mem.index(POISON)
            bad.append("QP 0x%x (%s): poison at MR offset %d (%d bytes), "
                       "class %s" % (qpn, q["role"], i, mem.count(POISON),
                                     poisoner(mem, i)))
        if q["role"] == "r":
            wcs = agent(aport, target, op="poll", qpn=qpn, wait=2.0)["wcs"]
            reads = {w["wr_id"]: w for w in wcs if w["cq"] == "cq" and w["wr_id"] < NREADS}
            for i in range(NREADS):
                w = reads.get(i)
                if w is None or w["status"] != 0:
                    bad.append("QP 0x%x: READ %d (SSN %d) %s" %
                               (qpn, i, i, "not completed" if w is None else
                                "completed with status %d" % w["status"]))
                    continue
                got = mem[READ_LEN * (1 + i):READ_LEN * (2 + i)]
                want = pattern(i, 0, READ_LEN)
                if got != want:
                    diff = [k for k in range(READ_LEN) if got[k] != want[k]]
                    bad.append("QP 0x%x: READ %d (SSN %d) completed with wrong "
                               "data: %d bytes differ, first at %d (0x%02x, "
                               "want 0x%02x)" % (qpn, i, i, len(diff), diff[0],
                                                 got[diff[0]], want[diff[0]]))
                    continue
                counts["reads"] += 1
                counts["read_bytes"] += READ_LEN
        if q["role"] in "wg":
            state_ = agent(aport, target, op="state", qpn=qpn)["state"]
            # After the lifecycle classes the connection is gone, and
            # with it the streams.
            if not conn_dead and (state_ != 3 or r["dead"]):
                bad.append("QP 0x%x (%s): state %d, dead %d: only valid or "
                           "harmless packets went to it" %
                           (qpn, q["role"], state_, r["dead"]))
        if q["role"] == "w":
            for c in range(NCHUNK):
                if not r["chunks"] & (1 << c):
                    continue
                got = mem[c * WCHUNK:(c + 1) * WCHUNK]
                if got != pattern(0, c * WCHUNK, WCHUNK):
                    bad.append("QP 0x%x (w): chunk %d of a completed WRITE "
                               "does not hold its data" % (qpn, c))
                else:
                    counts["chunks"] += 1
            c = mem[REGION_C:65536]
            if c != b"\x5a" * len(c):
                i = next(k for k in range(len(c)) if c[k] != 0x5A)
                bad.append("QP 0x%x (w): region C was written: %d bytes, the "
                           "first at MR offset %d: %s" %
                           (qpn, sum(1 for b in c if b != 0x5A), REGION_C + i,
                            c[i:i + 16].hex()))
        agent(aport, target, op="destroy", qpn=qpn)
    print("checked %(qps)d QPs: %(reads)d READs (%(read_bytes)d bytes) and "
          "%(chunks)d written chunks verified" % counts)
    for b in bad:
        print("FAIL " + b)
    return 1 if bad else 0


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    return dict(prep=prep, post=post, destroy=destroy, check=check)[cmd](*args)


if __name__ == "__main__":
    sys.exit(main())
