# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Shared helpers for the MetaRoCE pyverbs selftests (run with /usr/bin/python3).

Both devices are opened from one process: device access is not namespaced,
only the netdevs (and so the addresses) are.
"""
import os
import select
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

QKEY = 0x11111111
GRH_LEN = 40
ACCESS = e.IBV_ACCESS_LOCAL_WRITE


class TestFailure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise TestFailure(what)


def rdma_errno(fn):
    """The errno value fn() fails with (PyverbsRDMAError), or 0."""
    try:
        fn()
    except PyverbsRDMAError as ex:
        return ex.error_code
    return 0


def ipv4_gid_index(ctx, port=1):
    """Index of the port's IPv4-mapped (RoCE v2) GID, and the address."""
    for i in range(64):
        try:
            gid = str(ctx.query_gid(port, i))
        except Exception:
            continue
        if gid.startswith('0000:0000:0000:0000:0000:ffff:'):
            h = gid.split(':')[6:]
            addr = bytes([int(h[0][:2], 16), int(h[0][2:], 16),
                          int(h[1][:2], 16), int(h[1][2:], 16)])
            return i, gid, addr
    raise TestFailure('no IPv4 GID on %s' % ctx.name)


def new_event_fd(make):
    """Call make(); return its result and the uverbs event file descriptor
    (async events or completion channel) it opened.  pyverbs does not expose
    them, and its blocking calls hold the GIL, so tests select() on them."""
    def event_fds():
        fds = set()
        for fd in os.listdir('/proc/self/fd'):
            try:
                if 'infinibandevent' in os.readlink('/proc/self/fd/' + fd):
                    fds.add(int(fd))
            except OSError:
                pass
        return fds
    before = event_fds()
    obj = make()
    new = event_fds() - before
    if len(new) != 1:
        raise TestFailure('cannot find the event fd (%s)' % new)
    return obj, new.pop()


def readable(fd, timeout):
    """Does fd become readable (an event is pending) within timeout?"""
    return bool(select.select([fd], [], [], timeout)[0])


class Host:
    """One device: context, PD, a CQ per direction, buffers."""

    def __init__(self, name, cqe=256, channel=False):
        self.name = name
        self.ctx, self.async_fd = new_event_fd(lambda: Context(name=name))
        self.pd = PD(self.ctx)
        self.gid_index, self.gid, self.ip = ipv4_gid_index(self.ctx)
        self.channel = None
        if channel:
            self.channel, self.channel_fd = new_event_fd(
                lambda: CompChannel(self.ctx))
        self.scq = CQ(self.ctx, cqe)
        self.rcq = CQ(self.ctx, cqe, None, self.channel, 0)
        self.mr = MR(self.pd, 1 << 20, ACCESS)

    def ud_qp(self, send_wr=64, recv_wr=64, send_sge=4, recv_sge=4,
              inline=256, sig_all=0, rcq=None):
        cap = QPCap(max_send_wr=send_wr, max_recv_wr=recv_wr,
                    max_send_sge=send_sge, max_recv_sge=recv_sge,
                    max_inline_data=inline)
        init = QPInitAttr(qp_type=e.IBV_QPT_UD, scq=self.scq,
                          rcq=rcq or self.rcq, cap=cap, sq_sig_all=sig_all)
        attr = QPAttr(port_num=1)
        attr.qkey = QKEY
        qp = QP(self.pd, init, attr)
        check(qp.qp_state == e.IBV_QPS_RTS, 'UD QP not in RTS')
        return qp

    def ah_to(self, peer):
        gr = GlobalRoute(dgid=GID(peer.gid), sgid_index=self.gid_index)
        gr.hop_limit = 64
        return AH(self.pd, attr=AHAttr(gr=gr, is_global=1, port_num=1))


def post_recv(qp, mr, wr_id, offset, length, nsge=1):
    """One receive of length bytes at offset, split into nsge SGEs (the
    first is exactly the GRH when nsge > 1)."""
    if nsge == 1:
        sges = [SGE(mr.buf + offset, length, mr.lkey)]
    else:
        sges = [SGE(mr.buf + offset, GRH_LEN, mr.lkey)]
        rest = length - GRH_LEN
        step = (rest + nsge - 2) // (nsge - 1)
        off = offset + GRH_LEN
        while rest > 0:
            n = min(step, rest)
            sges.append(SGE(mr.buf + off, n, mr.lkey))
            off += n
            rest -= n
    qp.post_recv(RecvWR(wr_id=wr_id, num_sge=len(sges), sg=sges))


def send_wr(mr, wr_id, offset, length, ah, rqpn, nsge=1, imm=None,
            flags=e.IBV_SEND_SIGNALED):
    sges = []
    step = (length + nsge - 1) // nsge
    off, rest = offset, length
    while rest > 0:
        n = min(step, rest)
        sges.append(SGE(mr.buf + off, n, mr.lkey))
        off += n
        rest -= n
    if not sges:
        # pyverbs wants an SGE: an empty one.
        sges = [SGE(mr.buf + offset, 0, mr.lkey)]
    op = e.IBV_WR_SEND if imm is None else e.IBV_WR_SEND_WITH_IMM
    wr = SendWR(wr_id=wr_id, opcode=op, num_sge=len(sges), sg=sges,
                send_flags=flags)
    if imm is not None:
        wr.imm_data = imm
    wr.set_wr_ud(ah, rqpn, QKEY)
    return wr


def poll(cq, n, timeout=20.0):
    """Exactly n completions within timeout seconds."""
    wcs = []
    end = time.monotonic() + timeout
    while len(wcs) < n:
        got, lst = cq.poll(n - len(wcs))
        if got:
            wcs.extend(lst[:got])
            continue
        if time.monotonic() > end:
            raise TestFailure('%d of %d completions after %.0fs' %
                              (len(wcs), n, timeout))
        time.sleep(0.001)
    return wcs


def expect_empty(cq, wait=0.5):
    time.sleep(wait)
    got, _ = cq.poll(1)
    check(got == 0, 'unexpected completion')


def main(tests):
    """argv[1] names the test; prints diagnostics, exit 0 on pass."""
    name = sys.argv[1]
    try:
        tests[name](*sys.argv[2:])
    except TestFailure as ex:
        print('FAIL: %s: %s' % (name, ex))
        sys.stdout.flush()
        os._exit(1)
    except Exception as ex:  # noqa: BLE001
        print('ERROR: %s: %r' % (name, ex))
        sys.stdout.flush()
        os._exit(1)
    print('PASS: %s' % name)
