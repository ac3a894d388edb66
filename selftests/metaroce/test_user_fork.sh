#!/bin/bash
# Fork safety: a process with RC QPs and registered buffers forks; while
# the child lives, RDMA WRITEs in both directions carry what the parent
# wrote and land where the parent reads (every byte checked), and the child
# sees none of the provider's rings.  Without fork protection (the 6.12
# kernel copies pinned pages for the child), with RDMAV_FORK_SAFE=1 and
# with ibv_fork_init().
. "$(dirname "$0")/lib.sh"

tap_plan 6
setup_two_hosts
add_devices mra0 mrb0

PROG=/tmp/rc_fork
ok_if "build rc_fork" build_prog rc_fork

run() {
	local out
	out=$(timeout 120 "$@" 2>&1)
	echo "$out"
	grep -q '^ok$' <<<"$out"
}
ok_if "fork without protection" run $PROG mra0 mrb0
ok_if "fork with RDMAV_FORK_SAFE=1" run env RDMAV_FORK_SAFE=1 $PROG mra0 mrb0
ok_if "fork after ibv_fork_init()" run $PROG -i mra0 mrb0

# The rings are MADV_DONTFORK: a child's memory map has none of them.
ok_if "a forked child maps no rings" bash -c \
	"/usr/bin/python3 - mra0 <<'PY'
import os, sys
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
from pyverbs.qp import QP, QPCap, QPInitAttr
import pyverbs.enums as e
ctx = Context(name=sys.argv[1])
pd = PD(ctx)
cq = CQ(ctx, 16)
qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq, cap=QPCap()))
def rings(pid):
    with open('/proc/%s/maps' % pid) as f:
        return sum('infiniband/uverbs' in l for l in f)
mine = rings('self')
assert mine >= 3, 'parent maps %d rings' % mine
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(w, b'%d' % rings('self'))
    os._exit(0)
os.waitpid(pid, 0)
child = int(os.read(r, 16))
print('parent %d ring mappings, child %d' % (mine, child))
assert child == 0
PY"

ok_if "no user objects left" bash -c \
	'! rdma res show qp | grep -v "\[ib_core\]" | grep -q .'

rdma link delete mra0
rdma link delete mrb0
modprobe -r metaroce
tap_done
