#!/bin/sh
# fuzz_replay.sh - the fuzz regression corpus, each input run once, no
# fuzzing: the inputs that once found a bug (tests/fuzz/report_regress/),
# the report fuzzer's seeds (tests/fuzz/report_corpus/, tests/golden/*.trace)
# through the report target (tests/fuzz/fuzz_report.c: report --json, report
# and dump), and the reader's seeds (tests/fuzz/corpus/) through its target
# (fuzz_decode.c).  Each target is linked with tests/fuzz/fuzz_driver.c and
# the analyzer objects of $B, so a sanitizer build (make check-san) runs the
# corpus under its sanitizers.  The timed fuzzing with libFuzzer is
# report_fuzz.sh and decode_fuzz.sh (make check-long).
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
[ -x "$ANA" ] || die "analyzer not built: $ANA"
# The analyzer's objects but its main(), and none left by a removed source.
OBJ=
for o in "$B"/analyzer/*.o "$B"/analyzer/*/*.o; do
    rel=${o#"$B"/}
    [ -f "$ROOT/${rel%.o}.c" ] && [ "$rel" != analyzer/cp_main.o ] && OBJ="$OBJ $o"
done
[ -n "$OBJ" ] || die "no analyzer objects in $B/analyzer"
INC="-I$ROOT/include"
for d in "$ROOT"/analyzer "$ROOT"/analyzer/*/; do INC="$INC -I${d%/}"; done
ZSTD_A=$(${CC:-cc} -print-file-name=libzstd.a)
[ -f "$ZSTD_A" ] || ZSTD_A=-lzstd
# The objects' sanitizers, which the targets and the link need too; a
# finding of UBSan stops the run (the build lets it recover).
syms=$(nm $OBJ 2>/dev/null)
san_=
case "$syms" in *__asan_*) san_=address ;; *__tsan_*) san_=thread ;; esac
case "$syms" in *__ubsan_*) san_=${san_:+$san_,}undefined ;; esac
SAN=${san_:+-fsanitize=$san_}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# Memory the analyzer keeps for the whole run (symbolizer caches) is no leak.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
cd "$TMP" || die "cd $TMP"

# build NAME: link tests/fuzz/NAME.c with the driver
build() {
    # shellcheck disable=SC2086
    ${CC:-cc} -std=gnu11 -O1 -g -D_GNU_SOURCE $INC $SAN -fno-omit-frame-pointer \
        -o "$TMP/$1" "$ROOT/tests/fuzz/$1.c" "$ROOT/tests/fuzz/fuzz_driver.c" $OBJ "$ZSTD_A" \
        -ldw -lelf -ldl -lpthread -lm || die "cannot build $1"
}
# replay NAME INPUT...: every input once; on a crash the input is named
replay() {
    name_=$1; shift
    "$TMP/$name_" -t 0 "$@" >"$TMP/$name_.log" 2>&1 || {
        tail -n 40 "$TMP/$name_.log"
        [ -f fuzz-current.bin ] && echo "input (hex):" && od -A d -t x1 fuzz-current.bin | head -n 20
        die "$name_: an input of the corpus fails"
    }
    cat "$TMP/$name_.log"
}
build fuzz_report
build fuzz_decode
replay fuzz_report "$ROOT"/tests/fuzz/report_regress "$ROOT"/tests/fuzz/report_corpus \
    "$ROOT"/tests/golden/*.trace
replay fuzz_decode "$ROOT"/tests/fuzz/corpus
echo "fuzz_replay: ok"
