# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Conformance target agent: runs on the device under test (any verbs
implementation of MetaRoCE) and lets the compliance runner create RC QPs
that talk to the runner's crafted peer, look at target memory and poll
completions.  One JSON request per line over TCP, one JSON answer per line.

    /usr/bin/python3 target.py DEVICE [PORT]     (default port 4794)

Requests ({"op": ...}):
  qp        peer_ip, peer_qpn, [mr_len, recvs, recv_len, access, mtu,
            timeout, state, rq_psn, sq_psn, rd_atomic]
            -> qpn, rkey, va, len, recv_va, gid
  read      qpn, off, len          -> hex of the QP's MR bytes
  fill      qpn, off, len, byte    set MR bytes
  post_recv qpn, n, [len, bad_lkey]
  poll      qpn                    -> completions (both CQs)
  post_send qpn, opcode (send|write|read|send_imm|write_imm|fetch_add|
            cmp_swp), len, [rkey, va, off, imm, solicited, fence,
            compare_add, swap]
  foreign_mr [len]                 -> rkey, va, len of an MR in another PD
  read_foreign rkey, len           -> hex of that MR's bytes
  ud_qp     [qkey, recvs, recv_len]  -> qpn (a UD QP in RTS)
  post_ud   qpn, peer_ip, dqpn, qkey, len, [imm, off]
  state     qpn                    -> QP state
  counters  [names]                -> the device's port counters (sysfs)
  tunable   name, [value]          -> value (before setting it to value)
  destroy   qpn
"""
import ipaddress
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "metaroce", "pyverbs"))

import pyverbs.enums as e  # noqa: E402
from pyverbs.addr import AH, AHAttr, GID, GlobalRoute  # noqa: E402
from pyverbs.cq import CQ  # noqa: E402
from pyverbs.device import Context  # noqa: E402
from pyverbs.mr import MR  # noqa: E402
from pyverbs.pd import PD  # noqa: E402
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr  # noqa: E402
from pyverbs.wr import SGE, RecvWR, SendWR  # noqa: E402

from mrlib import ipv4_gid_index  # noqa: E402
from mrpkt import addr16  # noqa: E402

ACC = {"w": e.IBV_ACCESS_REMOTE_WRITE, "r": e.IBV_ACCESS_REMOTE_READ,
       "a": e.IBV_ACCESS_REMOTE_ATOMIC}
MTU = {256: e.IBV_MTU_256, 512: e.IBV_MTU_512, 1024: e.IBV_MTU_1024,
       2048: e.IBV_MTU_2048, 4096: e.IBV_MTU_4096}
OPC = {"send": e.IBV_WR_SEND, "write": e.IBV_WR_RDMA_WRITE,
       "read": e.IBV_WR_RDMA_READ, "send_imm": e.IBV_WR_SEND_WITH_IMM,
       "write_imm": e.IBV_WR_RDMA_WRITE_WITH_IMM,
       "fetch_add": e.IBV_WR_ATOMIC_FETCH_AND_ADD, "cmp_swp": e.IBV_WR_ATOMIC_CMP_AND_SWP}


def peer_gid(peer_ip):
    """The GID of a peer address: IPv4-mapped, or the IPv6 address."""
    raw = addr16(peer_ip)
    return ":".join(raw[i:i + 2].hex() for i in range(0, 16, 2))


class Target:
    def __init__(self, dev):
        self.dev = dev
        self.ctx = Context(name=dev)
        self.pd = PD(self.ctx)
        self.gid_index, self.gid, _ = ipv4_gid_index(self.ctx)
        self.qps = {}

    def sgid_index(self, peer_ip):
        """Our GID of the peer's address family (a global IPv6 one)."""
        if ":" not in peer_ip:
            return self.gid_index
        for i in range(64):
            try:
                g = str(self.ctx.query_gid(1, i))
            except Exception:
                continue
            if not g.startswith(("0000:0000:0000:0000:0000:ffff:", "fe80:",
                                 "0000:0000:0000:0000:0000:0000:0000:0000")):
                return i
        raise RuntimeError("no global IPv6 GID")

    def ah(self, peer_ip):
        gr = GlobalRoute(dgid=GID(peer_gid(peer_ip)),
                         sgid_index=self.sgid_index(peer_ip))
        gr.hop_limit = 64
        return AHAttr(gr=gr, is_global=1, port_num=1)

    def op_qp(self, peer_ip, peer_qpn, mr_len=65536, recvs=8, recv_len=4096,
              access="wra", mtu=1024, timeout=10, state="rts", rq_psn=0,
              sq_psn=0, rd_atomic=4):
        """An RC QP towards the peer, in RTS, or left in INIT or RTR with
        state="init" or "rtr" (op_rts moves it on).  rd_atomic is both its
        max_rd_atomic and its max_dest_rd_atomic."""
        acc = e.IBV_ACCESS_LOCAL_WRITE
        for c in access:
            acc |= ACC[c]
        cq, rcq = CQ(self.ctx, 256), CQ(self.ctx, 256)
        mr = MR(self.pd, mr_len, acc)
        mr.write(b"\x5a" * mr_len, mr_len)
        # Receive i lands in slot i % 16 (op_post_recv).
        rlen = 16 * recv_len
        rmr = MR(self.pd, rlen, e.IBV_ACCESS_LOCAL_WRITE)
        rmr.write(b"\xa5" * rlen, rlen)
        cap = QPCap(max_send_wr=64, max_recv_wr=max(64, recvs), max_send_sge=1,
                    max_recv_sge=1)
        qp = QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=rcq,
                                    cap=cap, sq_sig_all=1))
        attr = QPAttr(port_num=1, path_mtu=MTU[mtu])
        attr.qp_access_flags = acc
        attr.ah_attr = self.ah(peer_ip)
        attr.dest_qp_num = peer_qpn
        attr.rq_psn = rq_psn
        attr.sq_psn = sq_psn
        attr.max_dest_rd_atomic = rd_atomic
        attr.max_rd_atomic = rd_atomic
        attr.min_rnr_timer = 1
        attr.timeout = timeout
        attr.retry_cnt = 7
        attr.rnr_retry = 1
        if state == "init":
            qp.to_init(attr)
        elif state == "rtr":
            qp.to_rtr(attr)
        else:
            qp.to_rts(attr)
        q = dict(qp=qp, cq=cq, rcq=rcq, mr=mr, rmr=rmr, recv_len=recv_len,
                 nrecv=0, attr=attr)
        self.qps[qp.qp_num] = q
        self.op_post_recv(qp.qp_num, recvs, recv_len)
        return dict(qpn=qp.qp_num, rkey=mr.rkey, va=mr.buf, len=mr_len,
                    recv_va=rmr.buf, gid=str(self.gid))

    def op_rts(self, qpn):
        """A QP made with state="init" or "rtr" to RTS."""
        q = self.qps[qpn]
        q["qp"].to_rts(q["attr"])
        return {}

    def op_read(self, qpn, off, len):
        return dict(hex=self.qps[qpn]["mr"].read(len, off).hex())

    def op_read_recv(self, qpn, off, len):
        return dict(hex=self.qps[qpn]["rmr"].read(len, off).hex())

    def op_fill(self, qpn, off, len, byte):
        mr = self.qps[qpn]["mr"]
        mr.write(bytes([byte]) * len, len, off)
        return {}

    def op_post_recv(self, qpn, n, len=None, bad_lkey=False):
        """n receives; bad_lkey: with an L_Key no MR has."""
        q = self.qps[qpn]
        ln = len or q["recv_len"]
        lkey = q["rmr"].lkey ^ (0x5a00 if bad_lkey else 0)
        for _ in range(n):
            i = q["nrecv"]
            q["nrecv"] += 1
            off = (i % 16) * q["recv_len"]
            sge = SGE(q["rmr"].buf + off, ln, lkey)
            q["qp"].post_recv(RecvWR(wr_id=i, num_sge=1, sg=[sge]))
        return {}

    def op_poll(self, qpn, wait=0.0):
        q = self.qps[qpn]
        out = []
        end = time.monotonic() + wait
        while True:
            for which in ("cq", "rcq"):
                while True:
                    n, wcs = q[which].poll(16)
                    if not n:
                        break
                    for wc in wcs[:n]:
                        out.append(dict(cq=which, wr_id=wc.wr_id,
                                        status=wc.status, opcode=wc.opcode,
                                        byte_len=wc.byte_len,
                                        imm=wc.imm_data, flags=wc.wc_flags,
                                        sl=wc.sl))
            if out or time.monotonic() >= end:
                return dict(wcs=out)
            time.sleep(0.01)

    def op_post_send(self, qpn, opcode, len, rkey=0, va=0, off=0, wr_id=1,
                     imm=None, solicited=False, fence=False, compare_add=0, swap=0):
        q = self.qps[qpn]
        sge = SGE(q["mr"].buf + off, len, q["mr"].lkey)
        flags = e.IBV_SEND_SIGNALED
        if solicited:
            flags |= e.IBV_SEND_SOLICITED
        if fence:
            flags |= e.IBV_SEND_FENCE
        wr = SendWR(wr_id=wr_id, opcode=OPC[opcode], num_sge=1, sg=[sge],
                    send_flags=flags)
        if imm is not None:
            wr.imm_data = socket.htonl(imm)     # __be32 in verbs
        if opcode in ("write", "read", "write_imm"):
            wr.set_wr_rdma(rkey, va)
        elif opcode in ("fetch_add", "cmp_swp"):
            wr.set_wr_atomic(rkey, va, compare_add, swap)
        q["qp"].post_send(wr)
        return {}

    def op_ud_qp(self, qkey=0x11111111, recvs=4, recv_len=2048):
        cq, rcq = CQ(self.ctx, 64), CQ(self.ctx, 64)
        mr = MR(self.pd, 8192, e.IBV_ACCESS_LOCAL_WRITE)
        mr.write(b"\x5a" * 8192, 8192)
        rmr = MR(self.pd, 16 * recv_len + 65536, e.IBV_ACCESS_LOCAL_WRITE)
        rmr.write(b"\xa5" * (16 * recv_len), 16 * recv_len)
        cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1,
                    max_recv_sge=1)
        attr = QPAttr(port_num=1)
        attr.qkey = qkey
        qp = QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=rcq,
                                    cap=cap, sq_sig_all=1), attr)
        q = dict(qp=qp, cq=cq, rcq=rcq, mr=mr, rmr=rmr, recv_len=recv_len,
                 nrecv=0, ahs=[])
        self.qps[qp.qp_num] = q
        self.op_post_recv(qp.qp_num, recvs, recv_len)
        return dict(qpn=qp.qp_num)

    def op_post_ud(self, qpn, peer_ip, dqpn, qkey, len, imm=None, off=0):
        q = self.qps[qpn]
        ah = AH(self.pd, attr=self.ah(peer_ip))
        q["ahs"].append(ah)
        sge = SGE(q["mr"].buf + off, len, q["mr"].lkey)
        op = e.IBV_WR_SEND if imm is None else e.IBV_WR_SEND_WITH_IMM
        wr = SendWR(wr_id=len, opcode=op, num_sge=1, sg=[sge],
                    send_flags=e.IBV_SEND_SIGNALED)
        if imm is not None:
            wr.imm_data = socket.htonl(imm)     # __be32 in verbs
        wr.set_wr_ud(ah, dqpn, qkey)
        q["qp"].post_send(wr)
        return {}

    def op_state(self, qpn):
        return dict(state=self.qps[qpn]["qp"].query(e.IBV_QP_STATE)[0].qp_state)

    def op_counters(self, names=None):
        d = "/sys/class/infiniband/%s/ports/1/hw_counters" % self.dev
        if os.path.isdir(d):
            return {n: int(open(os.path.join(d, n)).read())
                    for n in names or os.listdir(d)}
        # sysfs of another network namespace: ask through netlink.
        out = subprocess.run(["rdma", "-j", "statistic", "show", "link",
                              self.dev + "/1"], capture_output=True,
                             text=True, check=True).stdout
        st = json.loads(out)[0]
        return {k: v for k, v in st.items() if isinstance(v, int) and k != "port"}

    def op_paths(self, peer_ip):
        """The paths of our connections to peer_ip as the metaroce tool of
        this tree shows them (a list of dicts, rto_us and backoff among
        them), or None where the tool is not there (another implementation
        under test)."""
        tool = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "../../tools/metaroce/metaroce")
        if not os.access(tool, os.X_OK):
            return dict(paths=None)
        out = subprocess.run([tool, "show", self.dev, "--json"], capture_output=True,
                             text=True, check=True).stdout
        want = ipaddress.ip_address(peer_ip)
        paths = []
        for d in json.loads(out)["devices"]:
            for c in d["connections"]:
                if ipaddress.ip_address(c["peer"]) == want:
                    paths += c["paths"]
        return dict(paths=paths)

    def op_tunable(self, name, value=None):
        """A tunable of the implementation under test (spec 17), or None;
        set to value if given (the answer is the value it had)."""
        path = "/sys/module/metaroce/parameters/" + name
        try:
            with open(path) as f:
                old = int(f.read())
            if value is not None:
                with open(path, "w") as f:
                    f.write(str(value))
            return dict(value=old)
        except OSError:
            return dict(value=None)

    def op_foreign_mr(self, len=4096):
        """An MR with every remote access in a protection domain of its
        own: its R_Key is valid, but for no QP of ours."""
        if not hasattr(self, "pd2"):
            self.pd2 = PD(self.ctx)
            self.foreign = []
        mr = MR(self.pd2, len, e.IBV_ACCESS_LOCAL_WRITE | ACC["w"] | ACC["r"] | ACC["a"])
        mr.write(b"\x5a" * len, len)
        self.foreign.append(mr)
        return dict(rkey=mr.rkey, va=mr.buf, len=len)

    def op_read_foreign(self, rkey, len):
        mr = next(x for x in self.foreign if x.rkey == rkey)
        return dict(hex=mr.read(len, 0).hex())

    def op_destroy(self, qpn):
        q = self.qps.pop(qpn)
        q["qp"].close()
        return {}


def serve(dev, port):
    t = Target(dev)
    # Dual stack: the runner may reach us over IPv4 or IPv6.
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    ls.bind(("::", port))
    ls.listen(1)
    print("target: %s listening on %d" % (dev, port), flush=True)
    while True:
        c, _ = ls.accept()
        f = c.makefile("rw")
        for line in f:
            req = json.loads(line)
            op = req.pop("op")
            if op == "quit":
                f.write("{}\n")
                f.flush()
                return
            try:
                ans = getattr(t, "op_" + op)(**req)
                ans["ok"] = True
            except Exception as ex:  # report, keep serving
                ans = dict(ok=False, error="%s: %s" % (type(ex).__name__, ex))
            f.write(json.dumps(ans) + "\n")
            f.flush()
        c.close()


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 4794)
