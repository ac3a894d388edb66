# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""UD QPs on a shared receive queue through the userspace provider, between
two devices in two network namespaces, every byte checked.

  two     two UD QPs on one SRQ (and one with its own RQ) receive from two
          senders: each datagram takes one SRQ WQE (the GRH in front),
          completes on the right QP with the UD fields; nothing past it is
          written
  limit   the SRQ limit event (IBV_EVENT_SRQ_LIMIT_REACHED) with UD traffic
  empty   a datagram for which the SRQ has no WQE is dropped and counted in
          ud_drop_no_recv; later datagrams land in WQEs posted later
  verbs   a UD QP on an SRQ has no RQ (caps 0, ibv_post_recv EINVAL), may be
          made by ibv_create_qp_ex, gets IBV_EVENT_QP_LAST_WQE_REACHED in the
          error state without taking the SRQ's WQEs, and may be destroyed
          while the SRQ and its other QPs go on

Usage: /usr/bin/python3 ud_srq.py TEST DEV_A DEV_B
"""
import errno
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyverbs.enums as e  # noqa: E402
from pyverbs.qp import (QP, QPAttr, QPCap, QPEx, QPInitAttr,  # noqa: E402
                        QPInitAttrEx)
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr  # noqa: E402
from pyverbs.wr import SGE, RecvWR  # noqa: E402

from mrlib import (GRH_LEN, QKEY, Host, check,  # noqa: E402
                   expect_empty, main, poll, rdma_errno, readable, send_wr)
from ud_user import CANARY, SEND_BASE, check_recv, counter  # noqa: E402

SLOT = 2048			# receive slot: GRH + up to 1024 bytes + canary
TAIL = 64


def make_srq(h, max_wr=64, max_sge=3):
    return SRQ(h.pd, SrqInitAttr(SrqAttr(max_wr=max_wr, max_sge=max_sge)))


def srq_qp(h, srq, rcq=None):
    """A UD QP in RTS that receives from srq."""
    init = QPInitAttr(qp_type=e.IBV_QPT_UD, scq=h.scq, rcq=rcq or h.rcq,
                      srq=srq, cap=QPCap(max_send_wr=16, max_send_sge=1))
    attr = QPAttr(port_num=1)
    attr.qkey = QKEY
    qp = QP(h.pd, init, attr)
    check(qp.qp_state == e.IBV_QPS_RTS, 'UD QP on the SRQ not in RTS')
    return qp


def post_slots(srq, h, first, n, nsge=1):
    """WQEs first..first+n-1, slot i at i * SLOT, canary-filled; with
    several SGEs the first holds exactly the GRH."""
    h.mr.write(bytes([CANARY]) * (n * SLOT), n * SLOT, first * SLOT)
    for i in range(first, first + n):
        base = h.mr.buf + i * SLOT
        size = SLOT - TAIL
        if nsge == 1:
            sges = [SGE(base, size, h.mr.lkey)]
        else:
            rest = size - GRH_LEN
            half = rest // 2
            sges = [SGE(base, GRH_LEN, h.mr.lkey),
                    SGE(base + GRH_LEN, half, h.mr.lkey),
                    SGE(base + GRH_LEN + half, rest - half, h.mr.lkey)]
        srq.post_recv(RecvWR(wr_id=i, num_sge=len(sges), sg=sges))


def payload(seed, size):
    return random.Random(seed).randbytes(size)


def send(src, sqp, ah, rqp, seed, size, imm=None, off=0):
    data = payload(seed, size)
    src.mr.write(data, size, SEND_BASE + off)
    sqp.post_send(send_wr(src.mr, seed, SEND_BASE + off, size, ah,
                          rqp.qp_num, imm=imm))
    return data


def check_slot(wc, src, dst, sqp, rqp, size, imm, data):
    slot = dst.mr.read(GRH_LEN + size + TAIL, wc.wr_id * SLOT)
    check_recv(wc, wc.wr_id, size, src, dst, sqp, rqp, imm, slot, data)


def t_two(da, db):
    """Senders a1, a2 on A; b1, b2 on one SRQ and b3 with its own RQ on B.
    Every sender sends to every receiver, interleaved."""
    a, b = Host(da), Host(db)
    senders = [a.ud_qp(), a.ud_qp()]
    srq = make_srq(b, max_wr=128)
    rqps = [srq_qp(b, srq), srq_qp(b, srq), b.ud_qp(recv_wr=64)]
    ah = a.ah_to(b)
    rounds = 12
    nsrq = rounds * 2 * 2
    post_slots(srq, b, 0, nsrq, nsge=1)
    post_slots(srq, b, nsrq, 8, nsge=3)	# stays posted: not taken
    own = 100			# b3's receives: slots 100.. of its own RQ
    b.mr.write(bytes([CANARY]) * (rounds * 2 * SLOT), rounds * 2 * SLOT,
               own * SLOT)
    for i in range(rounds * 2):
        rqps[2].post_recv(RecvWR(wr_id=own + i, num_sge=1, sg=[
            SGE(b.mr.buf + (own + i) * SLOT, SLOT - TAIL, b.mr.lkey)]))

    sizes = [0, 1, 40, 63, 64, 255, 256, 511, 700, 1000, 1023, 1024]
    expect = {}			# (src qpn, dst qpn) -> [(size, imm, data)]
    n = 0
    for r in range(rounds):
        for si, sqp in enumerate(senders):
            for ri, rqp in enumerate(rqps):
                size = sizes[(r + si + ri) % len(sizes)]
                imm = (0x5a000000 | n) if n % 3 == 0 else None
                data = send(a, sqp, ah, rqp, 1000 + n, size, imm,
                            off=n * SLOT)
                expect.setdefault((sqp.qp_num, rqp.qp_num), []).append(
                    (size, imm, data))
                n += 1
    poll(a.scq, n)
    wcs = poll(b.rcq, n)
    expect_empty(b.rcq)
    by_qp = {q.qp_num: q for q in rqps}
    by_src = {q.qp_num: q for q in senders}
    taken = set()
    for wc in wcs:
        check(wc.qp_num in by_qp, 'completion for qp_num %d' % wc.qp_num)
        check(wc.src_qp in by_src, 'completion from src_qp %d' % wc.src_qp)
        queue = expect[(wc.src_qp, wc.qp_num)]
        check(queue, 'more completions %d -> %d than sent' %
              (wc.src_qp, wc.qp_num))
        # Which datagram of the pair: the one whose bytes landed (UD does
        # not promise order between the senders' workers).
        got = b.mr.read(wc.byte_len, wc.wr_id * SLOT)[GRH_LEN:]
        k = next((i for i, m in enumerate(queue)
                  if m[0] == len(got) and m[2] == got), 0)
        size, imm, data = queue.pop(k)
        if wc.qp_num == rqps[2].qp_num:
            check(wc.wr_id >= own, 'own-RQ QP took SRQ WQE %d' % wc.wr_id)
        else:
            check(wc.wr_id < nsrq, 'SRQ QP: wr_id %d not one of the first '
                  '%d SRQ WQEs' % (wc.wr_id, nsrq))
            check(wc.wr_id not in taken, 'SRQ WQE %d taken twice' %
                  wc.wr_id)
            taken.add(wc.wr_id)
        check_slot(wc, a, b, by_src[wc.src_qp], by_qp[wc.qp_num], size,
                   imm, data)
    check(len(taken) == nsrq, '%d SRQ WQEs taken, expected %d' %
          (len(taken), nsrq))
    # The 8 WQEs left (3 SGEs each) serve the next datagrams, in order.
    for k in range(8):
        data = send(a, senders[k % 2], ah, rqps[k % 2], 5000 + k, 900 + k)
        poll(a.scq, 1)
        wc = poll(b.rcq, 1)[0]
        check(wc.wr_id == nsrq + k, 'WQE %d taken, expected %d' %
              (wc.wr_id, nsrq + k))
        check_slot(wc, a, b, senders[k % 2], rqps[k % 2], 900 + k, None,
                   data)


def t_limit(da, db):
    """Armed at 4 with 8 WQEs: no event while 4 are left, one when 3 are,
    then disarmed; armed at 2 again, the event comes when 1 is left."""
    a, b = Host(da), Host(db)
    sqp = a.ud_qp()
    srq = make_srq(b, max_wr=16)
    rqp = srq_qp(b, srq)
    ah = a.ah_to(b)
    post_slots(srq, b, 0, 8)
    srq.modify(SrqAttr(srq_limit=4), e.IBV_SRQ_LIMIT)
    check(srq.query().srq_limit == 4, 'limit not armed')
    seq = [0]

    def deliver(k):
        for _ in range(k):
            i = seq[0]
            data = send(a, sqp, ah, rqp, 7000 + i, 100 + i, off=i * SLOT)
            poll(a.scq, 1)
            wc = poll(b.rcq, 1)[0]
            check(wc.wr_id == i, 'WQE %d taken, expected %d' % (wc.wr_id, i))
            check_slot(wc, a, b, sqp, rqp, 100 + i, None, data)
            seq[0] += 1

    deliver(4)			# 4 left: not below the limit
    check(not readable(b.async_fd, 1), 'limit event with 4 WQEs left')
    check(srq.query().srq_limit == 4, 'limit disarmed early')
    deliver(1)			# 3 left
    check(readable(b.async_fd, 10), 'no limit event with 3 WQEs left')
    ev = b.ctx.get_async_event()
    check(ev.event_type == e.IBV_EVENT_SRQ_LIMIT_REACHED,
          'async event %d, not IBV_EVENT_SRQ_LIMIT_REACHED' % ev.event_type)
    ev.ack()
    check(srq.query().srq_limit == 0, 'limit still armed after the event')
    deliver(1)			# 2 left, disarmed
    check(not readable(b.async_fd, 1), 'a second limit event')
    srq.modify(SrqAttr(srq_limit=2), e.IBV_SRQ_LIMIT)
    check(not readable(b.async_fd, 1), 'limit event on arming')
    deliver(1)			# 1 left
    check(readable(b.async_fd, 10), 'no limit event with 1 WQE left')
    ev = b.ctx.get_async_event()
    check(ev.event_type == e.IBV_EVENT_SRQ_LIMIT_REACHED,
          'async event %d after re-arming' % ev.event_type)
    ev.ack()


def wait_counter(dev, name, target, timeout=20):
    end = time.monotonic() + timeout
    while counter(dev, name) < target:
        check(time.monotonic() < end, '%s %s at %d, expected %d' %
              (dev, name, counter(dev, name), target))
        time.sleep(0.01)


def t_empty(da, db):
    """An empty SRQ drops datagrams (ud_drop_no_recv), RQ or SRQ alike."""
    a, b = Host(da), Host(db)
    sqp = a.ud_qp()
    srq = make_srq(b, max_wr=16)
    qps = [srq_qp(b, srq), srq_qp(b, srq)]
    ah = a.ah_to(b)
    drops = counter(db, 'ud_drop_no_recv')
    rx = counter(db, 'ud_rx_packets')
    for i in range(6):
        send(a, sqp, ah, qps[i % 2], 8000 + i, 64)
    poll(a.scq, 6)
    wait_counter(db, 'ud_drop_no_recv', drops + 6)
    expect_empty(b.rcq)
    check(counter(db, 'ud_rx_packets') == rx, 'ud_rx_packets moved')
    check(counter(db, 'ud_drop_no_recv') == drops + 6,
          'ud_drop_no_recv %d, expected %d' %
          (counter(db, 'ud_drop_no_recv'), drops + 6))
    post_slots(srq, b, 0, 2)
    expect_empty(b.rcq)		# the dropped ones do not come back
    for i in range(2):
        data = send(a, sqp, ah, qps[i], 8100 + i, 300 + i, off=i * SLOT)
        poll(a.scq, 1)
        wc = poll(b.rcq, 1)[0]
        check(wc.wr_id == i, 'WQE %d, expected %d' % (wc.wr_id, i))
        check_slot(wc, a, b, sqp, qps[i], 300 + i, None, data)
    # Empty again: the next one is dropped too.
    send(a, sqp, ah, qps[0], 8200, 10)
    poll(a.scq, 1)
    wait_counter(db, 'ud_drop_no_recv', drops + 7)
    expect_empty(b.rcq)
    check(counter(db, 'ud_rx_packets') == rx + 2, 'ud_rx_packets %d, '
          'expected %d' % (counter(db, 'ud_rx_packets'), rx + 2))


def to_state(qp, state):
    attr = QPAttr()
    attr.qp_state = state
    qp.modify(attr, e.IBV_QP_STATE)


def t_verbs(da, db):
    a, b = Host(da), Host(db)
    sqp = a.ud_qp()
    ah = a.ah_to(b)
    srq = make_srq(b, max_wr=32)
    q1 = srq_qp(b, srq)
    _, init = q1.query(e.IBV_QP_CAP)
    check(init.cap.max_recv_wr == 0 and init.cap.max_recv_sge == 0,
          'ibv_query_qp: max_recv_wr %d max_recv_sge %d, expected 0 0' %
          (init.cap.max_recv_wr, init.cap.max_recv_sge))
    check(rdma_errno(lambda: q1.post_recv(RecvWR(wr_id=1, num_sge=1, sg=[
        SGE(b.mr.buf, 64, b.mr.lkey)]))) == errno.EINVAL,
        'ibv_post_recv on a UD QP of an SRQ: not EINVAL')

    # ibv_create_qp_ex with send ops: a UD QP on the SRQ too.
    mask = e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS
    iex = QPInitAttrEx(qp_type=e.IBV_QPT_UD, scq=b.scq, rcq=b.rcq, srq=srq,
                       cap=QPCap(max_send_wr=8, max_send_sge=1),
                       comp_mask=mask, pd=b.pd,
                       send_ops_flags=e.IBV_QP_EX_WITH_SEND)
    attr = QPAttr(port_num=1)
    attr.qkey = QKEY
    q2 = QPEx(b.ctx, iex, attr)
    check(q2.qp_state == e.IBV_QPS_RTS, 'QPEx on the SRQ not in RTS')
    check(iex.cap.max_recv_wr == 0 and iex.cap.max_recv_sge == 0,
          'ibv_create_qp_ex: max_recv_wr %d max_recv_sge %d, expected 0 0' %
          (iex.cap.max_recv_wr, iex.cap.max_recv_sge))

    post_slots(srq, b, 0, 8)
    for i, q in enumerate((q1, q2, q1, q2)):
        data = send(a, sqp, ah, q, 9000 + i, 500 + i, off=i * SLOT)
        poll(a.scq, 1)
        wc = poll(b.rcq, 1)[0]
        check(wc.wr_id == i, 'WQE %d, expected %d' % (wc.wr_id, i))
        check_slot(wc, a, b, sqp, q, 500 + i, None, data)

    # q1 to the error state: LAST_WQE_REACHED, no SRQ WQE flushed to it,
    # datagrams for it dropped; q2 takes the SRQ's next WQE.
    drops = counter(db, 'ud_drop_no_qp')
    to_state(q1, e.IBV_QPS_ERR)
    check(readable(b.async_fd, 10), 'no async event in the error state')
    ev = b.ctx.get_async_event()
    check(ev.event_type == e.IBV_EVENT_QP_LAST_WQE_REACHED,
          'async event %d, not IBV_EVENT_QP_LAST_WQE_REACHED' %
          ev.event_type)
    ev.ack()
    expect_empty(b.rcq)
    send(a, sqp, ah, q1, 9100, 10)
    poll(a.scq, 1)
    wait_counter(db, 'ud_drop_no_qp', drops + 1)
    expect_empty(b.rcq)
    data = send(a, sqp, ah, q2, 9101, 1024, off=4 * SLOT)
    poll(a.scq, 1)
    wc = poll(b.rcq, 1)[0]
    check(wc.wr_id == 4, 'after the error: WQE %d, expected 4' % wc.wr_id)
    check_slot(wc, a, b, sqp, q2, 1024, None, data)

    # Destroy q1 (in error) and q2 (in RTS) while the SRQ lives; a new QP
    # on the SRQ takes its next WQE.
    q1.close()
    q2.close()
    q3 = srq_qp(b, srq)
    data = send(a, sqp, ah, q3, 9200, 77, off=5 * SLOT)
    poll(a.scq, 1)
    wc = poll(b.rcq, 1)[0]
    check(wc.wr_id == 5, 'new QP: WQE %d, expected 5' % wc.wr_id)
    check_slot(wc, a, b, sqp, q3, 77, None, data)
    expect_empty(b.rcq)
    check(not readable(b.async_fd, 0.5), 'unexpected async event')


if __name__ == '__main__':
    main({'two': t_two, 'limit': t_limit, 'empty': t_empty,
          'verbs': t_verbs})
