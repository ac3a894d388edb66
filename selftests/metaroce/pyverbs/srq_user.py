# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""SRQs through the userspace provider, without traffic (ibv_srq_pingpong
in test_srq_user.sh moves the data): ibv_create_srq and ibv_create_srq_ex,
the granted sizes, arming and querying the limit, posting until the ring is
full, and the requests the kernel must refuse with EINVAL (oversized SRQs,
QPs and CQs, as UCX and libfabric probe), and ibv_post_recv on a QP of
an SRQ, RC or UD (EINVAL).  ud_srq.py moves data through UD QPs on an SRQ.

Usage: /usr/bin/python3 srq_user.py DEV
"""
import errno
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyverbs.enums as e  # noqa: E402
from pyverbs.cq import CQ  # noqa: E402
from pyverbs.pyverbs_error import PyverbsRDMAError  # noqa: E402
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr  # noqa: E402
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr, SrqInitAttrEx  # noqa: E402
from pyverbs.wr import RecvWR, SGE  # noqa: E402

from mrlib import Host, check  # noqa: E402


def fails_with(err, what, fn):
    try:
        obj = fn()
    except PyverbsRDMAError as ex:
        check(ex.error_code == err, '%s: errno %d, expected %d' %
              (what, ex.error_code, err))
        return
    obj.close()
    raise AssertionError('%s succeeded' % what)


def recv_wr(h, wr_id, nsge=1):
    sges = [SGE(h.mr.buf + 64 * i, 64, h.mr.lkey) for i in range(nsge)]
    return RecvWR(wr_id=wr_id, num_sge=nsge, sg=sges)


def oversized(h, dev):
    fails_with(errno.EINVAL, 'SRQ with max_srq_wr + 1 WRs', lambda: SRQ(
        h.pd, SrqInitAttr(SrqAttr(max_wr=dev.max_srq_wr + 1, max_sge=1))))
    fails_with(errno.EINVAL, 'SRQ with max_srq_sge + 1 SGEs', lambda: SRQ(
        h.pd, SrqInitAttr(SrqAttr(max_wr=4, max_sge=dev.max_srq_sge + 1))))
    fails_with(errno.EINVAL, 'SRQ with 0 WRs', lambda: SRQ(
        h.pd, SrqInitAttr(SrqAttr(max_wr=0, max_sge=1))))
    fails_with(errno.EINVAL, 'CQ with max_cqe + 1 entries',
               lambda: CQ(h.ctx, dev.max_cqe + 1))
    for name, cap in (
            ('max_send_wr', QPCap(max_send_wr=dev.max_qp_wr + 1)),
            ('max_recv_wr', QPCap(max_recv_wr=dev.max_qp_wr + 1)),
            ('max_send_sge', QPCap(max_send_sge=dev.max_sge + 1)),
            ('max_recv_sge', QPCap(max_recv_sge=dev.max_sge + 1)),
            ('max_inline_data', QPCap(max_inline_data=1 << 20))):
        fails_with(errno.EINVAL, 'RC QP with %s beyond the limit' % name,
                   lambda cap=cap: QP(h.pd, QPInitAttr(
                       qp_type=e.IBV_QPT_RC, scq=h.scq, rcq=h.rcq, cap=cap)))


def srq_ex(h):
    attr = SrqInitAttrEx(max_wr=6, max_sge=2)
    attr.comp_mask = e.IBV_SRQ_INIT_ATTR_TYPE | e.IBV_SRQ_INIT_ATTR_PD
    attr.srq_type = e.IBV_SRQT_BASIC
    attr.pd = h.pd
    srq = SRQ(h.ctx, attr)
    q = srq.query()
    check(q.max_wr == 8 and q.max_sge >= 2 and q.srq_limit == 0,
          'ibv_create_srq_ex: max_wr %d max_sge %d limit %d, expected 8 '
          '(6 rounded up) >= 2 0' % (q.max_wr, q.max_sge, q.srq_limit))
    return srq


def limit(srq):
    srq.modify(SrqAttr(srq_limit=3), e.IBV_SRQ_LIMIT)
    check(srq.query().srq_limit == 3, 'limit not armed at 3')
    srq.modify(SrqAttr(srq_limit=0), e.IBV_SRQ_LIMIT)
    check(srq.query().srq_limit == 0, 'limit not disarmed')
    fails_with(errno.EINVAL, 'limit above max_wr', lambda: srq.modify(
        SrqAttr(srq_limit=9), e.IBV_SRQ_LIMIT) or srq)
    fails_with(errno.EINVAL, 'resizing (IBV_SRQ_MAX_WR)', lambda: srq.modify(
        SrqAttr(max_wr=16), e.IBV_SRQ_MAX_WR) or srq)


def posting(h, srq):
    fails_with(errno.EINVAL, 'post_srq_recv with 3 SGEs (max 2)',
               lambda: srq.post_recv(recv_wr(h, 99, 3)) or srq)
    for i in range(8):
        srq.post_recv(recv_wr(h, i, 2))
    fails_with(errno.ENOMEM, 'post_srq_recv to a full SRQ',
               lambda: srq.post_recv(recv_wr(h, 8)) or srq)


def refused_uses(h, srq):
    for qpt in (e.IBV_QPT_RC, e.IBV_QPT_UD):
        qp = QP(h.pd, QPInitAttr(qp_type=qpt, scq=h.scq, rcq=h.rcq,
                                 srq=srq, cap=QPCap(max_send_wr=4)))
        # In INIT, where a QP's own RQ would take receives.
        attr = QPAttr(port_num=1)
        attr.qkey = 0x11111111
        qp.to_init(attr)
        check(qp.qp_state == e.IBV_QPS_INIT, 'QP not in INIT')
        fails_with(errno.EINVAL, 'post_recv on a QP (type %d) of an SRQ' %
                   qpt, lambda: qp.post_recv(recv_wr(h, 1)) or qp)
        qp.close()
    # (Destroying an SRQ in use is EBUSY: pyverbs closes the QPs first, so
    # test_kverbs srq_err and ud_srq check that one.)


def run(dev_name):
    h = Host(dev_name)
    dev = h.ctx.query_device()
    check(dev.max_srq > 0 and dev.max_srq_wr > 0 and dev.max_srq_sge > 0,
          'no SRQ limits in query_device: %d %d %d' %
          (dev.max_srq, dev.max_srq_wr, dev.max_srq_sge))
    oversized(h, dev)
    srq = srq_ex(h)
    limit(srq)
    posting(h, srq)
    refused_uses(h, srq)
    srq.close()
    plain = SRQ(h.pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1)))
    check(plain.query().max_wr == 16, 'ibv_create_srq: max_wr %d' %
          plain.query().max_wr)
    plain.close()


if __name__ == '__main__':
    try:
        run(sys.argv[1])
    except Exception as ex:  # noqa: BLE001
        print('FAIL: %r' % ex)
        sys.stdout.flush()
        os._exit(1)
    print('PASS')
