#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# vm: -t 900
#
# A kernel ULP end to end: NFS over RDMA over MetaRoCE, unmodified (Debian's
# nfsd with svcrdma, the nfs client with xprtrdma, rpcrdma.ko).  Both are
# network-namespace aware, so the two hosts are the two namespaces of
# setup_two_hosts, a MetaRoCE device in each, and every byte crosses the veth
# pair between them as MetaRoCE packets.  Host B (mrb) runs nfsd, NFSv4.1 and
# 4.2 only, listening on rdma port 20049 alone, and exports a tmpfs (the VM's
# root is read-only); rpc.mountd answers the kernel's export upcalls there.
# Host A (mra) mounts it with proto=rdma: the NFS client and its xprtrdma
# transport take the mounting task's namespace (nsenter --net, so the mount
# itself is visible to the whole VM).
#
# Each data point checks the bytes on the other side: what the client wrote
# is compared on the server's tmpfs, what the server wrote is read by the
# client with a cold cache.  Direct I/O (O_DIRECT, 1 MiB) makes the server
# pull the writes with RDMA READ (read chunks) and push the reads with RDMA
# WRITE (write chunks); the client's transport statistics must show those
# bytes, and the MetaRoCE counters must have carried at least the payload.
# Then unmount, delete the devices while nfsd still listens, stop nfsd and
# unload everything.
. "$(dirname "$0")/lib.sh"

EXP=/srv/mroce-nfs
MNT=/mnt/mroce-nfs
PORT=20049
NFSD=/proc/fs/nfsd
MIB=4
DIO_MIB=8
SMALL=100
W=/tmp/nfs-work

nsa() { nsenter --net=/run/netns/$NS_A "$@"; }
nsb() { nsenter --net=/run/netns/$NS_B "$@"; }
cnt() { cat /sys/class/infiniband/"$1"/ports/1/hw_counters/"$2"; }

# xprt_stat N: field N of the mount's "xprt: rdma" line in mountstats
# (5: connects, 13: read chunk segments the client registered, 17: bytes
# the server pushed into write and reply chunks; xprt_rdma_print_stats()).
xprt_stat() {
	awk -v m="$MNT" -v f="$1" '
		$1 == "device" { here = ($5 == m) }
		here && $1 == "xprt:" && $2 == "rdma" { print $f; exit }
	' /proc/self/mountstats
}

# svc_stat read|write: RDMA READs / WRITEs chunks svcrdma has posted.
svc_stat() {
	cat /proc/sys/sunrpc/svc_rdma/rdma_stat_"$1"
}

# mount_opt NAME: the value of a mount option of MNT.
mount_opt() {
	awk -v m="$MNT" '$2 == m { print $4 }' /proc/mounts | tr , '\n' |
		sed -n "s/^$1=//p"
}

# at_least WHAT HAVE WANT
at_least() {
	(($2 >= $3)) && return 0
	echo "$1: $2, expected at least $3"
	return 1
}

same_sum() {
	local a b
	a=$(sha256sum < "$1") || return 1
	b=$(sha256sum < "$2") || return 1
	[ "$a" = "$b" ] && return 0
	echo "checksum of $1 differs from $2"
	return 1
}

server_start() {
	modprobe nfsd && modprobe rpcrdma || return 1
	mkdir -p $EXP $MNT $W && mount -t tmpfs -o size=256m tmpfs $EXP || return 1
	# The nfsd filesystem of host B: its files set up B's nfsd.
	nsb mount -t nfsd nfsd $NFSD || return 1
	# The shortest grace period: without client tracking (nfsdcld) it
	# cannot be ended early, and OPENs wait for its end.
	echo "-3 +4 -4.0 +4.1 +4.2" > $NFSD/versions &&
		echo 10 > $NFSD/nfsv4leasetime &&
		echo 10 > $NFSD/nfsv4gracetime || return 1
	echo "$EXP $IP_A/32(rw,sync,fsid=0,no_root_squash,no_subtree_check,insecure)" \
		> /etc/exports
	nsb exportfs -ra && nsb rpc.mountd -N 2 -N 3 || return 1
	echo "rdma $PORT" > $NFSD/portlist && echo 4 > $NFSD/threads || return 1
	diag "portlist: $(tr '\n' ' ' < $NFSD/portlist)versions: $(cat $NFSD/versions)"
	grep -qx "rdma $PORT" $NFSD/portlist && ! grep -qv "^rdma " $NFSD/portlist &&
		rdma res show cm_id | grep "^link rb/" | grep -q "LISTEN.*:$PORT"
}

# mount_rdma VERS
mount_rdma() {
	local opts
	nsa timeout 120 mount -t nfs4 -o vers="$1",proto=rdma,port=$PORT \
		$IP_B:/ $MNT || return 1
	opts=$(awk -v m="$MNT" '$2 == m { print $3, $4 }' /proc/mounts)
	diag "$opts"
	[[ $opts == nfs4\ * ]] && [[ ,$opts, == *,vers=$1,* ]] &&
		[[ ,$opts, == *,proto=rdma,* ]] && [[ ,$opts, == *,port=$PORT,* ]] || return 1
	# One RC QP each way, on our devices.
	rdma res show qp | grep "^link ra/" | grep -q "type RC" &&
		rdma res show qp | grep "^link rb/" | grep -q "type RC"
}

# Unmount; the RPC transport must have connected once: on a lossless link
# a reconnect means an RPC got no reply for timeo (60 s) or the QP failed.
umount_rdma() {
	local n
	n=$(xprt_stat 5)
	umount $MNT || return 1
	! grep -q " $MNT " /proc/mounts || return 1
	[ "$n" = 1 ] && return 0
	echo "the rdma transport connected $n times"
	return 1
}

no_rc_qp() {
	! rdma res show qp | grep -q "type RC"
}

drop_caches() {
	sync && echo 3 > /proc/sys/vm/drop_caches
}

# The client writes MIB MiB of random data (buffered); the server's file
# must hold exactly those bytes, and they crossed mra -> mrb.
client_write() {
	local rx0
	head -c $((MIB << 20)) /dev/urandom > $W/cw || return 1
	rx0=$(cnt rb rx_bytes)
	cp $W/cw $MNT/cw && sync || return 1
	same_sum $W/cw $EXP/cw &&
		at_least "rb rx_bytes" $(($(cnt rb rx_bytes) - rx0)) $((MIB << 20))
}

# The server writes a file into its export; the client reads it cold.
server_write_client_read() {
	local rx0
	head -c $((MIB << 20)) /dev/urandom > $EXP/sw || return 1
	drop_caches || return 1
	rx0=$(cnt ra rx_bytes)
	cat $MNT/sw > $W/sw || return 1
	same_sum $EXP/sw $W/sw &&
		at_least "ra rx_bytes" $(($(cnt ra rx_bytes) - rx0)) $((MIB << 20))
}

# SMALL files of 1 B .. 8 KiB written by the client (one process: forks
# are slow under TCG), checked on the server; a cold listing on the client
# (READDIR) sees every one and a sample reads back.
small_files() {
	local i n
	rm -rf $W/small && mkdir $W/small $MNT/small || return 1
	/usr/bin/python3 - $SMALL $W/small $MNT/small <<-'EOF' || return 1
	import os, random, sys
	for i in range(int(sys.argv[1])):
	    data = os.urandom(random.randint(1, 8192))
	    for d in sys.argv[2:]:
	        with open('%s/f%d' % (d, i), 'wb') as f:
	            f.write(data)
	EOF
	sync || return 1
	(cd $W/small && sha256sum f*) > $W/small.sum &&
		(cd $EXP/small && sha256sum f*) > $W/small.srv || return 1
	if ! cmp -s $W/small.sum $W/small.srv; then
		echo "server-side checksums differ:"
		diff $W/small.sum $W/small.srv | head -n 5
		return 1
	fi
	drop_caches || return 1
	n=$(find $MNT/small -type f | wc -l)
	[ "$n" = $SMALL ] || { echo "client lists $n files"; return 1; }
	for i in 0 7 $((SMALL - 1)); do
		cmp $W/small/f$i $MNT/small/f$i || return 1
	done
}

# DIO_MIB MiB with O_DIRECT: written by the client (the server pulls it by
# RDMA READ), checked on the server, read back with O_DIRECT (the server
# pushes it by RDMA WRITE) and compared.  Each wsize (rsize) of payload is
# at least one read (write) chunk, counted on both ends.
direct_io() {
	local rpcs c0 s0 p0 b0
	head -c $((DIO_MIB << 20)) /dev/urandom > $W/dio || return 1
	rpcs=$(((DIO_MIB << 20) / $(mount_opt wsize)))
	c0=$(xprt_stat 13) s0=$(svc_stat read) b0=$(cnt ra tx_bytes)
	dd if=$W/dio of=$MNT/dio bs=1M oflag=direct status=none || return 1
	same_sum $W/dio $EXP/dio || return 1
	at_least "read chunk segments" $(($(xprt_stat 13) - c0)) $rpcs &&
		at_least "svcrdma RDMA READs" $(($(svc_stat read) - s0)) $rpcs &&
		at_least "ra tx_bytes" $(($(cnt ra tx_bytes) - b0)) \
			$((DIO_MIB << 20)) || return 1
	rpcs=$(((DIO_MIB << 20) / $(mount_opt rsize)))
	p0=$(xprt_stat 17) s0=$(svc_stat write) b0=$(cnt ra rx_bytes)
	dd if=$MNT/dio of=$W/dio.back bs=1M iflag=direct status=none || return 1
	cmp $W/dio $W/dio.back || return 1
	at_least "bytes pushed by RDMA WRITE" $(($(xprt_stat 17) - p0)) \
		$((DIO_MIB << 20)) &&
		at_least "svcrdma RDMA WRITEs" $(($(svc_stat write) - s0)) $rpcs &&
		at_least "ra rx_bytes" $(($(cnt ra rx_bytes) - b0)) $((DIO_MIB << 20))
}

# NFSv4.1: a second mount, 1 MiB each way.
v41_io() {
	local rc=0
	mount_rdma 4.1 || return 1
	head -c 1M /dev/urandom > $W/v41 && cp $W/v41 $MNT/v41 && sync &&
		same_sum $W/v41 $EXP/v41 || rc=1
	head -c 1M /dev/urandom > $EXP/v41s && drop_caches &&
		cmp $EXP/v41s $MNT/v41s || rc=1
	umount_rdma || rc=1
	return $rc
}

# After the unmount the client's connection goes away; then the devices
# are deleted while nfsd still listens on them.
delete_links() {
	wait_for 30 no_rc_qp || { rdma res show qp; return 1; }
	rdma link delete ra && rdma link delete rb || return 1
	! rdma res show cm_id | grep -qE '^link r[ab]/'
}

server_stop() {
	echo 0 > $NFSD/threads || return 1
	pkill -x rpc.mountd
	umount $NFSD && umount $EXP || return 1
	[ -z "$(rdma res show cm_id)" ]
}

unload() {
	modprobe -r nfsv4 nfs rpcrdma nfsd || return 1
	modprobe -r metaroce
}

tap_plan 11
setup_two_hosts
ip netns exec $NS_A rdma link add ra type metaroce netdev va
ip netns exec $NS_B rdma link add rb type metaroce netdev vb
wait_for 10 gid_index ra
wait_for 10 gid_index rb

ok_if "nfsd (NFSv4.1/4.2) listens on rdma port $PORT only, on rb" server_start
ok_if "NFSv4.2 mount with proto=rdma over ra" mount_rdma 4.2
ok_if "$MIB MiB written by the client, same bytes on the server" client_write
ok_if "$MIB MiB written by the server, same bytes read by the client" \
	server_write_client_read
ok_if "$SMALL small files written, checked on the server, listed" small_files
ok_if "$DIO_MIB MiB O_DIRECT each way through RDMA READ/WRITE chunks" direct_io
ok_if "NFSv4.2 unmounted; its transport never reconnected" umount_rdma
ok_if "NFSv4.1 mount over RDMA, 1 MiB each way checked" v41_io
ok_if "devices deleted with nfsd listening; no cm_id left on them" delete_links
ok_if "nfsd stopped, nothing left listening" server_stop
ok_if "nfs, nfsd, rpcrdma and metaroce unloaded" unload
tap_done
