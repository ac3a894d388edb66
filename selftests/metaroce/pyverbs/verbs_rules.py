# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Verbs-mapping rules of spec section 15 and 16 seen through the userspace
provider: device attributes, the node GUID, inline data copied at post
time, local SGE checks before any packet, R_Key randomness.

Usage: /usr/bin/python3 verbs_rules.py TEST DEV_A DEV_B
"""
import errno
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyverbs.enums as e  # noqa: E402
from pyverbs.cq import CQ  # noqa: E402
from pyverbs.mr import MR  # noqa: E402
from pyverbs.pyverbs_error import PyverbsRDMAError  # noqa: E402
from pyverbs.qp import QPAttr  # noqa: E402
from pyverbs.wr import SGE, SendWR  # noqa: E402

from mrlib import Host, check, main, poll, post_recv, readable  # noqa: E402
from rc_user import connect_attr, rc_qp  # noqa: E402

ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ)


def cnt(dev, name):
    with open('/sys/class/infiniband/%s/ports/1/hw_counters/%s' %
              (dev, name)) as f:
        return int(f.read())


def new_data_packets(dev):
    """Data packets dev sent for the first time: every resend, TLPs
    included, counts in retransmits.  A STREAM_CLOSE is a sequenced packet
    too, but no data: the QP that a local error fails sends one at once
    (MRC-CONN-034), and rightly."""
    return (cnt(dev, 'tx_data_packets') - cnt(dev, 'retransmits') -
            cnt(dev, 'stream_closes_sent'))


def quiet(dev, settle=1.0, limit=15.0):
    """Wait until dev sends no new data packet for settle seconds: the
    STREAM_CLOSEs of QPs an earlier test (another process) destroyed are
    sequenced packets too, and may leave late."""
    end = time.monotonic() + limit
    last = new_data_packets(dev)
    quiet_since = time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.2)
        now = new_data_packets(dev)
        if now != last:
            last, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= settle:
            return


def eui64(mac):
    """Modified EUI-64 of a MAC address (RFC 4291 appendix A)."""
    b = bytes(int(x, 16) for x in mac.split(':'))
    return bytes([b[0] ^ 2, b[1], b[2], 0xff, 0xfe, b[3], b[4], b[5]])


def t_attrs(da, db):
    """MRC-VRB-005: atomics, at least 16 READ/ATOMIC contexts each way,
    one P_Key, RNR NAK generation; MRC-VRB-001: one Ethernet port;
    MRC-VRB-004: node GUID = modified EUI-64 of the netdev's MAC."""
    del db
    h = Host(da)
    a = h.ctx.query_device()
    check(a.atomic_caps in (e.IBV_ATOMIC_HCA, e.IBV_ATOMIC_GLOB),
          'atomic_cap %d' % a.atomic_caps)
    check(a.max_qp_rd_atom >= 16 and a.max_qp_init_rd_atom >= 16,
          'max_qp_rd_atom %d max_qp_init_rd_atom %d' %
          (a.max_qp_rd_atom, a.max_qp_init_rd_atom))
    check(a.max_pkeys == 1, 'max_pkeys %d' % a.max_pkeys)
    check(a.device_cap_flags & e.IBV_DEVICE_RC_RNR_NAK_GEN,
          'IBV_DEVICE_RC_RNR_NAK_GEN not set: %#x' % a.device_cap_flags)
    check(a.phys_port_cnt == 1, 'phys_port_cnt %d' % a.phys_port_cnt)
    p = h.ctx.query_port(1)
    check(p.link_layer == e.IBV_LINK_LAYER_ETHERNET,
          'link_layer %d' % p.link_layer)
    check(p.pkey_tbl_len == 1, 'pkey_tbl_len %d' % p.pkey_tbl_len)
    # MRC-VRB-006: an up port with its MTUs, GID table, speed and width.
    check(p.state == e.IBV_PORT_ACTIVE and p.max_mtu == e.IBV_MTU_4096 and
          p.active_mtu >= e.IBV_MTU_256 and p.gid_tbl_len >= 16 and
          p.active_speed and p.active_width,
          'port: state %d max_mtu %d active_mtu %d gid_tbl_len %d speed %d '
          'width %d' % (p.state, p.max_mtu, p.active_mtu, p.gid_tbl_len,
                        p.active_speed, p.active_width))
    with open('/sys/class/infiniband/%s/parent' % da) as f:
        netdev = f.read().strip()
    # The netdev lives in the device's namespace; its MAC is in sysfs of
    # that namespace, which is where this test runs.
    with open('/sys/class/net/%s/address' % netdev) as f:
        want = eui64(f.read().strip())
    with open('/sys/class/infiniband/%s/node_guid' % da) as f:
        got = bytes.fromhex(f.read().strip().replace(':', ''))
    check(got == want, 'node_guid %s, EUI-64 of the MAC %s' %
          (got.hex(), want.hex()))


def pair(da, db, channel=False, rd_atomic=None):
    """Hosts on da and db (db's receive CQ with a completion channel if
    channel) and an RC QP each, connected (with max_rd_atomic rd_atomic,
    if given)."""
    a, b = Host(da), Host(db, channel=channel)
    qa, qb = rc_qp(a), rc_qp(b)
    for h, q, peer, pq in ((a, qa, b, qb), (b, qb, a, qa)):
        attr = connect_attr(h, peer, pq.qp_num, 0)
        attr.rq_psn = attr.sq_psn = 0
        if rd_atomic is not None:
            attr.max_rd_atomic = rd_atomic
        q.to_init(attr)
        q.to_rtr(attr)
        q.to_rts(attr)
    return a, b, qa, qb


def t_inline(da, db):
    """MRC-VRB-014: an inline WRITE takes its data at post time: the
    source buffer overwritten right after ibv_post_send changes nothing
    at the target."""
    a, b, qa, _ = pair(da, db)
    src = MR(a.pd, 4096, ACCESS)
    dst = MR(b.pd, 4096, ACCESS)
    dst.write(b'\0' * 4096, 4096)
    for i in range(16):
        data = bytes([(i * 7 + k) & 0xff for k in range(64)])
        src.write(data, 64)
        wr = SendWR(wr_id=i, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                    sg=[SGE(src.buf, 64, src.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED | e.IBV_SEND_INLINE)
        wr.set_wr_rdma(dst.rkey, dst.buf + 64 * i)
        qa.post_send(wr)
        src.write(b'\xee' * 64, 64)     # too late to matter
    wcs = poll(a.scq, 16)
    check(all(w.status == e.IBV_WC_SUCCESS for w in wcs),
          'statuses %s' % [w.status for w in wcs])
    # MRC-ORD-007: send-queue completions in posting order.
    check([w.wr_id for w in wcs] == list(range(16)),
          'completion order %s' % [w.wr_id for w in wcs])
    got = dst.read(64 * 16, 0)
    for i in range(16):
        want = bytes([(i * 7 + k) & 0xff for k in range(64)])
        check(got[64 * i:64 * i + 64] == want,
              'inline WRITE %d: target has %s' % (i, got[64 * i:64 * i + 8].hex()))


def t_sge(da, db):
    """MRC-ERR-012: a WRITE with a bad L_Key, and one past the end of its
    MR, complete with IB_WC_LOC_PROT_ERR / LOC_LEN_ERR or LOC_PROT_ERR,
    the QP goes to ERROR, and no data packet leaves the device."""
    for bad in ('lkey', 'bounds'):
        a, b, qa, _ = pair(da, db)
        src = MR(a.pd, 4096, ACCESS)
        dst = MR(b.pd, 4096, ACCESS)
        # Resends (a tail-loss probe of an earlier test's last packet
        # after a vCPU stall, say) are not this WRITE's packets, nor are
        # the STREAM_CLOSEs of an earlier test's QPs.
        quiet(da)
        before = new_data_packets(da)
        if bad == 'lkey':
            sge = SGE(src.buf, 1024, src.lkey ^ 0x5a00)
        else:
            sge = SGE(src.buf + 2048, 4096, src.lkey)
        wr = SendWR(wr_id=1, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[sge],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(dst.rkey, dst.buf)
        qa.post_send(wr)
        wc = poll(a.scq, 1)[0]
        check(wc.status in (e.IBV_WC_LOC_PROT_ERR, e.IBV_WC_LOC_LEN_ERR),
              '%s: status %d' % (bad, wc.status))
        # The STREAM_CLOSE is counted when queued, as a data packet when
        # it leaves: both, before the difference is taken.
        quiet(da)
        sent = new_data_packets(da) - before
        check(sent == 0, '%s: %d data packets sent' % (bad, sent))
        state = qa.query(e.IBV_QP_STATE)[0].qp_state
        check(state == e.IBV_QPS_ERR, '%s: QP state %d' % (bad, state))
        reset = QPAttr()
        reset.qp_state = e.IBV_QPS_RESET
        qa.modify(reset, e.IBV_QP_STATE)


def t_rd_atomic0(da, db):
    """MRC-PLC-020: on a QP with max_rd_atomic 0 no READ may be in
    flight: a READ completes with IB_WC_LOC_QP_OP_ERR at once, no packet
    leaves, the QP goes to ERROR; a WRITE before it completes normally."""
    a, b, qa, _ = pair(da, db, rd_atomic=0)
    check(qa.query(e.IBV_QP_MAX_QP_RD_ATOMIC)[0].max_rd_atomic == 0,
          'max_rd_atomic not 0')
    src = MR(a.pd, 4096, ACCESS)
    dst = MR(b.pd, 4096, ACCESS)
    src.write(b'\x11' * 4096, 4096)
    dst.write(b'\x22' * 4096, 4096)
    wr = SendWR(wr_id=1, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(src.buf, 1024, src.lkey)], send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(dst.rkey, dst.buf)
    qa.post_send(wr)
    check([(w.wr_id, w.status) for w in poll(a.scq, 1)] == [(1, e.IBV_WC_SUCCESS)],
          'the WRITE did not complete')
    quiet(da)
    before = new_data_packets(da)
    wr = SendWR(wr_id=2, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                sg=[SGE(src.buf + 2048, 1024, src.lkey)], send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(dst.rkey, dst.buf + 2048)
    qa.post_send(wr)
    wc = poll(a.scq, 1)[0]
    check((wc.wr_id, wc.status) == (2, e.IBV_WC_LOC_QP_OP_ERR),
          'READ: wr_id %d status %d' % (wc.wr_id, wc.status))
    quiet(da)  # the STREAM_CLOSE has left too
    sent = new_data_packets(da) - before
    check(sent == 0, '%d data packets sent for the READ' % sent)
    check(src.read(1024, 2048) == b'\x11' * 1024, 'READ buffer written')
    state = qa.query(e.IBV_QP_STATE)[0].qp_state
    check(state == e.IBV_QPS_ERR, 'QP state %d' % state)


def t_solicited(da, db):
    """MRC-PLC-017: with the receive CQ armed for solicited completions
    only, a SEND without SE completes without an event and a SEND with SE
    raises one."""
    a, b, qa, qb = pair(da, db, channel=True)
    for i in range(2):
        post_recv(qb, b.mr, 10 + i, 4096 * i, 4096)
    b.rcq.req_notify(True)
    for i, flags in enumerate((0, e.IBV_SEND_SOLICITED)):
        wr = SendWR(wr_id=i, opcode=e.IBV_WR_SEND, num_sge=1,
                    sg=[SGE(a.mr.buf, 256, a.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED | flags)
        qa.post_send(wr)
        check(poll(a.scq, 1)[0].status == e.IBV_WC_SUCCESS, 'SEND %d' % i)
        event = readable(b.channel_fd, 0.5 if not flags else 10)
        wc = poll(b.rcq, 1)[0]
        check(wc.status == e.IBV_WC_SUCCESS and wc.wr_id == 10 + i,
              'receive %d: wr %d status %d' % (i, wc.wr_id, wc.status))
        if not flags:
            check(not event, 'an event for a SEND without SE')
            continue
        check(event, 'no event for a SEND with SE')
        b.channel.get_cq_event(b.rcq)
        b.rcq.ack_events(1)


def t_recv_lkey(da, db):
    """MRC-PLC-015, MRC-ERR-005: a SEND that meets a receive WQE whose
    L_Key is no longer valid (its MR deregistered): the receive completes
    with IB_WC_LOC_PROT_ERR, the next one is flushed, and the SEND
    completes with IB_WC_REM_OP_ERR, as on InfiniBand; no byte lands."""
    a, b, qa, qb = pair(da, db)
    gone = MR(b.pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
    gone.write(b'\x33' * 4096, 4096)
    post_recv(qb, gone, 20, 0, 4096)
    post_recv(qb, b.mr, 21, 0, 4096)
    gone.close()
    a.mr.write(b'\x44' * 256, 256)
    wr = SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1,
                sg=[SGE(a.mr.buf, 256, a.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    qa.post_send(wr)
    swc = poll(a.scq, 1)[0]
    rwc = poll(b.rcq, 2)
    check(swc.status == e.IBV_WC_REM_OP_ERR,
          'SEND: status %d, not REM_OP_ERR' % swc.status)
    check([(w.wr_id, w.status) for w in rwc] ==
          [(20, e.IBV_WC_LOC_PROT_ERR), (21, e.IBV_WC_WR_FLUSH_ERR)],
          'receives: %s' % [(w.wr_id, w.status) for w in rwc])
    check(b.mr.read(256, 0) != b'\x44' * 256, 'the SEND landed in a receive')


def t_rkeys(da, db):
    """MRC-SEC-002: the key part (low 8 bits) of the R_Keys of 32
    registrations of one buffer is not a counter and changes with each
    registration."""
    del db
    h = Host(da)
    keys = []
    for _ in range(32):
        mr = MR(h.pd, 4096, ACCESS)
        keys.append(mr.rkey)
        mr.close()
    low = [k & 0xff for k in keys]
    steps = {(low[i + 1] - low[i]) & 0xff for i in range(len(low) - 1)}
    check(len(set(low)) >= 16, 'key bits of 32 R_Keys: %s' % low)
    check(len(steps) > 4, 'key bits step by %s: a counter' % sorted(steps))
    check(len(set(keys)) == len(keys), 'an R_Key repeats: %s' % keys)


def qmem_mb(dev):
    """The ctx_queue_mem_mb tunable (the caller set it low)."""
    del dev
    with open('/sys/module/metaroce/parameters/ctx_queue_mem_mb') as f:
        return int(f.read())


def t_qmem(da, db):
    """Issue 18 finding 8: a user context's queue memory (rings and
    shadows) is capped at ctx_queue_mem_mb: the QP, CQ or SRQ beyond it
    fails with ENOMEM, the next context is not affected, and destroying
    gives the memory back."""
    del db
    limit = qmem_mb(da)
    check(limit <= 128, 'ctx_queue_mem_mb %d: the caller sets it low' % limit)
    h = Host(da)
    attr = h.ctx.query_device()
    big = []

    def big_qp(host):
        return rc_qp(host, attr.max_qp_wr, attr.max_qp_wr,
                     attr.max_sge, 256)
    err = 0
    while len(big) < 64:
        try:
            big.append(big_qp(h))
        except PyverbsRDMAError as ex:
            err = ex.error_code
            break
    check(err == errno.ENOMEM,
          'QP %d of %d WRs beyond %d MiB: errno %d, not ENOMEM' %
          (len(big) + 1, attr.max_qp_wr, limit, err))
    # A QP of max_qp_wr WRs takes some 29 MiB: a few fit, not 64.
    check(1 <= len(big) < 64, '%d big QPs fit in %d MiB' % (len(big), limit))
    # What is left is less than a big QP (29 MiB): CQs of 4095 CQEs (a
    # 256 KiB ring each) fill it with the QPs' charge counted, fewer than
    # 116 of them.  (A CQ of max_cqe, 64 MiB, exceeds the limit alone.)
    cqs, err = [], 0
    while len(cqs) < 256:
        try:
            cqs.append(CQ(h.ctx, 4095))
        except PyverbsRDMAError as ex:
            err = ex.error_code
            break
    check(err == errno.ENOMEM and len(cqs) < 116,
          'CQ %d of 4095 CQEs at the limit: errno %d' % (len(cqs) + 1, err))
    try:
        CQ(h.ctx, attr.max_cqe).close()
        err = 0
    except PyverbsRDMAError as ex:
        err = ex.error_code
    check(err == errno.ENOMEM, 'CQ of max_cqe (%d) CQEs at the limit: errno %d' %
          (attr.max_cqe, err))
    for cq in cqs:
        cq.close()
    # The limit is bytes, per context: a small QP still fits here, a big
    # one in another context.
    small = rc_qp(h)
    other = Host(da)
    big_qp(other).close()
    small.close()
    for qp in big:
        qp.close()
    # Every byte came back: as many big QPs fit again.
    again = []
    for _ in big:
        again.append(big_qp(h))
    for qp in again:
        qp.close()


if __name__ == '__main__':
    main({'attrs': t_attrs, 'inline': t_inline, 'sge': t_sge,
          'rd_atomic0': t_rd_atomic0, 'solicited': t_solicited,
          'rkeys': t_rkeys, 'qmem': t_qmem, 'recv_lkey': t_recv_lkey})
