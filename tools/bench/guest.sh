#!/bin/bash
# The one-VM benchmark, run inside the guest by tools/bench/bench.sh (or by
# the smoke selftest): sets up the topologies, runs every scenario, and
# leaves records.jsonl, logs/ and profile-*.txt in $BENCH_OUT.
#
# Usage: guest.sh full|short|smoke
#   full   every case of issue 7 (about 30 min on an idle 2-core host)
#   short  fewer sizes, loss levels and iterations, for a loaded host
#   smoke  one or two cases per scenario (the selftest)
here=$(dirname "$(readlink -f "$0")")
mode=${1:-full}
. "$here/lib.sh"
for f in "$here"/scen_*.sh; do . "$f"; done

case $mode in
full)
	BENCH_DUR=6 BENCH_LAT_ITERS=1000
	BENCH_STACKS="mroce-2ns mroce-1ns rxe-1ns" BENCH_TCP="tcp-2ns tcp-1ns"
	BENCH_LAT_OPS="send write read" BENCH_BW_OPS="send write read"
	BENCH_LAT_EVENT_OPS="send" BENCH_RATE_OPS="send write"
	BENCH_SIZES="4096 65536 1048576" BENCH_QPS="1 8" BENCH_ATOMIC=1
	BENCH_LOSS="0 0.1 1 5 10" BENCH_LOSS_STACKS="mroce-1ns rxe-1ns" BENCH_LOSS_TCP=1
	BENCH_SCALE_N="1 64 256 1024 4096" BENCH_SCALE_TIMEOUT=240 BENCH_PEERS=32
	BENCH_CPU_STACKS="mroce-2ns rxe-1ns tcp-2ns" BENCH_CPU_ITERS=1000
	BENCH_PROFILE_STACKS="mroce-2ns rxe-1ns" BENCH_PROFILE_TOP=25 BENCH_PROFILE_BPF=1
	BENCH_SERIES_AFTER=8 BENCH_OUTAGE_AT=4 BENCH_OUTAGE_S=2
	BENCH_MP_LINKS="1 2 4" BENCH_LINK_MBIT=24 BENCH_MP_PATHS=16
	BENCH_INCAST=1 BENCH_INCAST_DUR=8 BENCH_INCAST_MBIT=40 BENCH_INCAST_PROBE_N=200
	BENCH_CRC_IMPLS="lib insn sb8 auto"
	BENCH_BATCH_OPS=("write 65536" "write 1048576" "read 65536")
	BENCH_CACK_OPS="read write send atomic"
	BENCH_STEER_QPS="1 8" BENCH_STEER_PEERS=4
	BENCH_ECO=1
	;;
short)
	BENCH_DUR=3 BENCH_LAT_ITERS=300
	BENCH_STACKS="mroce-2ns mroce-1ns rxe-1ns" BENCH_TCP="tcp-2ns tcp-1ns"
	BENCH_LAT_OPS="send write read" BENCH_BW_OPS="write send read"
	BENCH_LAT_EVENT_OPS="send" BENCH_RATE_OPS="send write"
	BENCH_SIZES="65536 4096 1048576" BENCH_QPS="1 8" BENCH_ATOMIC=1
	BENCH_LOSS="0 1 10" BENCH_LOSS_STACKS="mroce-1ns rxe-1ns" BENCH_LOSS_TCP=""
	BENCH_SCALE_N="1 64 1024 4096" BENCH_SCALE_TIMEOUT=240 BENCH_PEERS=32
	BENCH_CPU_STACKS="mroce-2ns rxe-1ns tcp-2ns" BENCH_CPU_ITERS=1000
	BENCH_PROFILE_STACKS="mroce-2ns rxe-1ns" BENCH_PROFILE_TOP=25 BENCH_PROFILE_BPF=1
	BENCH_SERIES_AFTER=6 BENCH_OUTAGE_AT=3 BENCH_OUTAGE_S=2
	BENCH_MP_LINKS="1 2 4" BENCH_LINK_MBIT=24 BENCH_MP_PATHS=16
	BENCH_INCAST=1 BENCH_INCAST_DUR=6 BENCH_INCAST_MBIT=40 BENCH_INCAST_PROBE_N=100
	BENCH_CRC_IMPLS="lib insn sb8 auto"
	BENCH_BATCH_OPS=("write 65536" "write 1048576" "read 65536")
	BENCH_CACK_OPS="read atomic"
	BENCH_STEER_QPS="1 8" BENCH_STEER_PEERS=4
	BENCH_ECO=1
	;;
smoke)
	BENCH_DUR=2 BENCH_LAT_ITERS=100
	BENCH_STACKS="mroce-2ns rxe-1ns" BENCH_TCP="tcp-2ns"
	BENCH_LAT_OPS="send" BENCH_BW_OPS="write"
	BENCH_LAT_EVENT_OPS="" BENCH_RATE_OPS=""
	BENCH_SIZES="65536" BENCH_QPS="1" BENCH_ATOMIC=0
	BENCH_LOSS="0 1" BENCH_LOSS_STACKS="mroce-1ns" BENCH_LOSS_TCP=""
	BENCH_SCALE_N="4" BENCH_SCALE_TIMEOUT=60 BENCH_PEERS=2
	BENCH_CPU_STACKS="mroce-2ns" BENCH_CPU_ITERS=100
	BENCH_PROFILE_STACKS="mroce-2ns" BENCH_PROFILE_TOP=10 BENCH_PROFILE_BPF=0
	BENCH_SERIES_AFTER=3 BENCH_OUTAGE_AT=2 BENCH_OUTAGE_S=1
	BENCH_MP_LINKS="2" BENCH_LINK_MBIT=24 BENCH_MP_PATHS=8
	BENCH_INCAST=0
	BENCH_CRC_IMPLS="auto"
	BENCH_BATCH_OPS=("write 65536")
	BENCH_CACK_OPS=""
	BENCH_STEER_QPS="1" BENCH_STEER_PEERS=0
	BENCH_ECO=0
	;;
*) echo "usage: $0 full|short|smoke" >&2; exit 2 ;;
esac
BENCH_QPSCALE=${BENCH_QPSCALE:-/tmp/qpscale}

rm -f "$BENCH_REC"
rec group=meta status=ok mode="$mode" kernel="$(uname -r)" cpus="$(nproc)" \
	perftest="$(dpkg-query -W -f='${Version}' perftest 2>/dev/null)" \
	started="$(date -u +%FT%TZ)" tree_commit="commit ${BENCH_COMMIT:-unknown}" dur_s="$BENCH_DUR"
# Loss recovery timers: TCG's noisy RTTs are the transport's problem to
# handle, so the module runs with its defaults.
# Only rxe and MetaRoCE providers are in /etc/libibverbs.d (the VM's
# guest-stage2.sh).
log "setup"
setup_two_ns || { echo "two-namespace setup failed" >&2; exit 1; }
setup_one_ns || { echo "one-namespace setup failed" >&2; exit 1; }
# The module's parameters (loaded by now), for the report's context.
params=()
for f in /sys/module/metaroce/parameters/*; do
	[ -r "$f" ] && params+=("$(basename "$f")=$(cat "$f")")
done
rec group=module status=ok "${params[@]}"
if [ ! -x "$BENCH_QPSCALE" ]; then
	gcc -O2 -Wall -Wextra -o "$BENCH_QPSCALE" "$here/qpscale.c" -libverbs ||
		echo "qpscale build failed" >&2
fi

# Most telling first: a run cut short by its VM timeout keeps what it has.
# BENCH_ONLY="paths multipath incast ..." runs a subset (another VM may run
# the rest at the same time).
scens=${BENCH_ONLY:-"perftest_core steer crc batch cack eco loss profile cpu scale paths multipath incast perftest_rest"}
for s in $scens; do
	case $s in
	incast)
		if ((BENCH_INCAST)); then
			scen_incast
		else
			rec group=incast stack=mroce-incast status=not_measured error="not part of the $mode run"
		fi ;;
	*) "scen_$s" ;;
	esac
done
rec group=meta_end status=ok finished="$(date -u +%FT%TZ)"
log "done: $(wc -l < "$BENCH_REC") records"
