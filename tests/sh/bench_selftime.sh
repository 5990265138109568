#!/bin/sh
# bench_selftime.sh - the -DCP_SELFTIME benchmark build (make selftime), whose
# counters time the recording path inside a real program, still builds
# and counts right: every wrapped call once with its wrapper and driver time,
# and while recording (not while paused) each part of the path once per event.
# Compiled only by this test: without it the instrumentation would rot.
# tier: long
. "$ROOT/tests/sh/lib.sh"
need_py_fake
[ -z "${CUPROBE_TEST_PRELOAD:-}" ] || skip "a plain build's variant; not under a sanitizer"
make -s -C "$ROOT" B="$B" selftime >"$TMP/make.log" 2>&1 || { cat "$TMP/make.log"; die "make selftime failed"; }
ST="$B/st/bin/libcuprobe.so"
LD_PRELOAD="$ST" LD_LIBRARY_PATH="$FAKE_DIR" CUPROBE_OUTPUT="$TMP/t-%p.trace" \
    python3 "$ROOT/tests/py/selftime_check.py" 300 >"$TMP/out" 2>"$TMP/err" ||
    { cat "$TMP/out" "$TMP/err"; die "selftime_check.py failed"; }
# STATE NAME CALLS: the row's call count must be exactly CALLS
row() {
    got=$(awk -v s="$1" -v n="$2" '$1 == s && $2 == n { print $3 }' "$TMP/out")
    [ "$got" = "$3" ] || { cat "$TMP/out"; die "$1 $2: $got calls, expected $3"; }
}
row recording cuMemAllocAsync 300
row recording cuMemFreeAsync 300
row paused cuMemAllocAsync 300
row paused cuMemFreeAsync 300
row recording part:context 600
row recording part:map 600
row recording part:record 600
row recording part:call-site 300
expect_no_grep "^paused part:" "$TMP/out"
# The wrapper's time holds the driver's: never less.
awk '$2 !~ /^part:/ && $4 < $5 { print; bad = 1 } END { exit bad }' "$TMP/out" ||
    die "a wrapper timed shorter than its driver call"
echo "selftime counts: $(tr '\n' ';' <"$TMP/out")"
