#!/bin/bash
# tests/gpu/analyzer_host.sh [OUTDIR] - issue 14's acceptance on a host with
# many cores: `cuprobe-analyze report --no-symbolize` on the 20 M-record trace
# of `gen_trace -n 20000000 -l 4096` against `zstd -dc` of the same frames,
# interleaved rounds (bench/analyzer_vs_zstd.sh), the report's two threads
# pinned to two cores of their own (CPUS, default 2,3) and zstd to the first
# of them, so the figure does not depend on what else the host runs.
#
#   bash tests/gpu/analyzer_host.sh OUTDIR        (default $OUT)
#   ROUNDS=8  CPUS=2,3  TRACE=/tmp/cuprobe-20m.trace  OLD=other/cuprobe-analyze
#
# Needs build/ (cuprobe-analyze, bench/gen_trace); no network, no GPU.  Where
# the host has no libdw or no zstd, the copies of `make gpulib` in
# build/gpulib are used (the analyzer and zstd only).  Writes host.txt (CPUs,
# load), bench.txt (every run, the table) and summary.txt under OUTDIR.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
D=${1:-${OUT:-analyzer-host-out}}
mkdir -p "$D"
D=$(cd "$D" && pwd)
B=${B:-$ROOT/build}
ROUNDS=${ROUNDS:-8}
CPUS=${CPUS:-2,3}
TRACE=${TRACE:-/tmp/cuprobe-20m.trace}
GL=$B/gpulib

{ echo "date $(date -u +%FT%TZ)  host $(hostname)  nproc $(nproc)"
  lscpu 2>/dev/null | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA node0)'
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)"; } >"$D/host.txt"
cat "$D/host.txt"

# zstd: the host's, or the copy carried in build/gpulib.
if command -v zstd >/dev/null; then
    ZSTD=$(command -v zstd)
elif [ -x "$GL/zstd" ]; then
    ZSTD=$D/zstd.sh
    printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s/zstd" "$@"\n' "$GL" "$GL" >"$ZSTD"
    chmod +x "$ZSTD"
else
    echo "SKIP: no zstd on this host and none in $GL (run 'make gpulib' before carrying build/)" | tee "$D/summary.txt"
    exit 0
fi
# The analyzer: wrapped with build/gpulib when its libraries are missing
# (session_batch.sh may have wrapped it already: then it is a script).
ANA=$B/cuprobe-analyze
if head -c 4 "$ANA" | grep -q ELF && ldd "$ANA" 2>/dev/null | grep -q 'not found'; then
    if [ ! -d "$GL" ]; then
        echo "SKIP: $ANA lacks shared libraries and there is no $GL" | tee "$D/summary.txt"; exit 0
    fi
    printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s" "$@"\n' "$GL" "$ANA" >"$D/ana.sh"
    chmod +x "$D/ana.sh"
    ANA=$D/ana.sh
fi
echo "zstd: $ZSTD ($("$ZSTD" --version 2>&1 | head -n 1))"
"$ANA" --help 2>&1 | head -n 1

first=${CPUS%%,*}
if ! command -v taskset >/dev/null || ! taskset -c "$CPUS" true 2>/dev/null; then
    echo "note: taskset -c $CPUS not possible here: runs are not pinned" | tee -a "$D/host.txt"
    PIN= ZPIN=
else
    PIN="taskset -c $CPUS" ZPIN="taskset -c $first"
fi

# The trace (kept in /tmp across calls on a warm machine).
if [ ! -s "$TRACE" ]; then
    [ -x "$B/bench/gen_trace" ] || make -s "$B/bench/gen_trace" >/dev/null 2>&1 ||
        { echo "SKIP: no $B/bench/gen_trace and it does not build here" | tee "$D/summary.txt"; exit 0; }
    t0=$(date +%s)
    "$B/bench/gen_trace" -n 20000000 -l 4096 -o "$TRACE" >/dev/null || { echo "FAIL: gen_trace"; exit 1; }
    echo "trace made in $(( $(date +%s) - t0 )) s"
fi

B=$B ANA=$ANA ZSTD=$ZSTD PIN=$PIN ZPIN=$ZPIN sh bench/analyzer_vs_zstd.sh "$TRACE" "$ROUNDS" >"$D/bench.txt" 2>&1
rc=$?
{ cat "$D/host.txt"
  echo "analyzer pinned: ${PIN:-no}; zstd pinned: ${ZPIN:-no}; rounds $ROUNDS; bench rc=$rc"
  grep -E '^(trace|load|zstd -dc|report +best|report OLD|report/zstd|dump +best)' "$D/bench.txt"
  ratio=$(sed -n "s/^report\/zstd, median of the rounds' ratios: \([0-9.]*\).*/\1/p" "$D/bench.txt")
  [ "$rc" = 0 ] && [ -n "$ratio" ] && awk -v r="$ratio" 'BEGIN {printf "acceptance (report at most 1.5x zstd -dc): %s (%.2fx)\n", r <= 1.5 ? "MET" : "NOT MET", r}'
} >"$D/summary.txt"
cat "$D/summary.txt"
exit $rc
