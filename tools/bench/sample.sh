#!/bin/bash
# sample.sh FILE INTERVAL PATH...: until killed, every INTERVAL seconds
# append "EPOCH v1 v2 ..." to FILE with the values of the counter files
# PATH... (sysfs counters; a file that cannot be read gives 0).  Runs no
# other program in its loop (not even sleep: under TCG with busy vCPUs an
# exec over 9p takes a second or more): it waits with read -t on a FIFO
# nobody writes.  Run under "ip netns exec NS" to read another namespace's
# /sys/class/net.
f=$1 dt=$2
shift 2
fifo=$(mktemp -u /tmp/sample.XXXXXX)
mkfifo "$fifo" || exit 1
exec 3<> "$fifo"
rm -f "$fifo"
while :; do
	line=$EPOCHREALTIME
	for p in "$@"; do
		v=0
		read -r v 2>/dev/null < "$p" || v=0
		line+=" $v"
	done
	printf '%s\n' "$line" >> "$f"
	read -r -t "$dt" -u 3 _
done
