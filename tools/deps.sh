#!/bin/bash
# Install everything MetaRoCE needs to build, test and benchmark, with apt-get.
# Idempotent: quick when every package is already present.
# Usage: tools/deps.sh [--debug]
#   --debug  also what building the debug kernel of `make check-debug` takes
set -euo pipefail

PKGS=(
	# build
	build-essential gcc make pkg-config kmod xz-utils cpio
	linux-headers-6.12-amd64 libibverbs-dev librdmacm-dev
	sparse linux-source-6.12 libmnl-dev
	# VM test bench: the guest kernel, qemu and an initramfs shell
	linux-image-6.12-amd64 qemu-system-x86 busybox-static
	# userspace that runs inside the guest (shared from the host root)
	rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest
	python3-pyverbs iproute2 iputils-ping iperf3 tcpdump ethtool procps
	nftables
	# NFS over RDMA (test_nfs_rdma): exportfs, rpc.mountd, mount.nfs
	nfs-kernel-server nfs-common
	# NVMe-oF in the two-VM benchmark (tools/bench/nvme2vm.sh)
	fio
	# what applications run on verbs (test_ecosystem): UCX (and its
	# headers, for progs/ucp_check.c), libfabric, Open MPI and its
	# compiler wrapper
	ucx-utils libucx-dev libfabric-bin openmpi-bin libopenmpi-dev
	# compliance suite: the Wireshark dissector is tested with tshark
	tshark
	# benchmarks (make bench): profiles in the guest, plots on the host
	linux-perf bpftrace python3-matplotlib
	# packages (make deb, test_packages): build, DKMS, lintian
	debhelper dh-dkms dkms lintian rsync
)

# tools/vm/debug-kernel.sh: a kernel build from linux-source-6.12, and rsync
# for the copy of the checkout its modules are built in.
DEBUG_PKGS=(linux-source-6.12 flex bison libelf-dev libssl-dev bc dwarves rsync)
case ${1:-} in
"") ;;
--debug) PKGS+=("${DEBUG_PKGS[@]}") ;;
*) echo "usage: $0 [--debug]" >&2; exit 2 ;;
esac

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark's wireshark-common asks whether non-root users may capture: no.
echo "wireshark-common wireshark-common/install-setuid boolean false" |
	debconf-set-selections
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
