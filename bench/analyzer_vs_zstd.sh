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
# Prints every run, then best and median of each and report/zstd of both,
# the median of each round's report / the zstd run before it, and the load
# average before and after (the machine may be shared).
# Two cores help: the report decodes on a thread of its own.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-$ROOT/build}
ANA=${ANA:-$B/cuprobe-analyze}     # the analyzer timed (ANA=... for a before/after)
GEN="$B/bench/gen_trace"
RUNS=${2:-7}
TRACE=${1:-${TMPDIR:-/tmp}/cuprobe-20m.trace}
if [ ! -s "$TRACE" ]; then
    "$GEN" -n 20000000 -l 4096 -o "$TRACE" >/dev/null
fi
FRAMES="$TRACE.zst"
# The frames without cuprobe's 16-byte prefix: what zstd can read.
[ -s "$FRAMES" ] || tail -c +17 "$TRACE" >"$FRAMES"
records=$("$B/cuprobe-analyze" dump --stats "$TRACE" | awk '$1 == "total" {print $2}')
echo "trace $TRACE: $(stat -c %s "$TRACE") bytes, $records records; nproc $(nproc)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
t() {   # t NAME CMD... : wall seconds of CMD, stdout to /dev/null
    name=$1
    shift
    s=$(date +%s.%N)
    "$@" >/dev/null
    e=$(date +%s.%N)
    echo "$name $(echo "$e - $s" | bc)"
}
out=$(mktemp)
i=0
while [ $i -lt "$RUNS" ]; do
    { t zstd zstd -dc "$FRAMES"
      t report "$ANA" report --no-progress --no-symbolize "$TRACE"
      t zstd zstd -dc "$FRAMES"
      t dump "$ANA" dump "$TRACE"
      if [ -n "${OLD:-}" ]; then
          t zstd zstd -dc "$FRAMES"
          t report_old "$OLD" report --no-progress --no-symbolize "$TRACE"
      fi; } | tee -a "$out"
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
echo "zstd -dc   best $zb s  median $zm s"
echo "report     best $rb s  median $rm_ s   report/zstd: best $(echo "scale=2; $rb / $zb" | bc)  median $(echo "scale=2; $rm_ / $zm" | bc)"
if [ -n "${OLD:-}" ]; then
    set -- $(stat_of report_old); ob=$1; om=$2
    echo "report OLD best $ob s  median $om s   report/zstd: best $(echo "scale=2; $ob / $zb" | bc)  median $(echo "scale=2; $om / $zm" | bc)"
fi
pair_of() {     # median over rounds of NAME's time / the zstd run just before it
    awk -v n="$1" '$1 == "zstd" {z = $2} $1 == n && z > 0 {print $2 / z}' "$out" | sort -g |
        awk '{v[NR] = $1} END {printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
# The machine may be shared: each run against the zstd run just before it
# is steadier than best against best when the load comes and goes.
echo "report/zstd, median of the rounds' ratios: $(pair_of report)${OLD:+  (OLD: $(pair_of report_old))}"
echo "dump       best $db s  median $dm s   $(echo "$records / $db / 1000000" | bc -l | cut -c1-5) M records/s (best)"
rm -f "$out"
