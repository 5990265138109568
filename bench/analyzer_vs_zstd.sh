#!/bin/sh
# analyzer_vs_zstd.sh - wall time of `cuprobe-analyze report --no-symbolize`
# against `zstd -dc` of the same frames (the floor: the report has to
# decompress them), and `dump` to /dev/null, in interleaved runs.
#
#   sh bench/analyzer_vs_zstd.sh [TRACE] [RUNS]
#     TRACE  default: a 20 M-record trace from `gen_trace -n 20000000 -l 4096`
#            (made once, kept in $TMPDIR)
#     RUNS   rounds of (zstd, report, zstd, dump) (default 7)
#     ANA    the analyzer to time (default $B/cuprobe-analyze)
#     OLD    another build's analyzer, timed in the same rounds (before/after)
#     ZSTD   the zstd binary (default: zstd on the PATH)
#     PIN    a prefix for the analyzer's runs, ZPIN for zstd's (e.g.
#            PIN="taskset -c 2,3" ZPIN="taskset -c 2": the report's two
#            threads on two cores of their own, zstd on one of them)
# Needs no bc (GPU hosts may lack it): the arithmetic is awk's.
# Prints every run, then best and median of each and report/zstd of both,
# the median of each round's report / the zstd run before it, and the load
# average before and after (the machine may be shared).
# Two cores help: the report decodes on a thread of its own.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-$ROOT/build}
ANA=${ANA:-$B/cuprobe-analyze}     # the analyzer timed (ANA=... for a before/after)
GEN="$B/bench/gen_trace"
ZSTD=${ZSTD:-zstd}
PIN=${PIN:-}
ZPIN=${ZPIN:-}
RUNS=${2:-7}
TRACE=${1:-${TMPDIR:-/tmp}/cuprobe-20m.trace}
if [ ! -s "$TRACE" ]; then
    "$GEN" -n 20000000 -l 4096 -o "$TRACE" >/dev/null
fi
FRAMES="$TRACE.zst"
# The frames without cuprobe's 16-byte prefix: what zstd can read.
[ -s "$FRAMES" ] || tail -c +17 "$TRACE" >"$FRAMES"
records=$("$ANA" dump --stats "$TRACE" | awk '$1 == "total" {print $2}')
echo "trace $TRACE: $(stat -c %s "$TRACE") bytes, $records records; nproc $(nproc)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)${PIN:+; analyzer under $PIN}${ZPIN:+; zstd under $ZPIN}"
out=$(mktemp)
t() {   # t NAME CMD... : wall seconds of CMD, stdout to /dev/null; a failure ends the script
    name=$1
    shift
    s=$(date +%s.%N)
    "$@" >/dev/null || { echo "FAILED: $name: $*" >&2; rm -f "$out"; exit 1; }
    e=$(date +%s.%N)
    echo "$name $(awk -v s="$s" -v e="$e" 'BEGIN {printf "%.3f", e - s}')" | tee -a "$out"
}
i=0
while [ $i -lt "$RUNS" ]; do
    t zstd $ZPIN "$ZSTD" -dc "$FRAMES"
    t report $PIN "$ANA" report --no-progress --no-symbolize "$TRACE"
    t zstd $ZPIN "$ZSTD" -dc "$FRAMES"
    t dump $PIN "$ANA" dump "$TRACE"
    if [ -n "${OLD:-}" ]; then
        t zstd $ZPIN "$ZSTD" -dc "$FRAMES"
        t report_old $PIN "$OLD" report --no-progress --no-symbolize "$TRACE"
    fi
    i=$((i + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
stat_of() {     # best and median of NAME's runs
    awk -v n="$1" '$1 == n {print $2}' "$out" | sort -g |
        awk '{v[NR] = $1} END {printf "%.3f %.3f", v[1], (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
set -- $(stat_of zstd); zb=$1; zm=$2
set -- $(stat_of report); rb=$1; rm_=$2
set -- $(stat_of dump); db=$1; dm=$2
div() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN {printf f, a / b}'; }
echo "zstd -dc   best $zb s  median $zm s"
echo "report     best $rb s  median $rm_ s   report/zstd: best $(div "$rb" "$zb" %.2f)  median $(div "$rm_" "$zm" %.2f)"
if [ -n "${OLD:-}" ]; then
    set -- $(stat_of report_old); ob=$1; om=$2
    echo "report OLD best $ob s  median $om s   report/zstd: best $(div "$ob" "$zb" %.2f)  median $(div "$om" "$zm" %.2f)"
fi
pair_of() {     # median over rounds of NAME's time / the zstd run just before it
    awk -v n="$1" '$1 == "zstd" {z = $2} $1 == n && z > 0 {print $2 / z}' "$out" | sort -g |
        awk '{v[NR] = $1} END {printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
# The machine may be shared: each run against the zstd run just before it
# is steadier than best against best when the load comes and goes.
echo "report/zstd, median of the rounds' ratios: $(pair_of report)${OLD:+  (OLD: $(pair_of report_old))}"
echo "dump       best $db s  median $dm s   $(div "$records" "$db" %.0f | awk '{printf "%.2f", $1 / 1e6}') M records/s (best)"
rm -f "$out"
