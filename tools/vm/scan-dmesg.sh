#!/bin/bash
# Exit 1 (printing the offending lines) if a guest kernel log contains a
# WARN/BUG/Oops/KASAN/UBSAN/kmemleak/lockdep/hung-task/refcount report.
# Usage: scan-dmesg.sh DMESG_FILE
set -u
# The debug kernel's reports: KASAN, UBSAN, kmemleak (its scan's summary
# line and /sys/kernel/debug/kmemleak's records; not its start-up lines),
# lockdep and might_sleep (all also begin with WARNING: or BUG:).
pattern='WARNING:|BUG:|BUG |Oops|KASAN|UBSAN|kmemleak: [0-9]+ new suspected|unreferenced object|possible recursive locking|inconsistent lock state|circular locking|suspicious RCU usage|sleeping function called from invalid context|blocked for more than|hung_task|general protection|Call Trace|refcount_t:|list_add corruption|list_del corruption|unregister_netdevice: waiting|Kernel panic|stack-protector|double free|use-after-free|slab-out-of-bounds'
# "traps: PROG[PID] general protection fault ..." is a user-space program
# crashing (the kernel only reports it); a kernel fault never has that
# prefix.  The test that ran the program judges its result.
if grep -E -n "$pattern" "$1" | grep -v -E '^[0-9]+:\[ *[0-9.]+\] traps: [^ ]+\[[0-9]+\] ' >&2; then
	exit 1
fi
exit 0
