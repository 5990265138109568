#!/bin/sh
# analyzer_instr.sh - instructions per thread (callgrind) of `report
# --no-symbolize` and `dump` against `zstd -dc` of the same frames: the
# load-independent measure of issue 14 on a shared machine, where wall
# times follow the other jobs.  On two free cores the wall time of the
# report follows its larger thread (decoder or reader), so that thread
# over zstd's count is the projected wall ratio.
#
#   sh bench/analyzer_instr.sh TRACE [ANALYZER...]
#     TRACE     e.g. from `gen_trace -n 2000000 -l 4096` (callgrind runs
#               about 50x slower than native: keep it to a few million records)
#     ANALYZER  builds to compare (default $B/cuprobe-analyze)
# Needs valgrind.  Prints, per analyzer and command, each thread's
# instructions (the main thread first) and the larger one over zstd's.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-$ROOT/build}
TRACE=${1:?usage: analyzer_instr.sh TRACE [ANALYZER...]}
shift
[ $# -gt 0 ] || set -- "$B/cuprobe-analyze"
command -v valgrind >/dev/null || { echo "valgrind not found" >&2; exit 2; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
tail -c +17 "$TRACE" >"$W/frames.zst"     # the frames without cuprobe's prefix
ir() {  # ir FILE: the total instructions of one callgrind output file
    awk '/^summary:/ {print $2}' "$1"
}
valgrind --tool=callgrind --callgrind-out-file="$W/z" zstd -dc "$W/frames.zst" >/dev/null 2>&1
z=$(ir "$W/z")
echo "trace $TRACE; zstd -dc: $z instructions"
for ana in "$@"; do
    for cmd in report dump; do
        rm -f "$W"/a*
        opts=""
        [ $cmd = report ] && opts="--no-progress --no-symbolize"
        # shellcheck disable=SC2086 # opts: words
        valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$W/a" \
            "$ana" $cmd $opts "$TRACE" >/dev/null 2>&1
        line="" ; max=0
        for f in $(ls "$W"/a-* | sort); do
            n=$(ir "$f")
            line="$line $n"
            [ "$n" -gt "$max" ] && max=$n
        done
        echo "$ana $cmd: threads$line; larger/zstd $(awk -v a="$max" -v b="$z" 'BEGIN {printf "%.2f", a / b}')"
    done
done
