#!/bin/bash
# The port follows its netdev: GIDs from addresses, state from carrier (with
# async events), active MTU from the netdev MTU.
. "$(dirname "$0")/lib.sh"

tap_plan 16
setup_two_hosts
ip netns exec $NS_A rdma link add mra0 type metaroce netdev va

has_gid() { ibdev_gids mra0 | grep -qi "$1"; }
lacks_gid() { ! has_gid "$1"; }
port_is() { [ "$(port_state mra0)" = "$1" ]; }
async_saw() { grep -q "IBV_EVENT_PORT_ERR" /tmp/async.txt && grep -q "IBV_EVENT_PORT_ACTIVE" /tmp/async.txt; }
mtu_is() { ip netns exec $NS_A ibv_devinfo -d mra0 | grep -q "active_mtu:.*$1"; }

ok_if "IPv4 address appears as a mapped GID" \
	wait_for 5 has_gid "0000:0000:0000:0000:0000:ffff:0a4d:0001"
ok_if "IPv6 address appears as a GID" \
	wait_for 5 has_gid "fd77:0000:0000:0000:0000:0000:0000:0001"
ip -n $NS_A addr add 10.78.1.5/24 dev va
ok_if "an added address adds a GID" \
	wait_for 5 has_gid "0000:0000:0000:0000:0000:ffff:0a4e:0105"
ip -n $NS_A addr del 10.78.1.5/24 dev va
ok_if "a deleted address removes its GID" \
	wait_for 5 lacks_gid "0000:0000:0000:0000:0000:ffff:0a4e:0105"

ok_if "port is ACTIVE with carrier" wait_for 5 port_is ACTIVE

# Async events as a verbs consumer sees them.
ip netns exec $NS_A stdbuf -oL ibv_asyncwatch -d mra0 > /tmp/async.txt 2>&1 &
watch=$!
# Listening once it has printed its event fd (a loaded host can be slow).
wait_for 20 grep -q "async event FD" /tmp/async.txt
ip -n $NS_B link set vb down
ok_if "peer down (carrier lost): port DOWN" \
	wait_for 5 port_is DOWN
ip -n $NS_B link set vb up
ok_if "carrier back: port ACTIVE" \
	wait_for 5 port_is ACTIVE
ok_if "MRC-VRB-007: ibv_asyncwatch saw PORT_ERR then PORT_ACTIVE" wait_for 5 async_saw
ip -n $NS_A addr add 10.78.2.5/24 dev va
ok_if "MRC-VRB-007: an added address raised IBV_EVENT_GID_CHANGE" \
	wait_for 5 grep -q IBV_EVENT_GID_CHANGE /tmp/async.txt
ip -n $NS_A addr del 10.78.2.5/24 dev va
kill $watch 2>/dev/null
wait $watch 2>/dev/null
diag "$(cat /tmp/async.txt)"

ok_if "MTU 1500: active_mtu 1024" mtu_is 1024
ip -n $NS_A link set va mtu 9000
ok_if "MTU 9000: active_mtu 4096" wait_for 5 mtu_is 4096
ip -n $NS_A link set va mtu 4220
ok_if "MTU 4220 (4096 + 124 overhead): active_mtu 4096" wait_for 5 mtu_is 4096
ip -n $NS_A link set va mtu 4219
ok_if "MTU 4219: active_mtu 2048" wait_for 5 mtu_is 2048
ip -n $NS_A link set va mtu 2200
ok_if "MTU 2200: active_mtu 2048" wait_for 5 mtu_is 2048
ip -n $NS_A link set va mtu 379
ok_if "MTU 379 (below 256 + 124): port DOWN" wait_for 5 port_is DOWN
ip -n $NS_A link set va mtu 1500
ok_if "MTU back to 1500: port ACTIVE, active_mtu 1024" \
	wait_for 5 bash -c "ip netns exec $NS_A ibv_devinfo -d mra0 | grep -q 'active_mtu:.*1024' &&
			    ip netns exec $NS_A ibv_devinfo -d mra0 | grep -q PORT_ACTIVE"

rdma link delete mra0
modprobe -r metaroce
tap_done
