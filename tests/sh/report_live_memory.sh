#!/bin/sh
# report_live_memory.sh - what the report holds per live allocation: a
# trace of 300,000 allocations never freed (bench/gen_trace.c -k live) may
# take at most 100 bytes of peak RSS per allocation more than a trace of
# 1,000 (the live set is laid out for 56 to 64: analyzer/model/cp_live.h).
# Past --max-live (or CUPROBE_MAX_LIVE) allocations are counted by call
# site only: the peak stays small, the memory held is still all there, and
# the report says so.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
GEN="$B/bench/gen_trace"
[ -x "$ANA" ] && [ -x "$GEN" ] || die "analyzer or bench/gen_trace not built"
command -v python3 >/dev/null 2>&1 || skip "no python3"
# A sanitizer's allocator adds its own bytes to every block.
! ldd "$ANA" 2>/dev/null | grep -q -E 'lib(a|t)san' ||
    skip "peak memory is measured on a build without a sanitizer"
N=300000
"$GEN" -k live -n $N -o "$TMP/big.trace" || die "gen_trace failed"
"$GEN" -k live -n 1000 -o "$TMP/small.trace" || die "gen_trace failed"

peak() {    # peak RSS in KiB of: report ARGS... (output in $TMP/out)
    python3 - "$ANA" "$TMP/out" "$@" <<'PY'
import os, subprocess, sys
with open(sys.argv[2], "w") as out:
    p = subprocess.Popen([sys.argv[1], "report", "--no-progress"] + sys.argv[3:], stdout=out)
    _, st, ru = os.wait4(p.pid, 0)
print(ru.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(st))
PY
}
small=$(peak "$TMP/small.trace") || die "report of 1,000 allocations failed"
big=$(peak "$TMP/big.trace") || die "report of $N allocations failed"
per=$(( (big - small) * 1024 / (N - 1000) ))
echo "peak RSS: $small KiB for 1,000 live allocations, $big KiB for $N: $per B each"
[ $per -le 100 ] || die "$per bytes per live allocation (at most 100)"
expect_grep "leaked in $N allocations at exit" "$TMP/out"

capped=$(peak --max-live 10000 "$TMP/big.trace") || die "report --max-live failed"
echo "peak RSS with --max-live 10000: $capped KiB"
[ $((capped - small)) -le 20000 ] || die "--max-live 10000 still took $((capped - small)) KiB"
expect_grep "memory on GPU 0: peak .*, $N allocations" "$TMP/out"
expect_grep "More than 10000 allocations were live at once: the $((N - 10000)) made past that bound .* counted by call site only" "$TMP/out"
CUPROBE_MAX_LIVE=10000 peak "$TMP/big.trace" >/dev/null || die "report with CUPROBE_MAX_LIVE failed"
expect_grep "More than 10000 allocations were live at once" "$TMP/out"
echo "live memory ok"
