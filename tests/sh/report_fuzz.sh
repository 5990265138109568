#!/bin/sh
# report_fuzz.sh - the structure-aware fuzzer of the whole report
# (tests/fuzz/fuzz_report.c) under AddressSanitizer + UBSan: first every
# input of tests/fuzz/report_regress/ (inputs that once found a bug) once,
# then FUZZ_SECONDS (default 60) of fuzzing from the golden traces and the
# scenario traces of tests/fuzz/report_corpus/.  Needs clang with libFuzzer
# (.ci/run installs clang-14 and libclang-rt-14-dev).  The checked-in
# corpora are copied, never modified.
#
# Long runs (hours), from the repository root:
#   FUZZ_SECONDS=3600 FUZZ_KEEP=/tmp/fuzz-report sh tests/sh/report_fuzz.sh
# (FUZZ_KEEP: a directory that keeps the grown corpus and any crash input;
# the last line of libFuzzer's log gives the run count: "Done N runs".)
# tier: long
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
secs=${FUZZ_SECONDS:-60}
t0=$(date +%s)
ZSTD_A=$(${CC:-gcc} -print-file-name=libzstd.a)
[ -f "$ZSTD_A" ] || skip "libzstd.a not found"
CLANG=
for c in ${FUZZ_CC:-} clang clang-14; do
    command -v "$c" >/dev/null 2>&1 || continue
    echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' >"$TMP/t.c"
    if "$c" -fsanitize=fuzzer,address,undefined "$TMP/t.c" -o "$TMP/t" 2>/dev/null; then
        CLANG=$c
        break
    fi
done
[ -n "$CLANG" ] || skip "clang with libFuzzer not found (apt-get install clang-14 libclang-rt-14-dev)"
W=${FUZZ_KEEP:-$TMP/work}
mkdir -p "$W/corpus" "$B/fuzz"
cp "$ROOT"/tests/golden/*.trace "$ROOT"/tests/fuzz/report_corpus/* "$W/corpus/" 2>/dev/null

SRC=$(ls "$ROOT"/analyzer/*.c "$ROOT"/analyzer/*/*.c | grep -v '/cp_main\.c$')
INC="-I$ROOT/include"
for d in "$ROOT"/analyzer "$ROOT"/analyzer/*/; do INC="$INC -I${d%/}"; done
BIN="$B/fuzz/fuzz_report"
# shellcheck disable=SC2086
"$CLANG" -std=gnu11 -O1 -g -D_GNU_SOURCE $INC -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -fno-omit-frame-pointer $SRC "$ROOT/tests/fuzz/fuzz_report.c" \
    "$ZSTD_A" -ldw -lelf -ldl -lpthread -lm -o "$BIN" || die "clang build failed"

show() {
    grep -B2 -A40 'ERROR\|runtime error' "$1" | head -n 80
    for c in "$W"/crash-* "$W"/timeout-* "$W"/leak-* "$W"/oom-*; do
        [ -f "$c" ] && echo "input kept: $c"
    done
}
# Memory the analyzer keeps for the whole run (symbolizer caches) is no leak.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
set -- "$ROOT"/tests/fuzz/report_regress/*
if [ -f "$1" ]; then
    "$BIN" -timeout=30 -rss_limit_mb=4096 "$@" >"$W/regress.log" 2>&1 ||
        { show "$W/regress.log"; die "a regression input fails again"; }
    echo "regressions: $# inputs pass"
fi
cd "$W" || die "cd $W"
# Inside the runner's 900 s per long test: a slow build (a loaded machine)
# shortens the default run rather than failing it.
if [ -z "${FUZZ_SECONDS:-}" ]; then
    left=$((840 - ($(date +%s) - t0)))
    [ $left -lt $secs ] && secs=$((left > 20 ? left : 20))
fi
"$BIN" -max_total_time="$secs" -timeout=30 -rss_limit_mb=4096 -max_len=1048576 \
    -print_final_stats=1 -artifact_prefix="$W/" "$W/corpus" >"$W/fuzz.log" 2>&1
rc=$?
grep -E '^Done [0-9]+ runs|stat::number_of_executed_units' "$W/fuzz.log"
if [ $rc -ne 0 ]; then
    show "$W/fuzz.log"
    die "libFuzzer found a problem (exit $rc)"
fi
echo "report_fuzz: ${secs}s without a finding"
