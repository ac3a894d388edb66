#!/bin/bash
# sample.sh FILE INTERVAL PATH...: until killed, every INTERVAL seconds
# append "EPOCH v1 v2 ..." to FILE with the values of the counter files
# PATH... (sysfs counters; a file that cannot be read gives 0).  Reads
# without forking, so that sampling barely loads the guest.  Run under
# "ip netns exec NS" to read another namespace's /sys/class/net.
f=$1 dt=$2
shift 2
while :; do
	line=$EPOCHREALTIME
	for p in "$@"; do
		v=0
		read -r v 2>/dev/null < "$p" || v=0
		line+=" $v"
	done
	printf '%s\n' "$line" >> "$f"
	sleep "$dt"
done
