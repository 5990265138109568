#!/bin/sh
# report_many.sh - the report of a many-rank run: N generated
# traces (bench/gen_trace.c -r RANK) of E events each, reported
#   serial    `report --jobs 1 TRACES`            (the baseline)
#   parallel  `report TRACES`                     (one trace per online CPU)
#   summary   `report --summary` of N/8 traces, 8 times (what each node does)
#   merge     `report S1.json ... S8.json`        (what the head node does)
# alternating, RUNS times; prints each run, the medians and the ratios to
# the serial report of the same sitting, the machine and its load, and
# checks that all three reports are byte-equal.
#
#   sh bench/report_many.sh [N] [EVENTS] [RUNS]    (default 64 1000000 3)
# Traces are kept in $DIR (default /tmp/cuprobe-many-N-EVENTS) between runs.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-$ROOT/build}
N=${1:-64}
E=${2:-1000000}
RUNS=${3:-3}
ANA="$B/cuprobe-analyze"
GEN="$B/bench/gen_trace"
[ -x "$GEN" ] || make -C "$ROOT" -s "$GEN" >/dev/null
[ -x "$ANA" ] || make -C "$ROOT" -s "$ANA" >/dev/null
DIR=${DIR:-/tmp/cuprobe-many-$N-$E}
mkdir -p "$DIR"
i=0
while [ $i -lt "$N" ]; do
    t="$DIR/rank$(printf %04d $i).trace"
    [ -s "$t" ] || "$GEN" -n "$E" -r $i -s $((i + 1)) -o "$t"
    i=$((i + 1))
done
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", b - a }'; }   # no bc on the GPU machines
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
per=$(( (N + 7) / 8 ))
S_SER="" S_PAR="" S_SUM="" S_MRG=""
r=1
while [ $r -le "$RUNS" ]; do
    t0=$(now); "$ANA" report --no-progress --jobs 1 "$DIR"/rank*.trace >"$OUT/serial.txt"; t1=$(now)
    "$ANA" report --no-progress "$DIR"/rank*.trace >"$OUT/parallel.txt"; t2=$(now)
    # shellcheck disable=SC2012
    ls "$DIR"/rank*.trace | split -l $per - "$OUT/part."
    k=0
    for p in "$OUT"/part.*; do
        # shellcheck disable=SC2046
        "$ANA" report --no-progress --jobs 1 --summary "$OUT/s$k.json" $(cat "$p")
        k=$((k + 1))
    done
    t3=$(now)
    # shellcheck disable=SC2046
    "$ANA" report --no-progress $(ls "$OUT"/s*.json | sort -V) >"$OUT/merged.txt"; t4=$(now)
    cmp -s "$OUT/serial.txt" "$OUT/parallel.txt" || { echo "parallel report differs"; exit 1; }
    cmp -s "$OUT/serial.txt" "$OUT/merged.txt" || { echo "merged report differs"; exit 1; }
    ser=$(secs "$t0" "$t1"); par=$(secs "$t1" "$t2"); sum=$(secs "$t2" "$t3"); mrg=$(secs "$t3" "$t4")
    echo "run $r: serial $ser s, parallel $par s, summaries $sum s, merge $mrg s" \
         "(load $(cut -d' ' -f1-3 /proc/loadavg))"
    S_SER="$S_SER $ser"; S_PAR="$S_PAR $par"; S_SUM="$S_SUM $sum"; S_MRG="$S_MRG $mrg"
    rm -f "$OUT"/part.* "$OUT"/s*.json
    r=$((r + 1))
done
mser=$(echo "$S_SER" | median); mpar=$(echo "$S_PAR" | median)
msum=$(echo "$S_SUM" | median); mmrg=$(echo "$S_MRG" | median)
sz=$(du -sm "$DIR" | cut -f1)
echo "traces: $N x $E events ($sz MiB) on $(nproc) online CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(date -u +%Y-%m-%d)"
echo "median of $RUNS: serial $mser s; parallel $mpar s (x$(awk -v a="$mpar" -v b="$mser" 'BEGIN { printf "%.2f", a / b }') of serial);" \
     "summaries $msum s (x$(awk -v a="$msum" -v b="$mser" 'BEGIN { printf "%.2f", a / b }')); merge of 8 summaries $mmrg s (x$(awk -v a="$mmrg" -v b="$mser" 'BEGIN { printf "%.3f", a / b }'))"
echo "reports byte-equal: serial, parallel, merged"
