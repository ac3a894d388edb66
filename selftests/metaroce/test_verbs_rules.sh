#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Verbs-mapping rules of spec sections 14 to 16 through the userspace
# provider (pyverbs/verbs_rules.py, progs/mcast_refused.c): device and port
# attributes and the node GUID (MRC-VRB-001, 004, 005, 006), inline data
# taken at post time and send completions in posting order (MRC-VRB-014,
# ORD-007), local SGE checks before any packet (MRC-ERR-012), no READ with
# max_rd_atomic 0 (MRC-PLC-020), a receive with a dead L_Key completing
# with LOC_PROT_ERR and its SEND with REM_OP_ERR (MRC-PLC-015), SE and
# solicited-only notification (MRC-PLC-017), R_Key key bits random per
# registration (MRC-SEC-002), multicast refused with EOPNOTSUPP
# (MRC-DGM-012), queue memory per user context capped at
# ctx_queue_mem_mb with ENOMEM (issue 18 finding 8, MRC-SEC-007).
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
tap_plan 9
setup_two_hosts
add_devices va_r vb_r

py() { timeout 120 /usr/bin/python3 "$here/pyverbs/verbs_rules.py" "$@" va_r vb_r; }

ok_if "device and port attributes, node GUID from the MAC (MRC-VRB-001/004/005)" \
	ip netns exec $NS_A timeout 120 /usr/bin/python3 \
	"$here/pyverbs/verbs_rules.py" attrs va_r vb_r
ok_if "inline WRITE data taken at post time (MRC-VRB-014)" py inline
ok_if "bad L_Key or SGE bounds: local error, QP in ERROR, no packet (MRC-ERR-012)" py sge
ok_if "READ with max_rd_atomic 0: IB_WC_LOC_QP_OP_ERR, no packet (MRC-PLC-020)" py rd_atomic0
ok_if "SE: the receive completion is solicited (MRC-PLC-017)" py solicited
ok_if "R_Key key bits random and new per registration (MRC-SEC-002)" py rkeys
ok_if "SEND into a receive with a dead L_Key: LOC_PROT_ERR there, REM_OP_ERR at the sender (MRC-PLC-015)" py recv_lkey
mcast() { build_prog mcast_refused && /tmp/mcast_refused va_r; }
ok_if "ibv_attach_mcast / ibv_detach_mcast: EOPNOTSUPP (MRC-DGM-012)" mcast

# 64 MiB: two QPs of max_qp_wr WRs fit, not a third.
qmem() { $MR set ctx_queue_mem_mb 64 && py qmem; }
ok_if "F08: queue memory per user context capped (ctx_queue_mem_mb): ENOMEM beyond it, given back on destroy" qmem
$MR set ctx_queue_mem_mb 1024

rdma link delete va_r
rdma link delete vb_r
modprobe -r metaroce
tap_done
