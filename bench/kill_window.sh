#!/bin/sh
# bench/kill_window.sh - the trace a SIGKILL loses under oversubscription:
# THREADS CPU-bound recording threads (default 64) pinned to CPUS (default
# 0,1: two cores), killed RUNS times (default 9) at a moment after the first
# second; for each run, lost = time of the last record the program made
# (each thread notes it in an mmap'd file that survives the kill) - time of
# the last record the trace kept (both CLOCK_MONOTONIC).  Prints every run
# and the median and maximum in ms, with the flush interval
# (CUPROBE_FLUSH_MS, default 100).
#   B=build sh bench/kill_window.sh [THREADS] [RUNS] [CPUS]
B=${B:-build}
N=${1:-64}
RUNS=${2:-9}
CPUS=${3:-0,1}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export LD_LIBRARY_PATH="$B/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
P="$B/bench/kill_window"
i=0
: >"$T/lost"
while [ $i -lt "$RUNS" ]; do
    rm -f "$T"/k-*.trace "$T/out"
    CUPROBE_OUTPUT="$T/k-%p.trace" LD_PRELOAD="$B/libcuprobe.so" \
        taskset -c "$CPUS" "$P" run "$N" "$T/slots" >"$T/out" &
    pid=$!
    w=0; while ! grep -q ready "$T/out" 2>/dev/null && [ $w -lt 300 ]; do sleep 0.05; w=$((w+1)); done
    ms=$(( 200 + (i * 137) % 700 ))
    "$P" kill $pid $ms
    wait $pid 2>/dev/null
    tk=$("$P" last "$T/slots")
    f=$(ls "$T"/k-*.trace 2>/dev/null | head -n 1)
    last=$("$B/cuprobe-analyze" dump "$f" 2>/dev/null | tail -n 1 | sed -n 's/^[A-Z_]* ts=\([0-9]*\)\.\([0-9]*\) .*/\1\2/p')
    [ -n "$last" ] || { echo "run $i: no record decoded"; i=$((i + 1)); continue; }
    lost=$(awk -v k="$tk" -v l="$last" 'BEGIN { printf "%.1f", (k - l) / 1e6 }')
    echo "run $i: killed ${ms} ms after ready, lost ${lost} ms"
    echo "$lost" >>"$T/lost"
    i=$((i + 1))
done
sort -n "$T/lost" | awk -v n="$N" -v c="$CPUS" -v f="${CUPROBE_FLUSH_MS:-100}" \
    '{a[NR]=$1} END { printf "threads=%s cpus=%s flush_ms=%s runs=%d lost_ms median=%.1f max=%.1f\n", n, c, f, NR, a[int((NR+1)/2)], a[NR] }'
