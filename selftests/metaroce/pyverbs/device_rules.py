# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Device-level rules of spec sections 15 and 19 (test_device_rules): the
driver_id and uverbs ABI the kernel reports over rdma netlink, and the
feature set a device advertises against what it offers.

Usage: /usr/bin/python3 device_rules.py TEST DEV_A [DEV_B]
Exit 0 pass, 1 fail.
"""
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyverbs.enums as e  # noqa: E402
from pyverbs.mr import MR, MW  # noqa: E402
from pyverbs.qp import QP, QPCap, QPInitAttr  # noqa: E402
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr  # noqa: E402
from pyverbs.xrcd import XRCD, XRCDInitAttr  # noqa: E402

from mrlib import Host, TestFailure, check, main  # noqa: E402

# include/uapi/rdma/rdma_netlink.h
NETLINK_RDMA = 20
RDMA_NL_NLDEV = 5
RDMA_NLDEV_CMD_GET_CHARDEV = 15
RDMA_NLDEV_ATTR_DEV_INDEX = 1
RDMA_NLDEV_ATTR_CHARDEV_TYPE = 69
RDMA_NLDEV_ATTR_CHARDEV_ABI = 71
RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID = 73
NLM_F_REQUEST = 1
NLMSG_ERROR = 2


def abi_version():
    """METAROCE_UVERBS_ABI_VERSION from include/uapi/rdma/metaroce-abi.h."""
    here = os.path.dirname(os.path.abspath(__file__))
    hdr = os.path.join(here, '../../../include/uapi/rdma/metaroce-abi.h')
    with open(hdr) as f:
        for line in f:
            w = line.split()
            if w[:2] == ['#define', 'METAROCE_UVERBS_ABI_VERSION']:
                return int(w[2])
    raise TestFailure('METAROCE_UVERBS_ABI_VERSION not in %s' % hdr)


def nla(kind, payload):
    n = 4 + len(payload)
    return struct.pack('=HH', n, kind) + payload + b'\0' * (-n % 4)


def uverbs_chardev_attrs(index):
    """The attributes of RDMA_NLDEV_CMD_GET_CHARDEV "uverbs" for the
    device with that index, as {type: bytes}."""
    body = (nla(RDMA_NLDEV_ATTR_DEV_INDEX, struct.pack('=I', index)) +
            nla(RDMA_NLDEV_ATTR_CHARDEV_TYPE, b'uverbs\0'))
    kind = (RDMA_NL_NLDEV << 10) + RDMA_NLDEV_CMD_GET_CHARDEV
    msg = struct.pack('=IHHII', 16 + len(body), kind, NLM_F_REQUEST, 1, 0)
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA)
    s.sendto(msg + body, (0, 0))
    data = s.recv(65536)
    s.close()
    length, typ = struct.unpack_from('=IH', data)
    if typ == NLMSG_ERROR:
        err = struct.unpack_from('=i', data, 16)[0]
        raise TestFailure('GET_CHARDEV uverbs: error %d' % err)
    attrs, off = {}, 16
    while off + 4 <= length:
        n, t = struct.unpack_from('=HH', data, off)
        if n < 4:
            break
        attrs[t & 0x3fff] = data[off + 4:off + n]
        off += (n + 3) & ~3
    return attrs


def t_driver_id(da, db=None):
    """MRC-VRB-002: sysfs metaroce_abi_version is the header's
    METAROCE_UVERBS_ABI_VERSION, and rdma netlink reports the uverbs
    chardev with that ABI and driver_id RDMA_DRIVER_UNKNOWN (0)."""
    del db
    want = abi_version()
    with open('/sys/class/infiniband/%s/metaroce_abi_version' % da) as f:
        got = f.read().strip()
    check(got == str(want), 'sysfs metaroce_abi_version %r, header %d' %
          (got, want))
    index = None
    for line in os.popen('rdma dev show'):
        w = line.split()
        if len(w) > 1 and w[1] == da + ':':
            index = int(w[0].rstrip(':'))
    check(index is not None, 'rdma dev show does not list %s' % da)
    attrs = uverbs_chardev_attrs(index)
    check(RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID in attrs,
          'no RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID: %s' % sorted(attrs))
    did = int.from_bytes(attrs[RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID], 'little')
    check(did == 0, 'driver_id %d, want RDMA_DRIVER_UNKNOWN (0)' % did)
    abi = int.from_bytes(attrs.get(RDMA_NLDEV_ATTR_CHARDEV_ABI, b''),
                         'little')
    check(abi == want, 'uverbs ABI %d, header %d' % (abi, want))
    print('%s: index %d, driver_id %d, uverbs ABI %d' % (da, index, did, abi))


def fails(fn):
    try:
        obj = fn()
    except Exception as ex:  # noqa: BLE001
        return str(ex)
    obj.close()
    return None


# Every device capability flag the driver may advertise, each for a feature
# it offers (spec 15.3): anything else is a feature it does not offer.
OFFERED = (e.IBV_DEVICE_CURR_QP_STATE_MOD | e.IBV_DEVICE_SYS_IMAGE_GUID |
           e.IBV_DEVICE_RC_RNR_NAK_GEN | e.IBV_DEVICE_MEM_MGT_EXTENSIONS |
           e.IBV_DEVICE_MEM_WINDOW | e.IBV_DEVICE_MEM_WINDOW_TYPE_2B)


def t_features(da, db=None):
    """MRC-VRB-008 and MRC-VRB-015: the device advertises no capability
    flag beyond OFFERED, and what it advertises works (SRQ, memory windows
    of type 1 and 2B, atomics); what it does not offer is neither
    advertised nor accepted: UC QPs and XRC (not in v1), UD multicast,
    ODP, SRQ resize."""
    del db
    h = Host(da)
    a = h.ctx.query_device()
    extra = a.device_cap_flags & ~OFFERED
    check(not extra, 'device_cap_flags %#x advertise %#x' %
          (a.device_cap_flags, extra))
    check(not a.device_cap_flags & e.IBV_DEVICE_XRC, 'XRC advertised')
    check(a.max_mcast_grp == 0 and a.max_mcast_qp_attach == 0,
          'multicast advertised: %d groups' % a.max_mcast_grp)
    check(a.atomic_caps == e.IBV_ATOMIC_HCA, 'atomic_cap %d' % a.atomic_caps)
    x = h.ctx.query_device_ex()
    odp = x.odp_caps.general_caps
    # SHOULD features: SRQ and memory windows are offered and work.
    check(a.max_srq > 0, 'max_srq 0')
    srq = SRQ(h.pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1)))
    srq.close()
    check(a.max_mw > 0, 'max_mw 0')
    for t in (e.IBV_MW_TYPE_1, e.IBV_MW_TYPE_2):
        MW(h.pd, t).close()
    # Not in v1: UC QPs and XRC are refused.
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    why = fails(lambda: QP(h.pd, QPInitAttr(qp_type=e.IBV_QPT_UC,
                                            scq=h.scq, rcq=h.rcq, cap=cap)))
    check(why, 'a UC QP was created')
    print('UC QP refused: %s' % why)
    why = fails(lambda: XRCD(h.ctx, XRCDInitAttr(
        e.IBV_XRCD_INIT_ATTR_FD | e.IBV_XRCD_INIT_ATTR_OFLAGS,
        os.O_CREAT, -1)))
    check(why, 'an XRC domain was opened')
    print('XRCD refused: %s' % why)
    # ODP is not offered, so not advertised, and an ODP MR is refused.
    why = fails(lambda: MR(h.pd, 4096, e.IBV_ACCESS_LOCAL_WRITE |
                           e.IBV_ACCESS_ON_DEMAND))
    check(odp == 0 and why, 'ODP: general_caps %#x, ODP MR %s' %
          (odp, why or 'registered'))
    print('device_cap_flags %#x, odp caps %#x; ODP MR refused: %s' %
          (a.device_cap_flags, odp, why))


if __name__ == '__main__':
    main({'driver_id': t_driver_id, 'features': t_features})
