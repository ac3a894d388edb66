# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Connection and stream lifecycle through the userspace provider (spec
6.5.4 to 6.8): a peer that dies, a QP destroyed, idle reclaim and a peer
restart, seen from the surviving QP.

Usage: /usr/bin/python3 conn_life.py TEST DEV_A DEV_B

Every test uses a large retry timeout (timeout 18, about 1.07 s, times
retry_cnt 7 + 1: about 8.6 s before IB_WC_RETRY_EXC_ERR from the retry
timer alone), so an error that comes within LIMIT seconds came from the
lifecycle, not from the timer.  A peer stream that is gone (STREAM_CLOSE)
fails what is left at the retry budget, as an InfiniBand requester would:
those tests use timeout 15 (GONE, about 1.07 s) and check the time.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyverbs.enums as e  # noqa: E402
from pyverbs.addr import AHAttr, GID, GlobalRoute  # noqa: E402
from pyverbs.mr import MR  # noqa: E402
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr  # noqa: E402
from pyverbs.wr import SGE, RecvWR, SendWR  # noqa: E402

from mrlib import Host, TestFailure, check, main, poll, readable  # noqa: E402

ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ)
BUF = 4 << 20
LIMIT = 3.0          # seconds; the retry timer alone takes about 8.6 s
# A slow kernel (MROCE_SLOW > 1, the debug kernel): a stream may be slow to
# progress long enough before a kill that its retry clock runs already,
# without a retry counted yet.
SLOW = float(os.environ.get('MROCE_SLOW') or 1) > 1
GONE_TIMEOUT = 15
GONE = 4.096e-6 * (1 << GONE_TIMEOUT) * 8   # its retry budget, seconds


def check_gone(t, what, low=None, late=None):
    """An error that a STREAM_CLOSE caused came at the retry budget: not
    sooner (completions of other streams may still be on their way), not
    much later.  t: from the earliest moment the close can have been sent;
    late: from the latest (default t).  low: the least share of the budget,
    0 when the stream was retrying already (its retry clock started before
    the STREAM_CLOSE).  By default 0.9, and a quarter on a slow kernel,
    where the clock may run before a retry is counted (not at once,
    though)."""
    if low is None:
        low = 0.25 if SLOW else 0.9
    if late is None:
        late = t
    check(low * GONE <= t and late < GONE + LIMIT,
          '%s: error after %.2fs, the retry budget is %.2fs' % (what, t, GONE))


def cnt(dev, name):
    with open('/sys/class/infiniband/%s/ports/1/hw_counters/%s' %
              (dev, name)) as f:
        return int(f.read())


def tunable(name, value):
    with open('/sys/module/metaroce/parameters/' + name, 'w') as f:
        f.write(str(value))


class Side:
    """A device with an MR big enough for READs and an RC QP."""

    def __init__(self, dev, timeout=18):
        self.timeout = timeout
        self.h = Host(dev)
        self.mr = MR(self.h.pd, BUF, ACCESS)
        self.qp = self.new_qp()

    def new_qp(self):
        cap = QPCap(max_send_wr=64, max_recv_wr=64, max_send_sge=1,
                    max_recv_sge=1)
        return QP(self.h.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.h.scq,
                                        rcq=self.h.rcq, cap=cap,
                                        sq_sig_all=1))

    def info(self):
        return (self.qp.qp_num, self.h.gid, self.mr.buf, self.mr.rkey)

    def connect(self, peer_qpn, peer_gid, qp=None):
        qp = qp or self.qp
        gr = GlobalRoute(dgid=GID(peer_gid), sgid_index=self.h.gid_index)
        gr.hop_limit = 64
        attr = QPAttr(port_num=1, path_mtu=e.IBV_MTU_1024)
        attr.qp_access_flags = ACCESS
        attr.ah_attr = AHAttr(gr=gr, is_global=1, port_num=1)
        attr.dest_qp_num = peer_qpn
        attr.rq_psn = 100
        attr.sq_psn = 100
        attr.max_dest_rd_atomic = 4
        attr.max_rd_atomic = 4
        attr.min_rnr_timer = 12
        attr.timeout = self.timeout
        attr.retry_cnt = 7
        attr.rnr_retry = 7
        qp.to_init(attr)
        qp.to_rtr(attr)
        qp.to_rts(attr)


def post(qp, mr, wr_id, op, length, raddr=0, rkey=0, offset=0):
    wr = SendWR(wr_id=wr_id, opcode=op, num_sge=1,
                sg=[SGE(mr.buf + offset, length, mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    if op != e.IBV_WR_SEND:
        wr.set_wr_rdma(rkey, raddr)
    qp.post_send(wr)


def post_recv(qp, mr, wr_id, length=4096):
    qp.post_recv(RecvWR(wr_id=wr_id, num_sge=1,
                        sg=[SGE(mr.buf, length, mr.lkey)]))


def first_error(cq, timeout):
    """The first completion with an error status within timeout, and when."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got, wcs = cq.poll(16)
        for wc in wcs[:got]:
            if wc.status != e.IBV_WC_SUCCESS:
                return wc, time.monotonic()
        if not got:
            time.sleep(0.001)
    raise TestFailure('no error completion within %.0fs' % timeout)


def verified_write(a, b, size=256 << 10):
    """a WRITEs a pattern into b's MR, READs it back: the bytes must match."""
    pat = os.urandom(size)
    a.mr.write(pat, size, 0)
    b.mr.write(b'\0' * size, size, 0)
    post(a.qp, a.mr, 1, e.IBV_WR_RDMA_WRITE, size, b.mr.buf, b.mr.rkey)
    wc = poll(a.h.scq, 1)[0]
    check(wc.status == e.IBV_WC_SUCCESS, 'WRITE: status %d' % wc.status)
    check(b.mr.read(size, 0) == pat, 'WRITE: target bytes differ')
    a.mr.write(b'\0' * size, size, size)
    post(a.qp, a.mr, 2, e.IBV_WR_RDMA_READ, size, b.mr.buf, b.mr.rkey,
         offset=size)
    wc = poll(a.h.scq, 1)[0]
    check(wc.status == e.IBV_WC_SUCCESS, 'READ: status %d' % wc.status)
    check(a.mr.read(size, size) == pat, 'READ: bytes differ')


def fork_peer(dev, info_a):
    """A child process with an RC QP on dev connected to info_a; returns
    it and its (qpn, gid, addr, rkey).  The child serves until killed."""
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__),
                              'child', dev], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    info_b = eval(child.stdout.readline())  # noqa: S307 - our own child
    child.stdin.write(repr(info_a[:2]) + '\n')
    child.stdin.flush()
    check(child.stdout.readline().strip() == 'ready', 'child not ready')
    return child, info_b


def child(dev):
    b = Side(dev)
    print(repr(b.info()), flush=True)
    qpn, gid = eval(sys.stdin.readline())  # noqa: S307 - from our parent
    b.connect(qpn, gid)
    print('ready', flush=True)
    time.sleep(3600)


def kill(child):
    child.kill()
    child.wait()


def t_kill(da, db):
    """A process with an RC QP is killed while its peer READs from it: the
    peer's READ fails with IB_WC_RETRY_EXC_ERR at the retry budget after
    the STREAM_CLOSE, with no retries, and a new pair works."""
    a = Side(da, GONE_TIMEOUT)
    peer, info_b = fork_peer(db, a.info())
    a.connect(info_b[0], info_b[1])
    sc = cnt(da, 'stream_closes_rcvd')
    nc = cnt(da, 'nak_closed_rcvd')
    retries = cnt(da, 'stream_retries')
    # Many 1 MiB READs: their responses are in flight when the peer dies.
    for i in range(16):
        post(a.qp, a.mr, 10 + i, e.IBV_WR_RDMA_READ, 1 << 20, info_b[2],
             info_b[3], offset=(i % 4) << 20)
    got = 0
    while got < 2:
        got += len(poll(a.h.scq, 1))
    retrying = cnt(da, 'stream_retries') > retries
    # The peer's QP goes, and its STREAM_CLOSE with it, while the process
    # exits: after the kill, before wait() returns, which on a loaded host
    # can take a tenth of a second after the close.  The budget runs from
    # the close: at least from the kill, at most from the reaping.
    tk = time.monotonic()
    kill(peer)
    t0 = time.monotonic()
    wc, t1 = first_error(a.h.scq, 30)
    print('error %d after %.2fs (%.2fs after the kill)%s' %
          (wc.status, t1 - t0, t1 - tk,
           ' (retrying before the kill)' if retrying else ''))
    check(wc.status == e.IBV_WC_RETRY_EXC_ERR,
          'status %d, not RETRY_EXC_ERR' % wc.status)
    check_gone(t1 - tk, 'READ', 0 if retrying else None, late=t1 - t0)
    # The killed process's QP goes with its exit, which under a loaded
    # host can take about as long as the retry budget: the peer's end must
    # be signalled, possibly after the READ failed (seen once: not yet
    # counted at the error, 1.05 s after the kill).  By its STREAM_CLOSE,
    # or by the NAK STREAM_CLOSED that a packet of ours reaching the gone
    # QP first draws: the NAK detaches the stream (spec 6.5.4), and the
    # STREAM_CLOSE then finds none attached (not counted).
    def signalled():
        return (cnt(da, 'stream_closes_rcvd') > sc or
                cnt(da, 'nak_closed_rcvd') > nc)
    for _ in range(50):
        if signalled():
            break
        time.sleep(0.1)
    print('STREAM_CLOSE %d, NAK STREAM_CLOSED %d, %.2fs after the kill' %
          (cnt(da, 'stream_closes_rcvd') - sc, cnt(da, 'nak_closed_rcvd') - nc,
           time.monotonic() - t0))
    check(signalled(), 'neither STREAM_CLOSE nor NAK STREAM_CLOSED counted')
    check(a.qp.query(e.IBV_QP_STATE)[0].qp_state == e.IBV_QPS_ERR,
          'QP not in ERR')
    # A new pair between the same devices works.
    a2, b2 = Side(da), Side(db)
    a2.connect(b2.qp.qp_num, b2.h.gid)
    b2.connect(a2.qp.qp_num, a2.h.gid)
    verified_write(a2, b2)


def t_destroy(da, db):
    """The peer QP is destroyed: our QP, idle, stays as it is with its
    stream detached; a send posted later fails with RETRY_EXC_ERR at the
    retry budget after the STREAM_CLOSE.  A peer QP moved to ERROR fails
    our outstanding request at the retry budget too."""
    a, b = Side(da, GONE_TIMEOUT), Side(db)
    a.connect(b.qp.qp_num, b.h.gid)
    b.connect(a.qp.qp_num, a.h.gid)
    verified_write(a, b)
    active = cnt(da, 'streams_active')
    sc = cnt(da, 'stream_closes_rcvd')
    b.qp.close()
    ok = False
    for _ in range(100):
        if (cnt(da, 'stream_closes_rcvd') > sc and
                cnt(da, 'streams_active') == active - 1):
            ok = True
            break
        time.sleep(0.05)
    check(ok, 'stream not detached: closes %d -> %d, streams %d -> %d' %
          (sc, cnt(da, 'stream_closes_rcvd'), active,
           cnt(da, 'streams_active')))
    check(a.qp.query(e.IBV_QP_STATE)[0].qp_state == e.IBV_QPS_RTS,
          'idle QP left its state')
    t0 = time.monotonic()
    post(a.qp, a.mr, 7, e.IBV_WR_RDMA_WRITE, 4096, b.mr.buf, b.mr.rkey)
    wc, t1 = first_error(a.h.scq, 30)
    check(wc.wr_id == 7 and wc.status == e.IBV_WC_RETRY_EXC_ERR,
          'send after detach: wr %d status %d' % (wc.wr_id, wc.status))
    check_gone(t1 - t0, 'send after detach')

    # A peer QP moved to ERROR: its STREAM_CLOSE (reason 3) fails our
    # SEND, which waits for a receive (RNR) meanwhile.
    a, b = Side(da, GONE_TIMEOUT), Side(db)
    a.connect(b.qp.qp_num, b.h.gid)
    b.connect(a.qp.qp_num, a.h.gid)
    verified_write(a, b)
    sent = cnt(db, 'stream_closes_sent')
    post(a.qp, a.mr, 8, e.IBV_WR_SEND, 64)
    time.sleep(0.3)
    got, _ = a.h.scq.poll(1)
    check(got == 0, 'SEND completed without a receive')
    err = QPAttr()
    err.qp_state = e.IBV_QPS_ERR
    b.qp.modify(err, e.IBV_QP_STATE)
    t0 = time.monotonic()
    wc, t1 = first_error(a.h.scq, 30)
    check(wc.wr_id == 8 and wc.status == e.IBV_WC_RETRY_EXC_ERR,
          'SEND: wr %d status %d' % (wc.wr_id, wc.status))
    check_gone(t1 - t0, 'SEND')
    check(cnt(db, 'stream_closes_sent') == sent + 1,
          'STREAM_CLOSEs sent: %d' % (cnt(db, 'stream_closes_sent') - sent))


TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
                    '..', 'tools', 'metaroce', 'metaroce')


NETNS = {'mra0': 'mra', 'mrb0': 'mrb'}


def conns(dev):
    """The connections `metaroce show DEV` lists (in DEV's namespace: the
    tool sees the devices of its own)."""
    out = subprocess.run(['ip', 'netns', 'exec', NETNS[dev], TOOL, 'show',
                          dev], capture_output=True, text=True).stdout
    return [ln for ln in out.splitlines() if 'cid' in ln and 'peer' in ln]


def t_idle(da, db):
    """With conn_idle_timeout_s 2, connections without streams are closed
    (CONN_CLOSE) and freed after tombstone_ms; a new QP then connects again
    and moves verified data."""
    tunable('conn_idle_timeout_s', 2)
    tunable('tombstone_ms', 300)
    try:
        a, b = Side(da), Side(db)
        a.connect(b.qp.qp_num, b.h.gid)
        b.connect(a.qp.qp_num, a.h.gid)
        verified_write(a, b)
        check(conns(da) and conns(db), 'metaroce show lists no connection')
        print('\n'.join(conns(da)))
        closed = cnt(da, 'conn_closed') + cnt(db, 'conn_closed')
        a.qp.close()
        b.qp.close()
        ok = False
        for _ in range(150):
            if (cnt(da, 'conn_active') == 0 and cnt(db, 'conn_active') == 0
                    and cnt(da, 'conn_closed') + cnt(db, 'conn_closed') >
                    closed):
                ok = True
                break
            time.sleep(0.1)
        check(ok, 'not reclaimed: conn_active %d %d' %
              (cnt(da, 'conn_active'), cnt(db, 'conn_active')))
        time.sleep(1)   # tombstones expire
        left = conns(da) + conns(db)
        check(not left, 'connections left: %s' % left)
        est = cnt(da, 'conn_established')
        a.qp, b.qp = a.new_qp(), b.new_qp()
        a.connect(b.qp.qp_num, b.h.gid)
        b.connect(a.qp.qp_num, a.h.gid)
        verified_write(a, b)
        check(cnt(da, 'conn_established') > est, 'no new connection')
    finally:
        tunable('conn_idle_timeout_s', 60)
        tunable('tombstone_ms', 2000)


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True)


def t_restart(da, db):
    """The peer device restarts (deleted and created again: new epoch)
    while its STREAM_CLOSEs cannot reach us: our busy QP fails with
    IB_WC_RETRY_EXC_ERR as soon as it sends (RESET NO_CONNECTION), our idle
    QP on the same connection moves to ERROR, and new QPs work."""
    a = Side(da)
    peer, info_b = fork_peer(db, a.info())
    a.connect(info_b[0], info_b[1])
    verified = a.new_qp()       # a second stream on the same connection
    a.connect(info_b[0] ^ 0x1, info_b[1], qp=verified)
    post_recv(verified, a.mr, 99)
    # The peer's packets to us are lost while it goes away.
    sh('ip netns exec mrb tc qdisc add dev vb root netem loss 100%')
    try:
        kill(peer)
        sh('rdma link delete %s' % db)
    finally:
        sh('ip netns exec mrb tc qdisc del dev vb root')
    resets = cnt(da, 'resets_rcvd')
    sh('ip netns exec mrb rdma link add %s type metaroce netdev vb' % db)
    t0 = time.monotonic()
    post(a.qp, a.mr, 5, e.IBV_WR_RDMA_WRITE, 4096, info_b[2], info_b[3])
    wc, t1 = first_error(a.h.scq, 30)
    print('error %d after %.2fs' % (wc.status, t1 - t0))
    check(wc.wr_id == 5 and wc.status == e.IBV_WC_RETRY_EXC_ERR,
          'wr %d status %d' % (wc.wr_id, wc.status))
    check(t1 - t0 < LIMIT, 'error after %.2fs' % (t1 - t0))
    check(cnt(da, 'resets_rcvd') > resets, 'no RESET counted')
    time.sleep(1)   # the new device's GID
    check(cnt(da, 'conn_peer_restart') > 0, 'restart not counted')
    wc = poll(a.h.rcq, 1, 10)[0]
    check(wc.wr_id == 99 and wc.status == e.IBV_WC_WR_FLUSH_ERR,
          'idle QP receive: wr %d status %d' % (wc.wr_id, wc.status))
    a2, b2 = Side(da), Side(db)
    a2.connect(b2.qp.qp_num, b2.h.gid)
    b2.connect(a2.qp.qp_num, a2.h.gid)
    verified_write(a2, b2)


def t_late(da, db):
    """One side connects its QP (its device opens the connection), the
    other side's QP reaches RTR only 2.5 s later, longer than
    half_open_timeout_ms (1 s): the connection is not freed as half-open,
    because the initiator confirmed it with a PROBE (MRC-CONN-013), and a
    verified WRITE works."""
    expired = cnt(db, 'conn_half_open_expired')
    a, b = Side(da), Side(db)
    a.connect(b.qp.qp_num, b.h.gid)
    time.sleep(2.5)
    b.connect(a.qp.qp_num, a.h.gid)
    verified_write(a, b)
    check(cnt(db, 'conn_half_open_expired') == expired,
          'the responder freed a connection as half-open')


def t_dead(da, db):
    """With conn_dead_timeout_s 2, a connection whose packets are all lost
    fails once no path has been ACTIVE for 2 s: our request fails with
    IB_WC_RETRY_EXC_ERR well before the retry timer (8.6 s) would fail it,
    and the QP gets IBV_EVENT_QP_FATAL.
    A handshake nobody answers fails the waiting QP the same way."""
    tunable('conn_dead_timeout_s', 2)
    try:
        a, b = Side(da), Side(db)
        a.connect(b.qp.qp_num, b.h.gid)
        b.connect(a.qp.qp_num, a.h.gid)
        verified_write(a, b)
        failed = cnt(da, 'conn_failed')
        sh('ip netns exec mra tc qdisc add dev va root netem loss 100%')
        sh('ip netns exec mrb tc qdisc add dev vb root netem loss 100%')
        try:
            t0 = time.monotonic()
            post(a.qp, a.mr, 3, e.IBV_WR_RDMA_WRITE, 65536, b.mr.buf,
                 b.mr.rkey)
            wc, t1 = first_error(a.h.scq, 30)
        finally:
            sh('ip netns exec mra tc qdisc del dev va root')
            sh('ip netns exec mrb tc qdisc del dev vb root')
        print('dead: error %d after %.2fs' % (wc.status, t1 - t0))
        check(wc.wr_id == 3 and wc.status == e.IBV_WC_RETRY_EXC_ERR,
              'wr %d status %d' % (wc.wr_id, wc.status))
        check(t1 - t0 < 7, 'error after %.2fs' % (t1 - t0))
        check(cnt(da, 'conn_failed') > failed, 'connection did not fail')
        # The consumer hears of it: IBV_EVENT_QP_FATAL on the QP.
        check(readable(a.h.async_fd, 5),
              'no async event after the connection failed')
        ev = a.h.ctx.get_async_event()
        check(ev.event_type == e.IBV_EVENT_QP_FATAL,
              'async event %d, not IBV_EVENT_QP_FATAL' % ev.event_type)
        ev.ack()
    finally:
        tunable('conn_dead_timeout_s', 30)

    # No device at the peer address any more: the CONNECTs go unanswered.
    gid_b = b.h.gid
    b.h.ctx.close()
    sh('rdma link delete %s' % db)
    try:
        a = Side(da)
        a.connect(0x123, gid_b)
        t0 = time.monotonic()
        post(a.qp, a.mr, 4, e.IBV_WR_RDMA_WRITE, 4096, 0, 0)
        wc, t1 = first_error(a.h.scq, 30)
        print('handshake: error %d after %.2fs' % (wc.status, t1 - t0))
        check(wc.wr_id == 4 and wc.status == e.IBV_WC_RETRY_EXC_ERR,
              'handshake failure: wr %d status %d' % (wc.wr_id, wc.status))
        check(t1 - t0 < LIMIT, 'error after %.2fs' % (t1 - t0))
    finally:
        sh('ip netns exec mrb rdma link add %s type metaroce netdev vb' % db)


if __name__ == '__main__':
    if sys.argv[1] == 'child':
        child(sys.argv[2])
        sys.exit(0)
    main({'kill': t_kill, 'destroy': t_destroy, 'idle': t_idle,
          'restart': t_restart, 'dead': t_dead, 'late': t_late})
