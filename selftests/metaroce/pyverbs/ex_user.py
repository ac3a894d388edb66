# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Extended verbs through the userspace provider, checked field by field and
byte by byte: ibv_create_cq_ex (start/next/end_poll, every read_*,
completion timestamps), ibv_create_qp_ex with the ibv_wr_* builders for
every opcode (RC and UD), ibv_query_device_ex, ibv_query_rt_values_ex,
ibv_rereg_mr.

Usage: /usr/bin/python3 ex_user.py TEST DEV_A DEV_B
"""
import errno
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyverbs.enums as e  # noqa: E402
from pyverbs.addr import AHAttr, GID, GlobalRoute  # noqa: E402
from pyverbs.cq import CQEX, CqInitAttrEx, PollCqAttr  # noqa: E402
from pyverbs.mr import MR  # noqa: E402
from pyverbs.pd import PD  # noqa: E402
from pyverbs.pyverbs_error import PyverbsRDMAError  # noqa: E402
from pyverbs.qp import (DataBuffer, QP, QPAttr, QPCap, QPEx,  # noqa: E402
                        QPInitAttr, QPInitAttrEx)
from pyverbs.wr import SGE, RecvWR, SendWR  # noqa: E402

from mrlib import (GRH_LEN, QKEY, Host, TestFailure, check,  # noqa: E402
                   main, post_recv, rdma_errno)

ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)
WC_FLAGS = (e.IBV_WC_EX_WITH_BYTE_LEN | e.IBV_WC_EX_WITH_IMM |
            e.IBV_WC_EX_WITH_QP_NUM | e.IBV_WC_EX_WITH_SRC_QP |
            e.IBV_WC_EX_WITH_SLID | e.IBV_WC_EX_WITH_SL |
            e.IBV_WC_EX_WITH_DLID_PATH_BITS |
            e.IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
            e.IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
RC_OPS = (e.IBV_QP_EX_WITH_SEND | e.IBV_QP_EX_WITH_SEND_WITH_IMM |
          e.IBV_QP_EX_WITH_SEND_WITH_INV | e.IBV_QP_EX_WITH_RDMA_WRITE |
          e.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | e.IBV_QP_EX_WITH_RDMA_READ |
          e.IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
          e.IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
UD_OPS = e.IBV_QP_EX_WITH_SEND | e.IBV_QP_EX_WITH_SEND_WITH_IMM
BUF = 1 << 20
SRC, DST = 0, 512 * 1024	# halves of each host's MR
ATOM = 1024 * 1024 - 64		# the atomic target word, in the DST half


def be32(v):
    """What read_imm_data returns for immediate data v (network order)."""
    return struct.unpack('=I', struct.pack('!I', v))[0]


def mono_ns(ctx):
    sec, nsec = ctx.query_rt_values_ex()
    return sec * 1000000000 + nsec


class ExHost(Host):
    """A Host whose CQs are extended CQs with every supported field."""

    def __init__(self, name, wc_flags=WC_FLAGS):
        super().__init__(name)
        attr = CqInitAttrEx(cqe=256, wc_flags=wc_flags)
        self.scq = CQEX(self.ctx, attr)
        self.rcq = CQEX(self.ctx, CqInitAttrEx(cqe=256, wc_flags=wc_flags))
        self.mr = MR(self.pd, BUF, ACCESS)

    def qp(self, qp_type=e.IBV_QPT_RC, ops=RC_OPS, sge=4, inline=128,
           sig_all=0, wr=64, pd=None):
        cap = QPCap(max_send_wr=wr, max_recv_wr=wr, max_send_sge=sge,
                    max_recv_sge=sge, max_inline_data=inline)
        mask = e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS
        init = QPInitAttrEx(qp_type=qp_type, scq=self.scq, rcq=self.rcq,
                            cap=cap, sq_sig_all=sig_all, comp_mask=mask,
                            pd=pd or self.pd, send_ops_flags=ops)
        return QPEx(self.ctx, init)

    def ah_attr(self, peer):
        gr = GlobalRoute(dgid=GID(peer.gid), sgid_index=self.gid_index)
        gr.hop_limit = 64
        return AHAttr(gr=gr, is_global=1, port_num=1)


def connect(a, qa, b, qb):
    """Both RC QPs to RTS, each aimed at the other."""
    for h, q, peer, pq in ((a, qa, b, qb), (b, qb, a, qa)):
        attr = QPAttr(port_num=1, path_mtu=e.IBV_MTU_1024)
        attr.qp_access_flags = ACCESS
        attr.ah_attr = h.ah_attr(peer)
        attr.dest_qp_num = pq.qp_num
        attr.rq_psn = 0
        attr.sq_psn = 0
        attr.max_dest_rd_atomic = 4
        attr.max_rd_atomic = 4
        attr.min_rnr_timer = 12
        attr.timeout = 14
        attr.retry_cnt = 7
        attr.rnr_retry = 7
        q.to_rts(attr)


class Wc:
    """One completion read with every read_* accessor."""

    def __init__(self, cq, flags):
        self.wr_id = cq.wr_id
        self.status = cq.status
        self.opcode = cq.read_opcode()
        self.vendor_err = cq.read_vendor_err()
        self.wc_flags = cq.read_wc_flags()
        self.byte_len = cq.read_byte_len()
        self.imm = cq.read_imm_data()
        self.qp_num = cq.read_qp_num()
        self.src_qp = cq.read_src_qp()
        self.slid = cq.read_slid()
        self.sl = cq.read_sl()
        self.dlid_path_bits = cq.read_dlid_path_bits()
        self.ts = None
        self.wall = None
        if flags & e.IBV_WC_EX_WITH_COMPLETION_TIMESTAMP:
            self.ts = cq.read_timestamp()
        if flags & e.IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK:
            self.wall = cq.read_completion_wallclock_ns()

    def __repr__(self):
        return ('wc(wr_id %d status %d opcode %d len %d flags %#x imm %#x)' %
                (self.wr_id, self.status, self.opcode, self.byte_len,
                 self.wc_flags, self.imm))


def poll_ex(cq, n, flags=WC_FLAGS, timeout=30.0, batch=True):
    """Exactly n completions through start_poll/next_poll/end_poll."""
    wcs = []
    end = time.monotonic() + timeout
    while len(wcs) < n:
        ret = cq.start_poll(PollCqAttr())
        if ret == errno.ENOENT:
            check(time.monotonic() < end, '%d of %d completions after '
                  '%.0fs: %s' % (len(wcs), n, timeout, wcs))
            time.sleep(0.001)
            continue
        check(ret == 0, 'start_poll returned %d' % ret)
        while True:
            wcs.append(Wc(cq, flags))
            if len(wcs) == n or not batch:
                break
            ret = cq.poll_next()
            if ret == errno.ENOENT:
                break
            check(ret == 0, 'next_poll returned %d' % ret)
        cq.end_poll()
    return wcs


def expect_none(cq, wait=0.3):
    time.sleep(wait)
    ret = cq.start_poll(PollCqAttr())
    if ret == 0:
        cq.end_poll()
    check(ret == errno.ENOENT, 'unexpected completion (start_poll %d)' % ret)


# A UD receive's sl: the RoCE packet type, UDP and IPv4, as mlx5 gives it
# (spec MRC-DGM-010).
SL_UDP_IPV4 = 0xa


def check_wc(wc, what, wr_id, opcode, qp_num, byte_len=None, flags=0,
             imm=None, src_qp=None, sl=0):
    check(wc.status == e.IBV_WC_SUCCESS, '%s: status %d' % (what, wc.status))
    check(wc.wr_id == wr_id, '%s: wr_id %d != %d' % (what, wc.wr_id, wr_id))
    check(wc.opcode == opcode, '%s: opcode %d != %d' %
          (what, wc.opcode, opcode))
    check(wc.vendor_err == 0, '%s: vendor_err %d' % (what, wc.vendor_err))
    check(wc.qp_num == qp_num, '%s: qp_num %d != %d' %
          (what, wc.qp_num, qp_num))
    if byte_len is not None:
        check(wc.byte_len == byte_len, '%s: byte_len %d != %d' %
              (what, wc.byte_len, byte_len))
    check(wc.wc_flags & ~e.IBV_WC_GRH == flags, '%s: wc_flags %#x != %#x' %
          (what, wc.wc_flags, flags))
    if imm is not None:
        check(wc.imm == imm, '%s: imm/rkey %#x != %#x' % (what, wc.imm, imm))
    if src_qp is not None:
        check(wc.src_qp == src_qp, '%s: src_qp %d' % (what, wc.src_qp))
    check(wc.slid == 0 and wc.sl == sl and wc.dlid_path_bits == 0,
          '%s: slid %d sl %d dlid_path_bits %d' %
          (what, wc.slid, wc.sl, wc.dlid_path_bits))


def check_times(wcs, t0, t1, w0, w1, what):
    """Timestamps inside [t0, t1] (device clock) and [w0, w1] (wall clock),
    in completion order."""
    last = 0
    for wc in wcs:
        check(t0 <= wc.ts <= t1, '%s: completion_ts %d not in [%d, %d]' %
              (what, wc.ts, t0, t1))
        check(w0 <= wc.wall <= w1, '%s: wallclock %d not in [%d, %d]' %
              (what, wc.wall, w0, w1))
        check(wc.ts >= last, '%s: timestamps go backwards' % what)
        last = wc.ts


def t_device(da, db):
    """ibv_query_device_ex: timestamp capability; ibv_query_rt_values_ex
    reads the device clock (CLOCK_MONOTONIC ns)."""
    a = Host(da)
    attr = a.ctx.query_device_ex()
    check(attr.completion_timestamp_mask == (1 << 64) - 1,
          'completion_timestamp_mask %#x' % attr.completion_timestamp_mask)
    check(attr.hca_core_clock == 1000000,
          'hca_core_clock %d kHz' % attr.hca_core_clock)
    check(attr.orig_attr.max_qp > 0 and attr.orig_attr.max_cqe > 0 and
          attr.orig_attr.atomic_caps == e.IBV_ATOMIC_HCA,
          'orig_attr: max_qp %d max_cqe %d atomic %d' %
          (attr.orig_attr.max_qp, attr.orig_attr.max_cqe,
           attr.orig_attr.atomic_caps))
    before = time.monotonic_ns()
    clk = mono_ns(a.ctx)
    after = time.monotonic_ns()
    check(before <= clk <= after, 'raw clock %d not in [%d, %d]' %
          (clk, before, after))


def t_cqex(da, db):
    """Extended CQs: every read_* for SEND/RECV/WRITE_IMM/READ/ATOMIC
    completions (posted with ibv_post_send), batches, timestamps, and the
    errors ibv_create_cq_ex(3) asks for."""
    a, b = ExHost(da), ExHost(db)
    # Plain QPs on extended CQs.
    cap = QPCap(max_send_wr=64, max_recv_wr=64, max_send_sge=2,
                max_recv_sge=2)
    qa = QP(a.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=a.scq, rcq=a.rcq,
                             cap=cap))
    qb = QP(b.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=b.scq, rcq=b.rcq,
                             cap=cap))
    connect(a, qa, b, qb)
    expect_none(a.scq, 0)

    data = random.Random(7).randbytes(3000)
    a.mr.write(data, len(data), SRC)
    b.mr.write(bytes(4096), 4096, DST)
    b.mr.write(struct.pack('<Q', 100), 8, ATOM)
    for i in range(3):
        qb.post_recv(RecvWR(wr_id=10 + i, num_sge=1,
                            sg=[SGE(b.mr.buf + DST + i * 4096, 4096,
                                    b.mr.lkey)]))
    sge = SGE(a.mr.buf + SRC, 3000, a.mr.lkey)
    wrs = []
    wr = SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1, sg=[sge],
                send_flags=e.IBV_SEND_SIGNALED)
    wrs.append(wr)
    wr = SendWR(wr_id=2, opcode=e.IBV_WR_SEND_WITH_IMM, num_sge=1,
                sg=[SGE(a.mr.buf + SRC, 100, a.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.imm_data = socket.htonl(0x11223344)
    wrs.append(wr)
    wr = SendWR(wr_id=3, opcode=e.IBV_WR_RDMA_WRITE_WITH_IMM, num_sge=1,
                sg=[SGE(a.mr.buf + SRC, 2000, a.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.imm_data = socket.htonl(0x55667788)
    wr.set_wr_rdma(b.mr.rkey, b.mr.buf + DST + 3 * 4096)
    wrs.append(wr)
    wr = SendWR(wr_id=4, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                sg=[SGE(a.mr.buf + DST, 2000, a.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(b.mr.rkey, b.mr.buf + DST + 3 * 4096)
    wrs.append(wr)
    wr = SendWR(wr_id=5, opcode=e.IBV_WR_ATOMIC_FETCH_AND_ADD, num_sge=1,
                sg=[SGE(a.mr.buf + ATOM, 8, a.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_atomic(b.mr.rkey, b.mr.buf + ATOM, 5, 0)
    wrs.append(wr)

    t0, w0 = mono_ns(a.ctx), time.time_ns()
    for wr in wrs:
        qa.post_send(wr)
    swc = poll_ex(a.scq, 5)
    rwc = poll_ex(b.rcq, 3)
    t1, w1 = mono_ns(a.ctx), time.time_ns()

    ops = [e.IBV_WC_SEND, e.IBV_WC_SEND, e.IBV_WC_RDMA_WRITE,
           e.IBV_WC_RDMA_READ, e.IBV_WC_FETCH_ADD]
    lens = [None, None, None, 2000, 8]
    for i, wc in enumerate(swc):
        check_wc(wc, 'send completion %d' % i, i + 1, ops[i], qa.qp_num,
                 byte_len=lens[i])
    check_times(swc, t0, t1, w0, w1, 'requester')
    check_wc(rwc[0], 'recv', 10, e.IBV_WC_RECV, qb.qp_num, 3000,
             src_qp=qa.qp_num)
    check_wc(rwc[1], 'recv imm', 11, e.IBV_WC_RECV, qb.qp_num, 100,
             e.IBV_WC_WITH_IMM, be32(0x11223344), src_qp=qa.qp_num)
    check_wc(rwc[2], 'write imm', 12, e.IBV_WC_RECV_RDMA_WITH_IMM,
             qb.qp_num, 2000, e.IBV_WC_WITH_IMM, be32(0x55667788),
             src_qp=qa.qp_num)
    check_times(rwc, t0, t1, w0, w1, 'responder')
    check(b.mr.read(3000, DST) == data, 'SEND payload')
    check(b.mr.read(100, DST + 4096) == data[:100], 'SEND_WITH_IMM payload')
    check(b.mr.read(2000, DST + 3 * 4096) == data[:2000], 'WRITE payload')
    check(a.mr.read(2000, DST) == data[:2000], 'READ payload')
    check(a.mr.read(8, ATOM) == struct.pack('<Q', 100), 'fetch-add result')
    check(b.mr.read(8, ATOM) == struct.pack('<Q', 105), 'fetch-add target')

    # One completion per start_poll (no next_poll) also works.
    for i in range(4):
        wr = SendWR(wr_id=100 + i, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                    sg=[SGE(a.mr.buf, 8, a.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(b.mr.rkey, b.mr.buf + DST)
        qa.post_send(wr)
    wcs = poll_ex(a.scq, 4, batch=False)
    check([w.wr_id for w in wcs] == [100, 101, 102, 103],
          'unbatched polling: %s' % wcs)
    expect_none(a.scq, 0)
    expect_none(b.rcq, 0)

    # Unsupported wc_flags and comp_mask are refused.
    for flags in (e.IBV_WC_EX_WITH_CVLAN, e.IBV_WC_EX_WITH_FLOW_TAG):
        try:
            CQEX(a.ctx, CqInitAttrEx(cqe=8, wc_flags=flags))
        except PyverbsRDMAError as ex:
            check(ex.error_code == errno.EOPNOTSUPP,
                  'wc_flags %#x: errno %d' % (flags, ex.error_code))
        else:
            raise TestFailure('CQEX with wc_flags %#x created' % flags)
    # Without the timestamp flags the CQ still polls.
    plain = CQEX(a.ctx, CqInitAttrEx(cqe=8, wc_flags=0))
    expect_none(plain, 0)


def t_cqex_batch(da, db):
    """Many completions polled in batches of any length, interleaved with
    new ones arriving; a CQ smaller than the stream wraps around."""
    a, b = ExHost(da), ExHost(db)
    b.rcq = CQEX(b.ctx, CqInitAttrEx(cqe=16, wc_flags=WC_FLAGS))
    qa, qb = a.qp(), b.qp()
    connect(a, qa, b, qb)
    n = 200
    got = []
    posted = 0
    recv = 0
    while len(got) < n:
        while recv < n and recv - len(got) < 12:
            qb.post_recv(RecvWR(wr_id=recv, num_sge=1,
                                sg=[SGE(b.mr.buf + (recv % 64) * 64, 64,
                                        b.mr.lkey)]))
            recv += 1
        while posted < recv:
            qa.wr_start()
            qa.wr_id = posted
            qa.wr_flags = 0
            qa.wr_send_imm(posted)
            qa.wr_set_inline_data(a.mr.buf, 4)
            qa.wr_complete()
            posted += 1
        got += poll_ex(b.rcq, min(recv - len(got), random.randint(1, 8)))
    for i, wc in enumerate(got):
        check_wc(wc, 'recv %d' % i, i, e.IBV_WC_RECV, qb.qp_num, 4,
                 e.IBV_WC_WITH_IMM, be32(i))
    expect_none(a.scq)	# nothing was signalled


def t_qpex_rc(da, db):
    """Every RC builder, several per batch, data and completions checked."""
    a, b = ExHost(da), ExHost(db)
    qa, qb = a.qp(), b.qp()
    connect(a, qa, b, qb)
    check(qa.qp_state == e.IBV_QPS_RTS, 'QPEx not in RTS')
    rnd = random.Random(11)
    data = rnd.randbytes(8192)
    a.mr.write(data, len(data), SRC)
    b.mr.write(bytes(65536), 65536, DST)
    b.mr.write(struct.pack('<Q', 0x1000), 8, ATOM)
    for i in range(4):
        qb.post_recv(RecvWR(wr_id=50 + i, num_sge=1,
                            sg=[SGE(b.mr.buf + DST + i * 8192, 8192,
                                    b.mr.lkey)]))
    S = e.IBV_SEND_SIGNALED
    dst = b.mr.buf + DST
    # Batch 1: the two-sided operations.
    qa.wr_start()
    qa.wr_id, qa.wr_flags = 1, S
    qa.wr_send()
    qa.wr_set_sge(SGE(a.mr.buf + SRC, 5000, a.mr.lkey))
    qa.wr_id, qa.wr_flags = 2, S | e.IBV_SEND_SOLICITED
    qa.wr_send_imm(0xdeadbeef)
    qa.wr_set_sge_list(3, [SGE(a.mr.buf + SRC, 10, a.mr.lkey),
                           SGE(a.mr.buf + SRC + 100, 20, a.mr.lkey),
                           SGE(a.mr.buf + SRC + 1000, 3000, a.mr.lkey)])
    qa.wr_id, qa.wr_flags = 3, S
    qa.wr_send()
    qa.wr_set_inline_data(a.mr.buf + SRC + 6007, 100)
    qa.wr_id, qa.wr_flags = 4, S
    qa.wr_send()
    qa.wr_set_inline_data_list(3, [DataBuffer(a.mr.buf + SRC + 6000, 1),
                                   DataBuffer(a.mr.buf + SRC + 6050, 60),
                                   DataBuffer(a.mr.buf + SRC + 6500, 67)])
    qa.wr_complete()
    # The inline data was copied: scribbling on it changes nothing.
    a.mr.write(b'\x00' * 1024, 1024, SRC + 6000)
    swc = poll_ex(a.scq, 4)
    rwc = poll_ex(b.rcq, 4)
    for i, wc in enumerate(swc):
        check_wc(wc, 'send %d' % (i + 1), i + 1, e.IBV_WC_SEND, qa.qp_num)
    check_wc(rwc[0], 'recv send', 50, e.IBV_WC_RECV, qb.qp_num, 5000)
    check_wc(rwc[1], 'recv send_imm', 51, e.IBV_WC_RECV, qb.qp_num, 3030,
             e.IBV_WC_WITH_IMM, be32(0xdeadbeef))
    check_wc(rwc[2], 'recv inline', 52, e.IBV_WC_RECV, qb.qp_num, 100)
    check_wc(rwc[3], 'recv inline list', 53, e.IBV_WC_RECV, qb.qp_num, 128)
    check(b.mr.read(5000, DST) == data[:5000], 'send payload')
    check(b.mr.read(3030, DST + 8192) ==
          data[:10] + data[100:120] + data[1000:4000], 'send_imm SGE list')
    check(b.mr.read(100, DST + 2 * 8192) == data[6007:6107],
          'inline payload')
    check(b.mr.read(128, DST + 3 * 8192) ==
          data[6000:6001] + data[6050:6110] + data[6500:6567],
          'inline list payload')
    a.mr.write(data, len(data), SRC)

    # Batch 2: one-sided operations.
    qb.post_recv(RecvWR(wr_id=60, num_sge=1,
                        sg=[SGE(b.mr.buf, 16, b.mr.lkey)]))
    qa.wr_start()
    qa.wr_id, qa.wr_flags = 11, S
    qa.wr_rdma_write(b.mr.rkey, dst + 40000)
    qa.wr_set_sge(SGE(a.mr.buf + SRC, 4097, a.mr.lkey))
    qa.wr_id, qa.wr_flags = 12, S
    qa.wr_rdma_write_imm(b.mr.rkey, dst + 50000, 0x0badf00d)
    qa.wr_set_inline_data(a.mr.buf + SRC + 9, 77)
    qa.wr_id, qa.wr_flags = 13, S
    qa.wr_rdma_read(b.mr.rkey, dst + 40000)
    qa.wr_set_sge_list(2, [SGE(a.mr.buf + DST, 97, a.mr.lkey),
                           SGE(a.mr.buf + DST + 1000, 4000, a.mr.lkey)])
    qa.wr_id, qa.wr_flags = 14, S
    qa.wr_atomic_cmp_swp(b.mr.rkey, b.mr.buf + ATOM, 0x1000, 0x2000)
    qa.wr_set_sge(SGE(a.mr.buf + ATOM, 8, a.mr.lkey))
    qa.wr_id, qa.wr_flags = 15, S | e.IBV_SEND_FENCE
    qa.wr_atomic_fetch_add(b.mr.rkey, b.mr.buf + ATOM, 7)
    qa.wr_set_sge(SGE(a.mr.buf + ATOM - 8, 8, a.mr.lkey))
    qa.wr_id, qa.wr_flags = 16, S
    qa.wr_atomic_cmp_swp(b.mr.rkey, b.mr.buf + ATOM, 0x1000, 0x3000)
    qa.wr_set_sge(SGE(a.mr.buf + ATOM - 16, 8, a.mr.lkey))
    qa.wr_complete()
    swc = poll_ex(a.scq, 6)
    rwc = poll_ex(b.rcq, 1)
    ops = [e.IBV_WC_RDMA_WRITE, e.IBV_WC_RDMA_WRITE, e.IBV_WC_RDMA_READ,
           e.IBV_WC_COMP_SWAP, e.IBV_WC_FETCH_ADD, e.IBV_WC_COMP_SWAP]
    lens = [None, None, 4097, 8, 8, 8]
    for i, wc in enumerate(swc):
        check_wc(wc, 'one-sided %d' % (11 + i), 11 + i, ops[i], qa.qp_num,
                 byte_len=lens[i])
    check_wc(rwc[0], 'write_imm', 60, e.IBV_WC_RECV_RDMA_WITH_IMM, qb.qp_num,
             77, e.IBV_WC_WITH_IMM, be32(0x0badf00d))
    check(b.mr.read(4097, DST + 40000) == data[:4097], 'WRITE payload')
    check(b.mr.read(77, DST + 50000) == data[9:86], 'WRITE_IMM inline')
    check(a.mr.read(97, DST) + a.mr.read(4000, DST + 1000) == data[:4097],
          'READ into an SGE list')
    word = lambda mr, off: struct.unpack('<Q', mr.read(8, off))[0]  # noqa
    check(word(a.mr, ATOM) == 0x1000, 'cmp_swp returned %#x' %
          word(a.mr, ATOM))
    check(word(a.mr, ATOM - 8) == 0x2000, 'fetch_add returned %#x' %
          word(a.mr, ATOM - 8))
    check(word(a.mr, ATOM - 16) == 0x2007, 'failed cmp_swp returned %#x' %
          word(a.mr, ATOM - 16))
    check(word(b.mr, ATOM) == 0x2007, 'target word %#x' % word(b.mr, ATOM))

    # Unsignalled WRs complete silently; sq_sig_all signals them all.
    qa.wr_start()
    for i in range(5):
        qa.wr_id, qa.wr_flags = 20 + i, S if i == 4 else 0
        qa.wr_rdma_write(b.mr.rkey, dst)
        qa.wr_set_sge(SGE(a.mr.buf + SRC, 64, a.mr.lkey))
    qa.wr_complete()
    check([w.wr_id for w in poll_ex(a.scq, 1)] == [24],
          'only the signalled WR completes')
    expect_none(a.scq)


def t_qpex_ud(da, db):
    """UD builders: wr_set_ud_addr, SGE lists, inline, immediate data."""
    a, b = ExHost(da), ExHost(db)
    qa = a.qp(e.IBV_QPT_UD, UD_OPS, sig_all=1)
    qb = b.qp(e.IBV_QPT_UD, UD_OPS)
    for q in (qa, qb):
        attr = QPAttr(port_num=1)
        attr.qkey = QKEY
        q.to_rts(attr)
    from pyverbs.addr import AH
    ah = AH(a.pd, attr=a.ah_attr(b))
    data = random.Random(5).randbytes(1024)
    a.mr.write(data, 1024, SRC)
    sizes = [0, 1, 64, 128, 1000, 1024]
    for i, size in enumerate(sizes):
        post_recv(qb, b.mr, i, DST + i * 2048, size + GRH_LEN)
    qa.wr_start()
    for i, size in enumerate(sizes):
        qa.wr_id, qa.wr_flags = 200 + i, 0
        if i % 2:
            qa.wr_send_imm(0x1000 + i)
        else:
            qa.wr_send()
        qa.wr_set_ud_addr(ah, qb.qp_num, QKEY)
        if size <= 128 and i % 3 != 1:
            qa.wr_set_inline_data(a.mr.buf + SRC, size)
        elif size >= 2:
            h = size // 2
            qa.wr_set_sge_list(2, [SGE(a.mr.buf + SRC, h, a.mr.lkey),
                                   SGE(a.mr.buf + SRC + h, size - h,
                                       a.mr.lkey)])
        else:
            qa.wr_set_sge(SGE(a.mr.buf + SRC, size, a.mr.lkey))
    qa.wr_complete()
    swc = poll_ex(a.scq, len(sizes))
    rwc = poll_ex(b.rcq, len(sizes))
    for i, size in enumerate(sizes):
        check_wc(swc[i], 'ud send %d' % i, 200 + i, e.IBV_WC_SEND, qa.qp_num)
        imm = be32(0x1000 + i) if i % 2 else None
        check_wc(rwc[i], 'ud recv %d' % i, i, e.IBV_WC_RECV, qb.qp_num,
                 size + GRH_LEN, e.IBV_WC_WITH_IMM if i % 2 else 0, imm,
                 src_qp=qa.qp_num, sl=SL_UDP_IPV4)
        check(rwc[i].wc_flags & e.IBV_WC_GRH, 'ud recv %d: no GRH' % i)
        got = b.mr.read(size, DST + i * 2048 + GRH_LEN) if size else b''
        check(got == data[:size], 'ud payload %d' % size)


def t_qpex_errors(da, db):
    """What ibv_create_qp_ex(3) and ibv_wr_post(3) say about errors: a bad
    batch posts nothing and wr_complete returns the error."""
    a, b = ExHost(da), ExHost(db)

    def create_errno(qp_type, ops, mask=None):
        mask = mask or (e.IBV_QP_INIT_ATTR_PD |
                        e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
        init = QPInitAttrEx(qp_type=qp_type, scq=a.scq, rcq=a.rcq,
                            cap=QPCap(), comp_mask=mask, pd=a.pd,
                            send_ops_flags=ops)
        return rdma_errno(lambda: QPEx(a.ctx, init))
    check(create_errno(e.IBV_QPT_UD, e.IBV_QP_EX_WITH_RDMA_WRITE) ==
          errno.EOPNOTSUPP, 'UD with RDMA WRITE: not EOPNOTSUPP')
    check(create_errno(e.IBV_QPT_UD, e.IBV_QP_EX_WITH_BIND_MW) ==
          errno.EOPNOTSUPP, 'UD with BIND_MW: not EOPNOTSUPP')
    check(create_errno(e.IBV_QPT_RC, e.IBV_QP_EX_WITH_TSO) ==
          errno.EOPNOTSUPP, 'RC with TSO: not EOPNOTSUPP')
    check(create_errno(e.IBV_QPT_RC, e.IBV_QP_EX_WITH_SEND,
                       e.IBV_QP_INIT_ATTR_PD |
                       e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
                       e.IBV_QP_INIT_ATTR_MAX_TSO_HEADER) ==
          errno.EOPNOTSUPP, 'TSO header: not EOPNOTSUPP')

    qa, qb = a.qp(wr=8, sge=2, inline=32), b.qp()
    # Before RTS nothing can be posted.
    qa.wr_start()
    qa.wr_id, qa.wr_flags = 1, e.IBV_SEND_SIGNALED
    qa.wr_send()
    qa.wr_set_sge(SGE(a.mr.buf, 8, a.mr.lkey))
    check(rdma_errno(qa.wr_complete) == errno.EINVAL,
          'posting in RESET: not EINVAL')
    connect(a, qa, b, qb)
    _, init = qa.query(e.IBV_QP_CAP)
    depth = init.cap.max_send_wr
    S = e.IBV_SEND_SIGNALED

    def batch(n, bad=None):
        qa.wr_start()
        for i in range(n):
            qa.wr_id, qa.wr_flags = 1000 + i, S
            qa.wr_rdma_write(b.mr.rkey, b.mr.buf)
            if i == bad:
                bad_fn()
            else:
                qa.wr_set_sge(SGE(a.mr.buf, 8, a.mr.lkey))
        return rdma_errno(qa.wr_complete)

    bad_fn = None
    check(batch(depth + 1) == errno.ENOMEM, 'SQ overflow: not ENOMEM')
    expect_none(a.scq)
    bad_fn = lambda: qa.wr_set_sge_list(3, [SGE(a.mr.buf, 8, a.mr.lkey)] * 3)  # noqa
    check(batch(3, 1) == errno.EINVAL, 'too many SGEs: not EINVAL')
    bad_fn = lambda: qa.wr_set_inline_data(a.mr.buf, 33)  # noqa
    check(batch(3, 2) == errno.EINVAL, 'inline too long: not EINVAL')
    expect_none(a.scq)
    # An atomic needs one 8-byte SGE and an aligned address.
    qa.wr_start()
    qa.wr_atomic_fetch_add(b.mr.rkey, b.mr.buf + 4, 1)
    qa.wr_set_sge(SGE(a.mr.buf, 8, a.mr.lkey))
    check(rdma_errno(qa.wr_complete) == errno.EINVAL,
          'unaligned atomic: not EINVAL')
    qa.wr_start()
    qa.wr_atomic_fetch_add(b.mr.rkey, b.mr.buf, 1)
    qa.wr_set_sge(SGE(a.mr.buf, 4, a.mr.lkey))
    check(rdma_errno(qa.wr_complete) == errno.EINVAL,
          '4-byte atomic: not EINVAL')
    qa.wr_start()
    qa.wr_rdma_read(b.mr.rkey, b.mr.buf)
    qa.wr_set_inline_data(a.mr.buf, 8)
    check(rdma_errno(qa.wr_complete) == errno.EINVAL,
          'inline READ: not EINVAL')
    # wr_abort posts nothing; the SQ is intact afterwards.
    qa.wr_start()
    for i in range(4):
        qa.wr_id, qa.wr_flags = i, S
        qa.wr_send()
        qa.wr_set_sge(SGE(a.mr.buf, 8, a.mr.lkey))
    qa.wr_abort()
    expect_none(a.scq)
    expect_none(b.rcq, 0)
    check(batch(depth) == 0, 'a full SQ of WRs after the errors')
    wcs = poll_ex(a.scq, depth)
    check([w.wr_id for w in wcs] == [1000 + i for i in range(depth)] and
          all(w.status == e.IBV_WC_SUCCESS for w in wcs),
          'the good batch: %s' % wcs)

    # UD: a WQE without wr_set_ud_addr fails the batch.
    qu = a.qp(e.IBV_QPT_UD, UD_OPS)
    attr = QPAttr(port_num=1)
    attr.qkey = QKEY
    qu.to_rts(attr)
    qu.wr_start()
    qu.wr_send()
    qu.wr_set_sge(SGE(a.mr.buf, 8, a.mr.lkey))
    check(rdma_errno(qu.wr_complete) == errno.EINVAL,
          'UD send without an address: not EINVAL')


def t_rereg(da, db):
    """ibv_rereg_mr: new access and new PD keep the lkey and rkey (as mlx5
    and rxe: applications go on using the keys they exchanged); a new
    translation, or write access added to pages pinned read-only, gives
    new keys, and the old ones no longer work.  The keys work for RDMA."""
    a, b = ExHost(da), ExHost(db)
    qa, qb = a.qp(), b.qp()
    connect(a, qa, b, qb)
    target = MR(b.pd, 65536, e.IBV_ACCESS_LOCAL_WRITE)
    old_rkey, old_lkey = target.rkey, target.lkey

    def write(rkey, addr, n=64, off=0):
        a.mr.write(bytes([n & 0xff]) * n, n, off)
        qa.wr_start()
        qa.wr_id, qa.wr_flags = n, e.IBV_SEND_SIGNALED
        qa.wr_rdma_write(rkey, addr)
        qa.wr_set_sge(SGE(a.mr.buf + off, n, a.mr.lkey))
        qa.wr_complete()
        return poll_ex(a.scq, 1)[0]

    wc = write(target.rkey, target.buf)
    check(wc.status == e.IBV_WC_REM_ACCESS_ERR,
          'write without remote access: status %d' % wc.status)
    # The QP went to the error state: a new pair.
    qa, qb = a.qp(), b.qp()
    connect(a, qa, b, qb)
    target.rereg(e.IBV_REREG_MR_CHANGE_ACCESS, b.pd, 0, 0,
                 e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
    check(target.rkey == old_rkey and target.lkey == old_lkey,
          'access rereg changed the keys: rkey %#x -> %#x' %
          (old_rkey, target.rkey))
    wc = write(target.rkey, target.buf + 100, 77)
    check(wc.status == e.IBV_WC_SUCCESS, 'write after rereg: status %d' %
          wc.status)
    check(target.read(77, 100) == bytes([77]) * 77, 'written data')
    # Rights taken away in place: the same keys, and they no longer write.
    target.rereg(e.IBV_REREG_MR_CHANGE_ACCESS, b.pd, 0, 0,
                 e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ)
    check(target.rkey == old_rkey, 'access rereg (fewer rights) changed '
          'the rkey')
    wc = write(target.rkey, target.buf + 300, 55)
    check(wc.status == e.IBV_WC_REM_ACCESS_ERR,
          'write after remote write was taken away: status %d' % wc.status)
    check(target.read(55, 300) != bytes([55]) * 55,
          'the refused write reached memory')
    qa, qb = a.qp(), b.qp()
    connect(a, qa, b, qb)
    target.rereg(e.IBV_REREG_MR_CHANGE_ACCESS, b.pd, 0, 0,
                 e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)

    # New translation: another buffer of the same MR object, new keys.
    other = MR(b.pd, 65536, e.IBV_ACCESS_LOCAL_WRITE)   # just memory
    target.rereg(e.IBV_REREG_MR_CHANGE_TRANSLATION, b.pd, other.buf, 4096, 0)
    check(target.rkey != old_rkey, 'translation rereg kept the rkey')
    wc = write(target.rkey, other.buf + 8, 99)
    check(wc.status == e.IBV_WC_SUCCESS, 'write to the new range: %d' %
          wc.status)
    check(other.read(99, 8) == bytes([99]) * 99, 'data in the new range')
    # Beyond the new length: an access error.
    wc = write(target.rkey, other.buf + 4096, 8)
    check(wc.status == e.IBV_WC_REM_ACCESS_ERR,
          'write past the new length: status %d' % wc.status)

    # New PD: keys kept; the QP's PD no longer matches, so access fails.
    qa, qb = a.qp(), b.qp()
    connect(a, qa, b, qb)
    pd2 = PD(b.ctx)
    kept = target.rkey
    target.rereg(e.IBV_REREG_MR_CHANGE_PD, pd2, 0, 0, 0)
    check(target.rkey == kept, 'PD rereg changed the rkey')
    wc = write(target.rkey, other.buf, 16)
    check(wc.status == e.IBV_WC_REM_ACCESS_ERR,
          'write through a QP of another PD: status %d' % wc.status)
    # A QP of the new PD may use them.
    qa, qb = a.qp(), b.qp(pd=pd2)
    connect(a, qa, b, qb)
    wc = write(target.rkey, other.buf + 200, 21)
    check(wc.status == e.IBV_WC_SUCCESS and
          other.read(21, 200) == bytes([21]) * 21,
          'write through a QP of the new PD: status %d' % wc.status)
    # And the key from before the new translation is dead.
    qa, qb = a.qp(), b.qp()
    connect(a, qa, b, qb)
    wc = write(old_rkey, target.buf, 8)
    check(wc.status == e.IBV_WC_REM_ACCESS_ERR,
          'write with the key from before rereg: status %d' % wc.status)

    # Pages pinned read-only, write access added: pinned again, new keys.
    ro = MR(b.pd, 65536, e.IBV_ACCESS_REMOTE_READ)
    ro_rkey = ro.rkey
    ro.rereg(e.IBV_REREG_MR_CHANGE_ACCESS, b.pd, 0, 0,
             e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
    check(ro.rkey != ro_rkey, 'write access on read-only pages kept the rkey')
    qa, qb = a.qp(), b.qp()
    connect(a, qa, b, qb)
    wc = write(ro.rkey, ro.buf + 40, 33)
    check(wc.status == e.IBV_WC_SUCCESS and ro.read(33, 40) == bytes([33]) * 33,
          'write after making read-only pages writable: status %d' % wc.status)


if __name__ == '__main__':
    main({'device': t_device, 'cqex': t_cqex, 'cqex_batch': t_cqex_batch,
          'qpex_rc': t_qpex_rc, 'qpex_ud': t_qpex_ud,
          'qpex_errors': t_qpex_errors, 'rereg': t_rereg})
