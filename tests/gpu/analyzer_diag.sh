#!/bin/bash
# tests/gpu/analyzer_diag.sh [OUTDIR] - the report's wall time against
# `zstd -dc` of the same frames (the floor: the report has to decompress
# them) on this host: rounds of zstd -dc, the report with its decoder thread,
# without it (CUPROBE_DECODE_THREAD=0), and each variant analyzer found as
# build/diag/NAME/cuprobe-analyze (built with e.g.
# `make B=build/diag/NAME EXTRA_CFLAGS=-DCP_RING_SPIN=0 build/diag/NAME/cuprobe-analyze`),
# the order rotating every time, all pinned to CPUS; wall, user and system
# seconds of every run; then, where build/perfkit holds a perf with its
# libraries and their ld.so, a profile by thread and symbol of the report
# and of each variant named in PROFILE.
#   ROUNDS (5)  CPUS (two of different cores)  TRACE (/tmp/cuprobe-20m.trace)  PROFILE (report)
# Writes OUTDIR/runs.txt, summary.txt, perf-{sym,comm}-NAME.txt.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
D=${1:-${OUT:-analyzer-diag-out}}; mkdir -p "$D"; D=$(cd "$D" && pwd)
B=$ROOT/build; GL=$B/gpulib; K=$B/perfkit
# Two CPUs of different physical cores (SMT siblings share one core's
# units), after 0 and 1 where the machine has more: lscpu's CORE column.
pick_cpus() {
    lscpu -p=CPU,CORE 2>/dev/null | awk -F, '!/^#/ && !seen[$2]++ { c[n++] = $1 }
        END { if (n >= 4) print c[2] "," c[3]; else if (n >= 2) print c[0] "," c[1] }'
}
ROUNDS=${ROUNDS:-5}; CPUS=${CPUS:-$(pick_cpus)}; CPUS=${CPUS:-2,3}; TRACE=${TRACE:-/tmp/cuprobe-20m.trace}; PROFILE=${PROFILE:-report}
PIN=(); taskset -c "$CPUS" true 2>/dev/null && PIN=(taskset -c "$CPUS")
ZSTD=$(command -v zstd || echo "$GL/zstd")
# (analyzer_ready.sh may have wrapped the analyzer in a script: ask ldconfig, not ldd)
LIBP=; [ -d "$GL" ] && ! ldconfig -p 2>/dev/null | grep -q libdw.so.1 && LIBP=$GL
run_env() { if [ -n "$LIBP" ]; then env LD_LIBRARY_PATH="$LIBP" "$@"; else "$@"; fi; }
[ -s "$TRACE" ] || "$B/bench/gen_trace" -n 20000000 -l 4096 -o "$TRACE" >/dev/null || { echo "FAIL: gen_trace"; exit 1; }
[ -s "$TRACE.zst" ] || tail -c +17 "$TRACE" >"$TRACE.zst"
{ echo "date $(date -u +%FT%TZ) nproc $(nproc) pinned ${PIN[*]:-no}"
  lscpu | grep -E '^(Model name|Flags|Thread|Core|Socket|L[123])' | cut -c1-400
  echo "cpu,core,socket: $(lscpu -p=CPU,CORE,SOCKET 2>/dev/null | grep -v '^#' | tr '\n' ' ')"
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)"; } >"$D/host.txt"
NAMES=(zstd report dec0)
for v in "$B"/diag/*/cuprobe-analyze; do [ -x "$v" ] && NAMES+=("$(basename "$(dirname "$v")")"); done
one() {     # NAME: one timed run, a line "NAME wall user sys"
    local n=$1 cmd
    case $n in
    zstd) cmd=("$ZSTD" -dc "$TRACE.zst") ;;
    report) cmd=("$B/cuprobe-analyze" report --no-progress --no-symbolize "$TRACE") ;;
    dec0) cmd=(env CUPROBE_DECODE_THREAD=0 "$B/cuprobe-analyze" report --no-progress --no-symbolize "$TRACE") ;;
    *) cmd=("$B/diag/$n/cuprobe-analyze" report --no-progress --no-symbolize "$TRACE") ;;
    esac
    local TIMEFORMAT="%R %U %S" t
    t=$( { time run_env "${PIN[@]}" "${cmd[@]}" >/dev/null 2>"$D/err-$n.txt"; } 2>&1 )
    echo "$n $t" | tee -a "$D/runs.txt"
}
: >"$D/runs.txt"
for ((r = 0; r < ROUNDS; r++)); do
    k=${#NAMES[@]}
    for ((i = 0; i < k; i++)); do one "${NAMES[$(( (i + r) % k ))]}"; done
done
awk '{w[$1] = w[$1] " " $2; u[$1] = u[$1] " " $3; s[$1] = s[$1] " " $4}
     function med(l,   a, n, i, j, t) { n = split(l, a, " ")
         for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
         return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
     END { z = med(w["zstd"]); for (n in w) printf "%-9s wall median %.3f s (%.2fx zstd)  user %.3f  sys %.3f\n", n, med(w[n]), med(w[n]) / z, med(u[n]), med(s[n]) }' \
    "$D/runs.txt" | sort >"$D/summary.txt"
cat "$D/host.txt" "$D/summary.txt"
if [ -x "$K/perf" ]; then
    perf() { "$K/ld-linux-x86-64.so.2" --library-path "$K" "$K/perf" "$@"; }
    for n in $PROFILE; do
        a=$B/cuprobe-analyze; [ "$n" = report ] || a=$B/diag/$n/cuprobe-analyze
        [ -x "$a" ] || continue
        run_env "${PIN[@]}" "$a" report --no-progress --no-symbolize "$TRACE" >/dev/null 2>&1 # warm
        perf record -q -F 4999 -o "$D/p.data" -- "${PIN[@]}" env ${LIBP:+LD_LIBRARY_PATH=$LIBP} \
            "$a" report --no-progress --no-symbolize "$TRACE" >/dev/null 2>&1
        perf report -i "$D/p.data" -n --no-children --stdio --sort comm,sym 2>/dev/null | grep -v '^#' | grep . | head -40 >"$D/perf-sym-$n.txt"
        perf report -i "$D/p.data" -n --no-children --stdio --sort comm 2>/dev/null | grep -v '^#' | grep . | head -10 >"$D/perf-comm-$n.txt"
        rm -f "$D/p.data"
        echo "== profile of $n"; cat "$D/perf-comm-$n.txt" "$D/perf-sym-$n.txt"
    done
fi
