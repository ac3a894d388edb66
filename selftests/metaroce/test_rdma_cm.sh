#!/bin/bash
# vm: -t 1200
# rdma_cm between the two namespaces with the unmodified librdmacm tools:
# rping -V (RC SEND + RDMA READ/WRITE, every ping validated), rstream -T v
# (rsockets over RC, every byte verified; blocking, non-blocking, async),
# ucmatose (RC SEND/RECV over several connections), udaddy (UD over SIDR),
# rdma_server/rdma_client (rdma_create_ep).  IPv4 and IPv6 addresses.
# Both sides must exit 0 and print their success lines; the devices must
# have carried the traffic; nothing is left behind.
. "$(dirname "$0")/lib.sh"

tap_plan 14
setup_two_hosts
modprobe rdma_ucm
add_devices ra rb
SRV=/tmp/cm-server.log
CLI=/tmp/cm-client.log

cnt() { cat /sys/class/infiniband/"$1"/ports/1/hw_counters/"$2"; }
rx_total() { echo $(($(cnt rb rx_data_packets) + $(cnt rb ud_rx_packets))); }
# listening TOOL: TOOL's own listener is there (not a previous run's).
listening() {
	rdma res show cm_id | grep 'state LISTEN' | grep -q "comm $1 "
}

# cm_pair "SERVER CMD" "CLIENT CMD" SRV_REGEX CLI_REGEX: server in B,
# client in A; both exit 0 and their logs match the regexes.
cm_pair() {
	local rc=0 pid before
	CLI_RC=0
	before=$(rx_total)
	# shellcheck disable=SC2086
	ip netns exec $NS_B timeout 120 $1 > $SRV 2>&1 &
	pid=$!
	wait_for 20 listening "${1%% *}" || rc=1
	if ((rc == 0)); then
		# shellcheck disable=SC2086
		ip netns exec $NS_A timeout 120 $2 > $CLI 2>&1 || CLI_RC=$?
		((CLI_RC == 0)) || rc=1
	fi
	wait $pid || rc=1
	grep -Eq "$3" $SRV || rc=1
	grep -Eq "$4" $CLI || rc=1
	if (($(rx_total) == before)); then
		echo "no traffic received on rb"
		rc=1
	fi
	if ((rc)); then
		echo "client:"; cat $CLI; echo "server:"; cat $SRV
		return 1
	fi
	return 0
}

# rping: the server exits after one connection (no -P); -V makes both
# sides compare every ping with the pattern it must carry.
rping_pair() {
	local addr=$1
	shift
	cm_pair "rping -s -a $addr -V $*" "rping -c -a $addr -V -v $*" \
		"DISCONNECT" "ping data: rdma-ping-"
}
ok_if "rping -V -C 20 -S 100 (IPv4)" rping_pair $IP_B -C 20 -S 100
ok_if "rping -V -C 10 -S 8192 (multi-packet READ/WRITE)" \
	rping_pair $IP_B -C 10 -S 8192
ok_if "rping -V -C 10 -S 1000 (IPv6)" rping_pair $IP6_B -C 10 -S 1000
ok_if "rping count: client saw every ping" bash -c \
	"[ \$(grep -c 'ping data: rdma-ping-' $CLI) = 10 ]"

rstream_pair() {
	cm_pair "rstream -b $IP_B $*" "rstream -s $IP_B $*" \
		"^custom" "^custom"
}
ok_if "rstream -T v (blocking, 10000-byte transfers, verified)" \
	rstream_pair -S 10000 -C 50 -T v
ok_if "rstream -T v -T n (non-blocking)" rstream_pair -S 1000 -C 100 -T v -T n
# rstream's async mode has a race of its own: its do_poll() returns
# revents & (POLLERR | POLLHUP), so POLLIN | POLLHUP fails the transfer.
# When the server's last data and its DISCONNECT message are both in the
# client's CQ before the client polls again (a stalled vCPU is enough),
# the client exits 16 (POLLHUP) without a word after the server
# succeeded; seen under host load with no NAK or error counted on either
# device.  That signature, and only it, gets four more tries (three in a
# row lost it with six VMs on the host's two CPUs); any other failure, or
# the race five times in a row, fails.
rstream_async() {
	local i
	for i in 1 2 3 4 5; do
		rstream_pair "$@" && return 0
		((CLI_RC == 16)) && grep -q '^custom' $SRV || return 1
		echo "try $i: the client saw the hangup before its last data"
	done
	return 1
}
ok_if "rstream -T v -T a (async)" rstream_async -S 3000 -C 50 -T v -T a
ok_if "rstream -T v (IPv6)" cm_pair "rstream -b $IP6_B -S 4096 -C 50 -T v" \
	"rstream -s $IP6_B -S 4096 -C 50 -T v" "^custom" "^custom"

ok_if "ucmatose (4 connections, 20 messages of 4000 bytes)" cm_pair \
	"ucmatose -b $IP_B -c 4 -C 20 -S 4000" \
	"ucmatose -s $IP_B -c 4 -C 20 -S 4000" \
	"return status 0" "return status 0"
ok_if "ucmatose (IPv6)" cm_pair "ucmatose -b $IP6_B -C 10" \
	"ucmatose -s $IP6_B -C 10" "return status 0" "return status 0"
ok_if "udaddy (UD, 4 endpoints, 20 messages of 500 bytes)" cm_pair \
	"udaddy -b $IP_B -c 4 -C 20 -S 500" "udaddy -s $IP_B -c 4 -C 20 -S 500" \
	"return status 0" "return status 0"
ok_if "udaddy (IPv6)" cm_pair "udaddy -b $IP6_B" "udaddy -s $IP6_B" \
	"return status 0" "return status 0"
ok_if "rdma_server / rdma_client (rdma_create_ep)" cm_pair \
	"rdma_server -s $IP_B" "rdma_client -s $IP_B" \
	"rdma_server: end 0" "rdma_client: end 0"

ok_if "no QPs or CM IDs left" wait_for 20 user_objects_gone

rdma link delete ra
rdma link delete rb
modprobe -r metaroce
tap_done
