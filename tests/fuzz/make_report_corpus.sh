#!/bin/sh
# make_report_corpus.sh - regenerate tests/fuzz/report_corpus/: every
# scenario of tests/scenarios/ run under the shim on the fake driver, the
# records of all the traces it left (decompressed, one process after the
# other) as one seed NAME.raw.  Needs a built tree and the zstd command.
#   sh tests/fuzz/make_report_corpus.sh [BUILD_DIR]
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-$ROOT/build}" && pwd)
OUT="$ROOT/tests/fuzz/report_corpus"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$OUT"
for p in "$B"/tests/scenarios/*; do
    [ -x "$p" ] && [ -f "$p" ] || continue
    n=$(basename "$p")
    mkdir -p "$T/$n"
    (cd "$T/$n" && LD_LIBRARY_PATH="$B/fakecuda" CUPROBE_OUTPUT="$T/$n/t-%p.trace" \
        LD_PRELOAD="$B/libcuprobe.so" timeout 20 "$p" >/dev/null 2>&1) || true
    ls "$T/$n"/*.trace >/dev/null 2>&1 || continue
    for f in "$T/$n"/*.trace; do tail -c +17 "$f" | zstd -dq; done >"$OUT/$n.raw"
done
# The golden two-process trace as one seed (the fuzzer splits at HEADER).
for f in "$ROOT"/tests/golden/report_fork_*.trace; do tail -c +17 "$f" | zstd -dq; done \
    >"$OUT/golden_fork.raw"
ls "$OUT" | wc -l
