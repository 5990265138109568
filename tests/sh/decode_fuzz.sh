#!/bin/sh
# decode_fuzz.sh - fuzz the trace reader for a bounded time (FUZZ_SECONDS,
# default 20) under AddressSanitizer + UBSan: libFuzzer when clang supports
# -fsanitize=fuzzer, else the gcc driver (tests/fuzz/fuzz_driver.c).  The
# checked-in corpus is copied, never modified.
# tier: long
. "$ROOT/tests/sh/lib.sh"
secs=${FUZZ_SECONDS:-20}
ZSTD_A=$(${CC:-gcc} -print-file-name=libzstd.a)
[ -f "$ZSTD_A" ] || skip "libzstd.a not found"
SRC="$ROOT/analyzer/decode/cp_decode.c $ROOT/analyzer/decode/cp_decode_fields.c $ROOT/analyzer/decode/cp_names.c $ROOT/analyzer/decode/cp_decode_note.c $ROOT/analyzer/decode/cp_decode_ring.c $ROOT/analyzer/decode/cp_decode_defer.c $ROOT/analyzer/decode/cp_decode_window.c $ROOT/analyzer/util/cp_file.c $ROOT/tests/fuzz/fuzz_decode.c"
INC="-I$ROOT/include -I$ROOT/analyzer/util -I$ROOT/analyzer/decode"
OUT="$B/fuzz"
mkdir -p "$OUT" "$TMP/corpus"
cp "$ROOT"/tests/fuzz/corpus/* "$TMP/corpus/"
cd "$TMP" || die "cd"

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
if command -v clang >/dev/null 2>&1 &&
   echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' >t.c &&
   clang -fsanitize=fuzzer t.c -o t 2>/dev/null; then
    clang -std=gnu11 -O1 -g -D_GNU_SOURCE $INC -fsanitize=fuzzer $SAN $SRC "$ZSTD_A" -lpthread \
        -o "$OUT/fuzz_decode" || die "clang build failed"
    "$OUT/fuzz_decode" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$TMP/" "$TMP/corpus" >log 2>&1
    rc=$?
    tail -n 5 log
    if [ $rc -ne 0 ]; then
        grep -A30 'ERROR\|runtime error' log | head -n 60
        for c in "$TMP"/crash-* "$TMP"/timeout-* "$TMP"/leak-*; do
            [ -f "$c" ] && { echo "input $c:"; od -A d -t x1 "$c" | head -n 20; }
        done
        die "libFuzzer found a problem (exit $rc)"
    fi
else
    ${CC:-gcc} -std=gnu11 -O1 -g -D_GNU_SOURCE $INC $SAN $SRC "$ROOT/tests/fuzz/fuzz_driver.c" \
        "$ZSTD_A" -lpthread -o "$OUT/fuzz_driver" || die "gcc build failed"
    "$OUT/fuzz_driver" -t "$secs" "$TMP/corpus" >log 2>&1
    rc=$?
    tail -n 30 log
    if [ $rc -ne 0 ]; then
        [ -f fuzz-current.bin ] && od -A d -t x1 fuzz-current.bin | head -n 20
        die "fuzz driver found a problem (exit $rc)"
    fi
fi
echo "decode_fuzz: ${secs}s without a finding"
