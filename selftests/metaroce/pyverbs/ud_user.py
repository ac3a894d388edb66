# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""UD through the userspace provider, checked byte by byte.

Usage: /usr/bin/python3 ud_user.py TEST DEV_A DEV_B
DEV_A and DEV_B are MetaRoCE devices on the two ends of a link.
"""
import errno
import os
import random
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyverbs.enums as e  # noqa: E402
from pyverbs.addr import AH  # noqa: E402
from pyverbs.cq import CQ  # noqa: E402
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr  # noqa: E402
from pyverbs.wr import SGE, RecvWR, SendWR  # noqa: E402

from mrlib import (GRH_LEN, QKEY, Host, TestFailure, check,  # noqa: E402
                   expect_empty, main, poll, post_recv, rdma_errno, readable,
                   send_wr)

SLOT = 4096
SEND_BASE = 512 * 1024
CANARY = 0xa5


def pattern(kind, n, seed):
    if kind == 0:
        return random.Random(seed).randbytes(n)
    if kind == 1:
        return b'\x00' * n
    if kind == 2:
        return b'\xff' * n
    return bytes((seed + i) & 0xff for i in range(n))


def ip_csum_ok(hdr):
    s = sum(struct.unpack('!10H', hdr))
    while s > 0xffff:
        s = (s & 0xffff) + (s >> 16)
    return s == 0xffff


def counter(dev, name):
    with open('/sys/class/infiniband/%s/ports/1/hw_counters/%s' %
              (dev, name)) as f:
        return int(f.read())


def wait_counter(dev, name, target, timeout=20):
    end = time.monotonic() + timeout
    while counter(dev, name) < target:
        check(time.monotonic() < end, '%s %s stuck at %d < %d' %
              (dev, name, counter(dev, name), target))
        time.sleep(0.01)


def check_recv(wc, wr_id, size, src, dst, sqp, rqp, imm, data, payload):
    what = 'recv %d (%d bytes)' % (wr_id, size)
    check(wc.status == e.IBV_WC_SUCCESS, '%s: status %d' % (what, wc.status))
    check(wc.wr_id == wr_id, '%s: wr_id %d' % (what, wc.wr_id))
    check(wc.opcode == e.IBV_WC_RECV, '%s: opcode %d' % (what, wc.opcode))
    check(wc.byte_len == size + GRH_LEN,
          '%s: byte_len %d' % (what, wc.byte_len))
    check(wc.wc_flags & e.IBV_WC_GRH, '%s: no GRH flag' % what)
    check(bool(wc.wc_flags & e.IBV_WC_WITH_IMM) == (imm is not None),
          '%s: wc_flags %#x' % (what, wc.wc_flags))
    if imm is not None:
        check(wc.imm_data == imm, '%s: imm %#x != %#x' %
              (what, wc.imm_data, imm))
    check(wc.src_qp == sqp.qp_num, '%s: src_qp %d' % (what, wc.src_qp))
    check(wc.qp_num == rqp.qp_num, '%s: qp_num %d' % (what, wc.qp_num))
    check(wc.pkey_index == 0, '%s: pkey_index' % what)
    grh = data[:GRH_LEN]
    check(grh[:20] == bytes(20), '%s: GRH bytes 0..19 not zero' % what)
    ip = grh[20:40]
    check(ip[0] == 0x45, '%s: IPv4 version/IHL %#x' % (what, ip[0]))
    check(ip[9] == 17, '%s: IP protocol %d' % (what, ip[9]))
    check(ip[12:16] == src.ip and ip[16:20] == dst.ip,
          '%s: IP addresses %s -> %s' % (what, ip[12:16].hex(),
                                         ip[16:20].hex()))
    check(ip_csum_ok(ip), '%s: IPv4 header checksum' % what)
    got = data[GRH_LEN:GRH_LEN + size]
    if got != payload:
        bad = next(i for i in range(size) if got[i] != payload[i])
        raise TestFailure('%s: payload differs at byte %d' % (what, bad))
    tail = data[GRH_LEN + size:GRH_LEN + size + 64]
    check(tail == bytes([CANARY]) * 64,
          '%s: wrote past the message' % what)


def t_data(da, db):
    """Every size up to the MTU, both directions, SGE lists, inline, imm."""
    hosts = [Host(da), Host(db)]
    qps = [h.ud_qp() for h in hosts]
    ahs = [hosts[0].ah_to(hosts[1]), hosts[1].ah_to(hosts[0])]
    sizes = [0, 1, 2, 3, 7, 8, 15, 16, 17, 40, 63, 64, 100, 255, 256, 257,
             511, 512, 777, 1000, 1023, 1024]
    for d in (0, 1):
        src, dst = hosts[d], hosts[1 - d]
        sqp, rqp = qps[d], qps[1 - d]
        dst.mr.write(bytes([CANARY]) * (SLOT * len(sizes)),
                     SLOT * len(sizes), 0)
        msgs = []
        for i, size in enumerate(sizes):
            post_recv(rqp, dst.mr, i, i * SLOT, size + GRH_LEN + 64,
                      nsge=3 if i % 3 == 0 else 1)
        for i, size in enumerate(sizes):
            payload = pattern(i % 4, size, 1000 * d + i)
            off = SEND_BASE + i * SLOT
            src.mr.write(payload, size, off)
            imm = (0x01020304 * (i + 1)) & 0xffffffff if i % 2 else None
            inline = size <= 256 and i % 4 < 2
            flags = e.IBV_SEND_SIGNALED
            if inline:
                flags |= e.IBV_SEND_INLINE
            wr = send_wr(src.mr, 100 + i, off, size, ahs[d], rqp.qp_num,
                         nsge=1 + i % 3, imm=imm, flags=flags)
            sqp.post_send(wr)
            if inline and size:
                # Inline data was copied by post_send: the buffer is free.
                src.mr.write(b'\x5a' * size, size, off)
            msgs.append((size, imm, payload))
        for i, wc in enumerate(poll(src.scq, len(sizes))):
            check(wc.status == e.IBV_WC_SUCCESS and wc.wr_id == 100 + i and
                  wc.opcode == e.IBV_WC_SEND and wc.qp_num == sqp.qp_num,
                  'send completion %d: status %d wr_id %d opcode %d' %
                  (i, wc.status, wc.wr_id, wc.opcode))
        for i, wc in enumerate(poll(dst.rcq, len(sizes))):
            size, imm, payload = msgs[i]
            data = dst.mr.read(size + GRH_LEN + 64, i * SLOT)
            check_recv(wc, i, size, src, dst, sqp, rqp, imm, data, payload)


def t_mix(da, db):
    """Unsignalled and signalled sends; sq_sig_all."""
    a, b = Host(da), Host(db)
    qa, qb = a.ud_qp(send_wr=128, sig_all=0), b.ud_qp(recv_wr=128)
    ah = a.ah_to(b)
    n = 96
    for i in range(n):
        post_recv(qb, b.mr, i, i * 1024, 1024)
    for i in range(n):
        flags = e.IBV_SEND_SIGNALED if i % 8 == 7 else 0
        qa.post_send(send_wr(a.mr, i, SEND_BASE + i * 64, 64, ah,
                             qb.qp_num, flags=flags))
    wcs = poll(a.scq, n // 8)
    check([w.wr_id for w in wcs] == list(range(7, n, 8)),
          'signalled completions: %s' % [w.wr_id for w in wcs])
    check(all(w.status == e.IBV_WC_SUCCESS for w in wcs), 'send status')
    expect_empty(a.scq)
    got = poll(b.rcq, n)
    check([w.wr_id for w in got] == list(range(n)), 'receives out of order')
    check(all(w.status == e.IBV_WC_SUCCESS for w in got), 'recv status')

    # sq_sig_all: every send completes, signalled or not.
    qa2 = a.ud_qp(sig_all=1)
    for i in range(16):
        post_recv(qb, b.mr, 1000 + i, i * 1024, 1024)
    for i in range(16):
        qa2.post_send(send_wr(a.mr, 500 + i, SEND_BASE, 32, ah, qb.qp_num,
                              flags=0))
    wcs = poll(a.scq, 16)
    check([w.wr_id for w in wcs] == list(range(500, 516)),
          'sq_sig_all completions: %s' % [w.wr_id for w in wcs])
    expect_empty(a.scq)
    poll(b.rcq, 16)


def t_overflow(da, db):
    """A full CQ raises IBV_EVENT_CQ_ERR (async event)."""
    a, b = Host(da), Host(db)
    small = CQ(b.ctx, 4)
    check(small.cqe >= 4, 'cqe %d' % small.cqe)
    cqe = small.cqe
    qa, qb = a.ud_qp(), b.ud_qp(recv_wr=64, rcq=small)
    ah = a.ah_to(b)
    for i in range(cqe + 4):
        post_recv(qb, b.mr, i, i * 1024, 1024)
    for i in range(cqe + 4):
        qa.post_send(send_wr(a.mr, i, SEND_BASE, 16, ah, qb.qp_num))
    poll(a.scq, cqe + 4)
    check(readable(b.async_fd, 20), 'no async event after overflowing the CQ')
    ev = b.ctx.get_async_event()
    check(ev.event_type == e.IBV_EVENT_CQ_ERR,
          'async event %d, not IBV_EVENT_CQ_ERR' % ev.event_type)
    ev.ack()
    wcs = poll(small, cqe)
    check([w.wr_id for w in wcs] == list(range(cqe)),
          'the completions before the overflow: %s' % [w.wr_id for w in wcs])


def t_events(da, db):
    """Completion events: armed through the ring, solicited only, errors."""
    a, b = Host(da), Host(db, channel=True)
    qa, qb = a.ud_qp(), b.ud_qp()
    ah = a.ah_to(b)
    for i in range(16):
        post_recv(qb, b.mr, i, i * 1024, 1024)
    nev = 0

    def send(i, flags=e.IBV_SEND_SIGNALED, size=16):
        qa.post_send(send_wr(a.mr, i, SEND_BASE, size, ah, qb.qp_num,
                             flags=flags))
        poll(a.scq, 1)

    def event(timeout=20):
        """Did the CQ's event arrive?  Consumes it."""
        if not readable(b.channel_fd, timeout):
            return False
        b.channel.get_cq_event(b.rcq)
        return True

    # Armed for the next completion.
    b.rcq.req_notify()
    send(0)
    check(event(), 'no event for the next completion')
    nev += 1
    poll(b.rcq, 1)

    # Solicited only: an ordinary message does not fire, a solicited does.
    b.rcq.req_notify(solicited_only=True)
    send(1)
    poll(b.rcq, 1)
    check(not event(1), 'event for an unsolicited message')
    send(2, e.IBV_SEND_SIGNALED | e.IBV_SEND_SOLICITED)
    check(event(), 'no event for a solicited message')
    nev += 1
    poll(b.rcq, 1)

    # Completions already queued when arming do not fire; new ones do.
    send(3)
    time.sleep(0.5)
    b.rcq.req_notify()
    check(not event(1), 'event without a new completion')
    send(4)
    check(event(), 'no event after re-arming')
    nev += 1
    poll(b.rcq, 2)

    # Not armed: no event.
    send(5)
    poll(b.rcq, 1)
    check(not event(1), 'event while not armed')

    # Solicited only also fires on an unsuccessful completion.
    qb2 = b.ud_qp()
    post_recv(qb2, b.mr, 99, 8 * 1024, 20)	# too short for GRH + data
    b.rcq.req_notify(solicited_only=True)
    qa.post_send(send_wr(a.mr, 6, SEND_BASE, 100, ah, qb2.qp_num))
    poll(a.scq, 1)
    check(event(), 'no solicited-only event for an error completion')
    nev += 1
    wc = poll(b.rcq, 1)[0]
    check(wc.wr_id == 99 and wc.status == e.IBV_WC_LOC_LEN_ERR,
          'short receive: wr_id %d status %d' % (wc.wr_id, wc.status))
    b.rcq.ack_events(nev)


def t_errors(da, db):
    """Posting errors as ibv_post_send(3)/ibv_post_recv(3) specify."""
    a, b = Host(da), Host(db)
    qa = a.ud_qp(send_wr=16, send_sge=2, inline=64)
    qb = b.ud_qp(recv_wr=16, recv_sge=2)
    ah = a.ah_to(b)
    attr, init = qa.query(e.IBV_QP_CAP)
    nsend = init.cap.max_send_wr
    check(init.cap.max_send_sge == 2 and init.cap.max_inline_data == 64,
          'caps %d %d' % (init.cap.max_send_sge, init.cap.max_inline_data))

    wr = send_wr(a.mr, 1, SEND_BASE, 300, ah, qb.qp_num, nsge=3)
    check(rdma_errno(lambda: qa.post_send(wr)) == errno.EINVAL,
          'too many send SGEs: not EINVAL')
    wr = send_wr(a.mr, 1, SEND_BASE, 65, ah, qb.qp_num,
                 flags=e.IBV_SEND_INLINE | e.IBV_SEND_SIGNALED)
    check(rdma_errno(lambda: qa.post_send(wr)) == errno.EINVAL,
          'inline beyond max_inline_data: not EINVAL')
    wr = send_wr(a.mr, 1, SEND_BASE, 8, ah, qb.qp_num)
    wr.opcode = e.IBV_WR_RDMA_WRITE
    check(rdma_errno(lambda: qa.post_send(wr)) == errno.EINVAL,
          'RDMA WRITE on UD: not EINVAL')
    expect_empty(a.scq, 0.2)

    # A list one longer than the SQ: all but the last go, ENOMEM, bad_wr.
    wrs = [send_wr(a.mr, i, SEND_BASE, 8, ah, qb.qp_num)
           for i in range(nsend + 1)]
    for i in range(nsend):
        wrs[i].next_wr = wrs[i + 1]
    bad = SendWR(num_sge=1, sg=[SGE(0, 0, 0)])
    check(rdma_errno(lambda: qa.post_send(wrs[0], bad)) == errno.ENOMEM,
          'SQ overflow: not ENOMEM')
    check(bad.wr_id == nsend, 'bad_wr is %d, not %d' % (bad.wr_id, nsend))
    wcs = poll(a.scq, nsend)
    check([w.wr_id for w in wcs] == list(range(nsend)),
          'the WRs before bad_wr were not all sent')

    # A QP nobody sends to, so that its RQ only fills.
    qr = b.ud_qp(recv_wr=16, recv_sge=2)
    sges = [SGE(b.mr.buf, 8, b.mr.lkey)] * 3
    check(rdma_errno(lambda: qr.post_recv(RecvWR(1, 3, sges))) ==
          errno.EINVAL, 'too many recv SGEs: not EINVAL')
    attr, init = qr.query(e.IBV_QP_CAP)
    for i in range(init.cap.max_recv_wr):
        post_recv(qr, b.mr, i, 0, 64)
    check(rdma_errno(lambda: post_recv(qr, b.mr, 99, 0, 64)) == errno.ENOMEM,
          'RQ overflow: not ENOMEM')

    # States: no receives in RESET, no sends before RTS.
    cap = QPCap(max_send_wr=4, max_recv_wr=4)
    q = QP(a.pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=a.scq, rcq=a.rcq,
                            cap=cap))
    check(rdma_errno(lambda: post_recv(q, a.mr, 1, 0, 64)) == errno.EINVAL,
          'receive in RESET: not EINVAL')
    qattr = QPAttr(port_num=1)
    qattr.qkey = QKEY
    q.to_init(qattr)
    wr = send_wr(a.mr, 1, SEND_BASE, 8, ah, qb.qp_num)
    check(rdma_errno(lambda: q.post_send(wr)) == errno.EINVAL,
          'send in INIT: not EINVAL')
    post_recv(q, a.mr, 1, 0, 64)	# allowed in INIT


def t_ah_from_wc(da, db):
    """ibv_create_ah_from_wc() on a received GRH, and a reply with it."""
    a, b = Host(da), Host(db)
    qa, qb = a.ud_qp(), b.ud_qp()
    ah = a.ah_to(b)
    post_recv(qb, b.mr, 1, 0, 1024)
    post_recv(qa, a.mr, 2, 0, 1024)
    a.mr.write(b'ping', 4, SEND_BASE)
    qa.post_send(send_wr(a.mr, 1, SEND_BASE, 4, ah, qb.qp_num))
    poll(a.scq, 1)
    wc = poll(b.rcq, 1)[0]
    check(wc.status == e.IBV_WC_SUCCESS, 'ping not received')
    back = AH(b.pd, wc=wc, grh=b.mr.buf, port_num=1)
    b.mr.write(b'pong!', 5, SEND_BASE)
    qb.post_send(send_wr(b.mr, 3, SEND_BASE, 5, back, wc.src_qp))
    poll(b.scq, 1)
    wc = poll(a.rcq, 1)[0]
    check(wc.status == e.IBV_WC_SUCCESS and wc.byte_len == 45 and
          wc.src_qp == qb.qp_num, 'reply: status %d len %d src %d' %
          (wc.status, wc.byte_len, wc.src_qp))
    check(a.mr.read(5, GRH_LEN) == b'pong!', 'reply payload')


def t_resize(da, db):
    """ibv_resize_cq() with completions pending."""
    a, b = Host(da), Host(db)
    cq = CQ(b.ctx, 8)
    qa, qb = a.ud_qp(), b.ud_qp(recv_wr=64, rcq=cq)
    ah = a.ah_to(b)
    base = counter(db, 'ud_rx_packets')

    def deliver(first, n):
        for i in range(first, first + n):
            post_recv(qb, b.mr, i, (i % 32) * 1024, 1024)
        for i in range(first, first + n):
            qa.post_send(send_wr(a.mr, i, SEND_BASE, 8 + i, ah, qb.qp_num))
        poll(a.scq, n)
        wait_counter(db, 'ud_rx_packets', base + first + n)

    deliver(0, 6)
    cq.resize(32)
    check(cq.cqe >= 32, 'cqe %d after resize' % cq.cqe)
    wcs = poll(cq, 6)
    check([(w.wr_id, w.byte_len) for w in wcs] ==
          [(i, 48 + i) for i in range(6)], 'completions moved by resize')
    deliver(6, 6)
    check(rdma_errno(lambda: cq.resize(4)) == errno.EINVAL,
          'resize below the pending completions: not EINVAL')
    wcs = poll(cq, 6)
    check([w.wr_id for w in wcs] == list(range(6, 12)),
          'completions after a failed resize')
    cq.resize(16)
    deliver(12, 10)
    wcs = poll(cq, 10)
    check([w.wr_id for w in wcs] == list(range(12, 22)),
          'completions after shrinking')
    # A ring is a power of two: the cqe it reports may exceed the request,
    # never max_cqe, so resizing to it is valid (it was EINVAL at max_cqe).
    max_cqe = b.ctx.query_device().max_cqe
    big = CQ(b.ctx, max_cqe - 1)
    check(max_cqe - 1 <= big.cqe <= max_cqe, 'CQ of max_cqe - 1 (%d): cqe %d' %
          (max_cqe - 1, big.cqe))
    big.resize(big.cqe)
    check(big.cqe <= max_cqe, 'cqe %d after a resize to itself' % big.cqe)
    big.close()


def to_state(qp, state):
    attr = QPAttr()
    attr.qp_state = state
    qp.modify(attr, e.IBV_QP_STATE)


def t_flush(da, db):
    """The error state flushes what was posted, and what is posted later
    (the doorbells); RESET starts the rings over."""
    a, b = Host(da), Host(db)
    qa, qb = a.ud_qp(), b.ud_qp()
    ah = a.ah_to(b)
    for i in range(4):
        post_recv(qb, b.mr, i, i * 1024, 1024)
    to_state(qb, e.IBV_QPS_ERR)
    wcs = poll(b.rcq, 4)
    check([(w.wr_id, w.status) for w in wcs] ==
          [(i, e.IBV_WC_WR_FLUSH_ERR) for i in range(4)], 'RQ flush')
    for i in range(4, 6):
        post_recv(qb, b.mr, i, i * 1024, 1024)
    wcs = poll(b.rcq, 2)
    check([(w.wr_id, w.status) for w in wcs] ==
          [(i, e.IBV_WC_WR_FLUSH_ERR) for i in range(4, 6)],
          'receives posted in the error state')

    to_state(qa, e.IBV_QPS_ERR)
    for i in range(3):
        qa.post_send(send_wr(a.mr, i, SEND_BASE, 8, ah, qb.qp_num))
    wcs = poll(a.scq, 3)
    check([(w.wr_id, w.status) for w in wcs] ==
          [(i, e.IBV_WC_WR_FLUSH_ERR) for i in range(3)],
          'sends posted in the error state')

    # Back through RESET: the rings start over, traffic flows again.
    for q in (qa, qb):
        to_state(q, e.IBV_QPS_RESET)
        attr = QPAttr(port_num=1)
        attr.qkey = QKEY
        q.to_rts(attr)
    for i in range(10):
        post_recv(qb, b.mr, 10 + i, i * 1024, 1024)
    for i in range(10):
        qa.post_send(send_wr(a.mr, 10 + i, SEND_BASE, 100, ah, qb.qp_num))
    wcs = poll(a.scq, 10)
    check(all(w.status == e.IBV_WC_SUCCESS for w in wcs),
          'sends after RESET')
    wcs = poll(b.rcq, 10)
    check([(w.wr_id, w.status) for w in wcs] ==
          [(10 + i, e.IBV_WC_SUCCESS) for i in range(10)],
          'receives after RESET')


if __name__ == '__main__':
    main({'data': t_data, 'mix': t_mix, 'overflow': t_overflow,
          'events': t_events, 'errors': t_errors, 'ah_from_wc': t_ah_from_wc,
          'resize': t_resize, 'flush': t_flush})
