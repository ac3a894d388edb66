#!/bin/bash
# vm: -t 900
# Spoofing (issue 8): while validated RC traffic runs between ra and rb,
# host B sends packets that copy the live connection (from a capture) but
# come from a wrong source address or port with a wrong Token or SCID,
# carry PSNs or PLWs outside the acceptance window, acknowledge PSNs never
# sent, or replay old packets.  Each kind must be dropped and counted, and
# the live traffic must keep completing with correct data.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"

here=$(cd "$(dirname "$0")" && pwd)
COMP=$here/../compliance
CNT=/sys/class/infiniband/ra/ports/1/hw_counters
W=/tmp/mroce-spoof
mkdir -p $W

tap_plan 8
setup_two_hosts
add_devices ra rb

c() { cat $CNT/$1; }

live_start 100

# spoof KIND COUNTER...: send 200 packets of KIND from a fresh capture of
# the live connection; the sum of COUNTERs must grow by at least 200 and
# the live traffic must complete another pingpong.
spoof() {
	local kind=$1 before=0 after=0 x runs tcpd
	shift
	ip netns exec $NS_B tcpdump -i vb -s 0 -U -w $W/live.pcap -c 200 \
		udp port 4793 2>/dev/null &
	tcpd=$!
	wait_for 60 bash -c "! kill -0 $tcpd"
	for x in "$@"; do before=$((before + $(c $x))); done
	runs=$(live_runs)
	ip netns exec $NS_B /usr/bin/python3 $COMP/spoof.py $W/live.pcap $IP_A $IP_B \
		$kind 200 || return 1
	sleep 1
	for x in "$@"; do after=$((after + $(c $x))); done
	echo "$* +$((after - before))"
	[ $((after - before)) -ge 200 ] || return 1
	live_more "$runs" || { echo "live traffic stalled"; return 1; }
}

ok_if "wrong Token from a wrong source address: drop_bad_token" spoof token drop_bad_token
ok_if "wrong SCID: drop_bad_token" spoof scid drop_bad_token
ok_if "PSN/PLW outside the acceptance window: drop_out_of_window" spoof psn drop_out_of_window
ok_if "ACK for PSNs never sent: drop_out_of_window" spoof ack drop_out_of_window
ok_if "replayed packets from other ports: duplicate, late, out of window or stale" \
	spoof replay path_duplicates late_arrivals drop_out_of_window acks_rcvd \
	drop_bad_header duplicates
ok_if "live traffic kept completing ($(live_runs) pingpongs)" [ "$(live_runs)" -ge 5 ]
ok_if "every live pingpong passed its data check" bash -c "! grep -q FAIL $W/live.log"
# Last, as it may break the connection: a CONNECT from the peer's address
# with another SCID is another connection (spec 6.3.2, MRC-CONN-015).
spoof_connect() {
	local runs
	runs=$(live_runs)
	ip netns exec $NS_B tcpdump -i vb -s 0 -U -w $W/live.pcap -c 20 \
		udp port 4793 2>/dev/null
	ip netns exec $NS_B /usr/bin/python3 $COMP/spoof.py $W/live.pcap $IP_A $IP_B \
		connect 3 || return 1
	live_more $((runs + 1)) ||
		{ echo "live traffic stalled after a spoofed CONNECT"; tail -n 3 $W/live.log; return 1; }
	! grep -q FAIL $W/live.log
}
ok_if "CONNECT from the peer's address with another SCID leaves the connection alone" \
	spoof_connect
live_stop

rdma link delete ra
rdma link delete rb
modprobe -r metaroce
tap_done
