#!/bin/bash
# vm: -t 900
# RC under the other faults of a bad fabric, one at a time in both
# directions: reordering, duplication, corruption (the CRC32C trailer
# catches it: a drop), delay with jitter.  Every message arrives exactly
# once, intact and in order (the kernel verbs tests check every byte and
# every completion), and no QP sees an error.
. "$(dirname "$0")/lib.sh"

tap_plan 9
setup_two_hosts
add_devices la lb

cnt() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }
set_fault() {
	ip netns exec $NS_A tc qdisc replace dev va root netem "$@"
	ip netns exec $NS_B tc qdisc replace dev vb root netem "$@"
}

set_fault delay 1ms reorder 25% 50%
ok_if "reordering 25%: 200 mixed WRs, every byte and completion" \
	kverbs rc_many iters=200
ok_if "reordering 25%: 1 MiB SEND, WRITE, READ and atomics verified" \
	kverbs rc_send,rc_write,rc_read,rc_atomic size=1048576
diag "path_reorder la/lb: $(cnt la path_reorder)/$(cnt lb path_reorder)"

# A copy that arrives after its original was acknowledged is LATE (below
# the cumulative PSN), one inside the SACK window a path duplicate.
dups() {
	echo $(( $(cnt la path_duplicates) + $(cnt lb path_duplicates) +
		 $(cnt la late_arrivals) + $(cnt lb late_arrivals) ))
}
set_fault duplicate 10%
dup0=$(dups)
ok_if "duplication 10%: 200 mixed WRs, every byte and completion" \
	kverbs rc_many iters=200
ok_if "duplication 10%: atomics executed exactly once" kverbs rc_atomic
ok_if "duplicated packets were recognised as duplicates" \
	test "$(dups)" -gt "$dup0"

# Corrupted packets die at the UDP checksum or at our CRC32C trailer.
csum() {
	local n=0 h
	for h in $NS_A $NS_B; do
		n=$((n + $(ip netns exec $h awk '/^Udp: [0-9]/ { print $4 }' /proc/net/snmp)))
	done
	echo $((n + $(cnt la drop_bad_crc) + $(cnt lb drop_bad_crc)))
}
set_fault corrupt 3%
crc0=$(csum)
ok_if "corruption 3%: 200 mixed WRs, every byte and completion" \
	kverbs rc_many iters=200
ok_if "corrupted packets were dropped (UDP checksum or CRC32C)" \
	test "$(csum)" -gt "$crc0"
diag "drop_bad_crc la/lb: $(cnt la drop_bad_crc)/$(cnt lb drop_bad_crc)"

set_fault delay 2ms 1ms distribution normal
ok_if "delay 2 ms +- 1 ms: 200 mixed WRs, every byte and completion" \
	kverbs rc_many iters=200
ok_if "delay with jitter: 1 MiB SEND, WRITE, READ verified" \
	kverbs rc_send,rc_write,rc_read size=1048576

ip netns exec $NS_A tc qdisc del dev va root
ip netns exec $NS_B tc qdisc del dev vb root
ip netns exec $NS_A rdma link delete la
ip netns exec $NS_B rdma link delete lb
tap_done
