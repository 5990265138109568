#!/bin/bash
# tests/gpu/bytes_per_event.sh - how many trace bytes an event costs on real
# workloads, and which record types those bytes go to: GPT-2 small training
# (bench/gpu_steps.py gpt2), the launch-bound MLP loop (bench/gpu_steps.py
# mlp) and the fragmentation OOM (tests/gpu/check_oom_frag.py), each under
# `cuprobe run` with the default settings.
#
# Usage: bash tests/gpu/bytes_per_event.sh [OUTDIR]
#   OUTDIR (default $OUT, else bytes-per-event-out) gets, per workload, its
#   traces, `cuprobe dump --stats` of each (records, raw bytes and share per
#   record type) and summary.txt: one line per trace with records, file
#   bytes, compressed bytes/event and raw bytes/event.  Under 2 minutes on
#   an H200 (GPT-2 and the MLP run 15 s and 8 s of steps).
# bash tests/gpu/bytes_per_event.sh --measure TRACE...  prints the summary
#   line of traces already written (no GPU needed).
B=${B:-build}
CP="$PWD/$B/cuprobe"
ANA="$PWD/$B/cuprobe-analyze"

# measure_trace NAME TRACE : the summary line of one trace; its stats go
# next to it.  The arithmetic is awk's: the GPU machine has no bc, and
# $(echo ... | bc -l) there gave "" which printf showed as 0.00 (the
# B/event columns of the 2026-12-01 H200 run).
measure_trace() {
    local name=$1 t=$2 fb
    "$ANA" dump --stats "$t" >"$t.stats.txt" 2>&1
    fb=$(stat -c %s "$t")
    LC_ALL=C awk -v name="$name" -v trace="$(basename "$t")" -v fb="$fb" '
        $1 == "total" && $2 > 0 {
            printf "%-10s %-28s %10d %12d %10.2f %10.2f\n", name, trace, $2, fb, fb / $2, $3 / $2
            found = 1
        }
        { last = $0 }
        END { if (!found) printf "%s: %s: no records (%s)\n", name, trace, last }' "$t.stats.txt"
}

if [ "${1:-}" = "--measure" ]; then
    shift
    for t in "$@"; do
        measure_trace "$(basename "$(dirname "$t")")" "$t"
    done
    exit 0
fi
OUT=${1:-${OUT:-bytes-per-event-out}}
mkdir -p "$OUT" || exit 1
[ -x "$CP" ] && [ -x "$ANA" ] && [ -f "$B/libcuprobe.so" ] || { echo "build/ is missing (run make)"; exit 1; }
if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "skip: torch with CUDA is not importable here" | tee "$OUT/summary.txt"
    exit 0
fi
: >"$OUT/summary.txt"
printf '%-10s %-28s %10s %12s %10s %10s\n' workload trace records file_bytes B/event raw_B/event \
    | tee -a "$OUT/summary.txt"

# record NAME CMD... : run CMD under cuprobe, then measure every trace it left
record() {
    local name=$1; shift
    mkdir -p "$OUT/$name"
    rm -f "$OUT/$name"/*.trace
    timeout 90 "$CP" run -o "$OUT/$name/$name-%p.trace" -- "$@" >"$OUT/$name/stdout.txt" 2>"$OUT/$name/stderr.txt"
    echo "exit $?" >>"$OUT/$name/stdout.txt"
    local t
    for t in "$OUT/$name"/*.trace; do
        [ -f "$t" ] || { echo "$name: no trace written (see $OUT/$name/stderr.txt)" | tee -a "$OUT/summary.txt"; return; }
        measure_trace "$name" "$t" | tee -a "$OUT/summary.txt"
    done
}

if python3 -c 'import transformers' 2>/dev/null; then
    record gpt2 python3 bench/gpu_steps.py gpt2 15
else
    echo "gpt2: skipped (transformers is not importable)" | tee -a "$OUT/summary.txt"
fi
record mlp python3 bench/gpu_steps.py mlp 8
record oomfrag python3 tests/gpu/check_oom_frag.py

echo | tee -a "$OUT/summary.txt"
echo "bytes per record type (largest first; raw = before zstd):" | tee -a "$OUT/summary.txt"
for s in "$OUT"/*/*.stats.txt; do
    [ -f "$s" ] || continue
    echo "== $(basename "$s" .stats.txt)" | tee -a "$OUT/summary.txt"
    head -n 12 "$s" | tee -a "$OUT/summary.txt"
done
