#!/bin/bash
# RC through the userspace provider: ibv_rc_pingpong between the two
# namespaces with buffer validation (-c), several sizes, and with
# completion events (-e).
. "$(dirname "$0")/lib.sh"

tap_plan 5
setup_two_hosts
add_devices ra rb

# pingpong ARGS...: server in B, client in A; both must finish.
pingpong() { pingpong_pair ibv_rc_pingpong ra rb "$@"; }

ok_if "ibv_rc_pingpong -c (4096 bytes, 200 iterations, validated)" pingpong -c -n 200
ok_if "ibv_rc_pingpong -c -s 1" pingpong -c -s 1 -n 100
ok_if "ibv_rc_pingpong -c -s 65536 (64 segments per message)" pingpong -c -s 65536 -n 50
ok_if "ibv_rc_pingpong -c -s 1048576" pingpong -c -s 1048576 -n 5
ok_if "ibv_rc_pingpong -e (completion events)" pingpong -e -c -n 100

rdma link delete ra
rdma link delete rb
modprobe -r metaroce
tap_done
