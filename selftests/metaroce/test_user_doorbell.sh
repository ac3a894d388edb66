#!/bin/bash
# The send doorbell is rung only when the kernel's send worker went idle:
# a sustained UD stream of one-WR ibv_post_send() calls needs far fewer
# POST_SEND commands than work requests, by the driver's "doorbells"
# counter; strace (write() on the command fd) checks that counter.
. "$(dirname "$0")/lib.sh"

N=20000
tap_plan 5
setup_two_hosts
add_devices mra0 mrb0

STREAM=/tmp/ud_stream
ok_if "build ud_stream" build_prog ud_stream

doorbells() { cat /sys/class/infiniband/mra0/ports/1/hw_counters/doorbells; }

before=$(doorbells)
ok_if "a stream of $N sends completes" timeout 240 $STREAM -n $N mra0 mrb0
db=$(($(doorbells) - before))
diag "doorbells (driver counter): $db for $N work requests"
# How often the worker goes idle depends on the host: alone, under a
# quarter of the WRs rang; beside another VM (make check), 9121 of 20000
# once.  One per WR would be no batching at all.
ok_if "doorbells < 3/4 of the WRs (driver counter: $db)" test "$db" -lt $((N * 3 / 4))

# strace slows every write() it stops at, so the poster lags the worker
# and rings more often than above: this run checks that the counter tells
# the truth (each doorbell is one write(), and nothing else writes per
# WR), not the coalescing, which the run above measured.  It bounds the
# doorbells by nothing: beside another VM, 18804 of 20000 WRs rang under
# strace once.  The counter is not one per WR: the run above saw fewer.
before=$(doorbells)
ok_if "the stream again under strace" timeout 240 strace -f -qq -c \
	-e trace=write -o /tmp/strace.txt $STREAM -n $N mra0 mrb0
db=$(($(doorbells) - before))
writes=$(awk '$NF == "write" { print $4 }' /tmp/strace.txt)
diag "write() system calls (strace): ${writes:-none}, doorbells $db, for $N work requests"
ok_if "write() calls = doorbells + setup commands (strace: ${writes:-0}, doorbells $db)" \
	test "${writes:-0}" -ge "$db" -a "${writes:-0}" -le $((db + 64))

rdma link delete mra0
rdma link delete mrb0
modprobe -r metaroce
tap_done
