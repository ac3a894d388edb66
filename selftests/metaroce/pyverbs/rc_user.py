# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""RC QPs through the userspace provider: creation, the state machine and
query_qp.  No RC traffic (the RC transport is tested elsewhere).

Usage: /usr/bin/python3 rc_user.py TEST DEV_A DEV_B
"""
import errno
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyverbs.enums as e  # noqa: E402
from pyverbs.addr import AHAttr, GID, GlobalRoute  # noqa: E402
from pyverbs.pyverbs_error import PyverbsRDMAError  # noqa: E402
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr  # noqa: E402
from pyverbs.wr import SGE, SendWR  # noqa: E402

from mrlib import Host, check, main, poll, post_recv  # noqa: E402

ACCESS = (e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ |
          e.IBV_ACCESS_REMOTE_ATOMIC)


def rc_qp(h, send_wr_=32, recv_wr=32, sge=2, inline=64):
    cap = QPCap(max_send_wr=send_wr_, max_recv_wr=recv_wr,
                max_send_sge=sge, max_recv_sge=sge, max_inline_data=inline)
    return QP(h.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=h.scq, rcq=h.rcq,
                               cap=cap, sq_sig_all=0))


def query(qp):
    mask = (e.IBV_QP_STATE | e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS |
            e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN |
            e.IBV_QP_SQ_PSN | e.IBV_QP_AV | e.IBV_QP_TIMEOUT |
            e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY |
            e.IBV_QP_MAX_QP_RD_ATOMIC | e.IBV_QP_MAX_DEST_RD_ATOMIC |
            e.IBV_QP_MIN_RNR_TIMER | e.IBV_QP_CAP)
    return qp.query(mask)


def connect_attr(local, remote, rqpn, psn):
    gr = GlobalRoute(dgid=GID(remote.gid), sgid_index=local.gid_index)
    gr.hop_limit = 64
    attr = QPAttr(port_num=1, path_mtu=e.IBV_MTU_1024)
    attr.qp_access_flags = ACCESS
    attr.ah_attr = AHAttr(gr=gr, is_global=1, port_num=1)
    attr.dest_qp_num = rqpn
    attr.rq_psn = psn
    attr.sq_psn = psn + 1000
    attr.max_dest_rd_atomic = 4
    attr.max_rd_atomic = 2
    attr.min_rnr_timer = 12
    attr.timeout = 14
    attr.retry_cnt = 7
    attr.rnr_retry = 7
    return attr


def t_states(da, db):
    """RESET -> INIT -> RTR -> RTS, query_qp at each step, then ERR, RESET
    and round again; posting rules on the way."""
    a, b = Host(da), Host(db)
    qa, qb = rc_qp(a), rc_qp(b)
    check(qa.qp_type == e.IBV_QPT_RC and qa.qp_state == e.IBV_QPS_RESET,
          'new RC QP: type %d state %d' % (qa.qp_type, qa.qp_state))
    attr, init = query(qa)
    check(attr.qp_state == e.IBV_QPS_RESET, 'query: state %d' % attr.qp_state)
    check(init.cap.max_send_wr >= 32 and init.cap.max_recv_wr >= 32 and
          init.cap.max_send_sge >= 2 and init.cap.max_recv_sge >= 2 and
          init.cap.max_inline_data >= 64,
          'caps %d %d %d %d %d' % (init.cap.max_send_wr,
                                   init.cap.max_recv_wr,
                                   init.cap.max_send_sge,
                                   init.cap.max_recv_sge,
                                   init.cap.max_inline_data))
    check(init.qp_type == e.IBV_QPT_RC, 'query: init type')

    for rnd in range(2):
        aa = connect_attr(a, b, qb.qp_num, 0x1234 + rnd)
        qa.to_init(aa)
        attr, _ = query(qa)
        check(attr.qp_state == e.IBV_QPS_INIT and attr.port_num == 1 and
              attr.qp_access_flags == ACCESS,
              'INIT: state %d port %d access %#x' %
              (attr.qp_state, attr.port_num, attr.qp_access_flags))
        # Receives may be posted from INIT on; sends only from RTS.
        post_recv(qa, a.mr, 1, 0, 256)
        qa.to_rtr(aa)
        attr, _ = query(qa)
        check(attr.qp_state == e.IBV_QPS_RTR, 'RTR: state %d' % attr.qp_state)
        check(attr.dest_qp_num == qb.qp_num, 'RTR: dest_qp_num %d' %
              attr.dest_qp_num)
        check(attr.path_mtu == e.IBV_MTU_1024, 'RTR: path_mtu %d' %
              attr.path_mtu)
        check(attr.rq_psn == 0x1234 + rnd, 'RTR: rq_psn %#x' % attr.rq_psn)
        check(attr.max_dest_rd_atomic == 4 and attr.min_rnr_timer == 12,
              'RTR: max_dest_rd_atomic %d min_rnr_timer %d' %
              (attr.max_dest_rd_atomic, attr.min_rnr_timer))
        check(attr.ah_attr.is_global and
              str(attr.ah_attr.dgid) == b.gid and
              attr.ah_attr.sgid_index == a.gid_index and
              attr.ah_attr.port_num == 1,
              'RTR: address vector %s idx %d' % (attr.ah_attr.dgid,
                                                 attr.ah_attr.sgid_index))
        check(send_in(qa, a) == errno.EINVAL, 'send in RTR: not EINVAL')
        qa.to_rts(aa)
        attr, _ = query(qa)
        check(attr.qp_state == e.IBV_QPS_RTS, 'RTS: state %d' % attr.qp_state)
        check(attr.sq_psn == 0x1234 + rnd + 1000 and attr.timeout == 14 and
              attr.retry_cnt == 7 and attr.rnr_retry == 7 and
              attr.max_rd_atomic == 2,
              'RTS: sq_psn %#x timeout %d retry %d rnr %d rd_atomic %d' %
              (attr.sq_psn, attr.timeout, attr.retry_cnt, attr.rnr_retry,
               attr.max_rd_atomic))

        # To the error state: the posted receive is flushed.
        err = QPAttr()
        err.qp_state = e.IBV_QPS_ERR
        qa.modify(err, e.IBV_QP_STATE)
        check(query(qa)[0].qp_state == e.IBV_QPS_ERR, 'not in ERR')
        wc = poll(a.rcq, 1)[0]
        check(wc.wr_id == 1 and wc.status == e.IBV_WC_WR_FLUSH_ERR,
              'flushed receive: wr_id %d status %d' % (wc.wr_id, wc.status))
        rst = QPAttr()
        rst.qp_state = e.IBV_QPS_RESET
        qa.modify(rst, e.IBV_QP_STATE)
        check(query(qa)[0].qp_state == e.IBV_QPS_RESET, 'not in RESET')

    # An invalid transition is refused: RESET -> RTS.
    bad = QPAttr()
    bad.qp_state = e.IBV_QPS_RTS
    try:
        qa.modify(bad, e.IBV_QP_STATE)
        check(False, 'RESET -> RTS accepted')
    except PyverbsRDMAError as ex:
        check(ex.error_code == errno.EINVAL, 'RESET -> RTS: errno %d' %
              ex.error_code)

    # The peer goes all the way too.
    qb.to_rts(connect_attr(b, a, qa.qp_num, 77))
    check(query(qb)[0].qp_state == e.IBV_QPS_RTS, 'peer not in RTS')


def send_in(qp, h):
    """errno of posting a SEND on qp (0: accepted)."""
    wr = SendWR(wr_id=9, opcode=e.IBV_WR_SEND, num_sge=1,
                sg=[SGE(h.mr.buf, 8, h.mr.lkey)])
    try:
        qp.post_send(wr)
    except PyverbsRDMAError as ex:
        return ex.error_code
    return 0


def t_many(da, db):
    """Many user QPs and CQs at once, various sizes, then all destroyed."""
    a = Host(da)
    qps = []
    for i in range(24):
        qps.append(rc_qp(a, send_wr_=1 << (i % 10), recv_wr=1 + i * 7,
                         sge=1 + i % 8, inline=(i * 37) % 257))
    nums = sorted(q.qp_num for q in qps)
    check(len(set(nums)) == len(nums), 'duplicate QP numbers')
    for q in qps:
        q.close()


if __name__ == '__main__':
    main({'states': t_states, 'many': t_many})
