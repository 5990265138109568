#!/bin/bash
# tests/gpu/code_watcher.sh - the Python call-site memo on a GPU
# machine with CPython 3.12+ and torch: runs tests/gpu/code_watcher_prog.py
# under `cuprobe run` with CUPROBE_LOG=2 and checks that
#  1. the companion registered the code watcher ("python sites: code
#     watcher on" in the shim's log);
#  2. the memo was hit: the exit line "python sites: N hits without
#     validation, M validations, ..." has N > 0 (nearly all of the steady
#     loop's lookups);
#  3. every churn iteration's allocation (new code objects at reused addresses)
#     names CPython's own frames (tests/py/check_pystack.py on the dump).
# Then once more with CUPROBE_FRAMEWORK=0 (no companion, so no watcher: the
# old path, every hit validated) for the steady loop's ns per pair.
# Output in $OUT (validation-out): code_watcher*.{log,dump,check}; the last
# line says PASS or FAIL.
OUT=${OUT:-validation-out}
mkdir -p "$OUT" || exit 1
CP="$PWD/build/cuprobe"
ANA="$PWD/build/cuprobe-analyze"
fail=0
run() {     # run NAME [ENV...]
    name=$1; shift
    rm -f "$OUT/$name".*.trace "$OUT/$name".json "$OUT/$name".log
    env "$@" CUPROBE_LOG=2 CP_MANIFEST="$OUT/$name.json" \
        "$CP" run -o "$OUT/$name.%p.trace" -- python3 tests/gpu/code_watcher_prog.py \
        >"$OUT/$name.log" 2>&1 || { echo "FAIL: $name exited $?"; fail=1; }
    grep -E "^python |^steady|^churn|code watcher|python sites" "$OUT/$name.log"
}
echo "=== with the code watcher"
run code_watcher
grep -q "python sites: code watcher on" "$OUT/code_watcher.log" ||
    { echo "FAIL: the code watcher was not registered"; fail=1; }
grep -Eq "python sites: [1-9][0-9]* hits without validation" "$OUT/code_watcher.log" ||
    { echo "FAIL: no call-site lookup skipped validation"; fail=1; }
"$ANA" dump "$OUT"/code_watcher.*.trace >"$OUT/code_watcher.dump" 2>&1 ||
    { echo "FAIL: dump"; fail=1; }
if python3 tests/py/check_pystack.py "$OUT/code_watcher.dump" "$OUT/code_watcher.json" \
        >"$OUT/code_watcher.check" 2>&1; then
    echo "churn: $(grep -c '^ok' "$OUT/code_watcher.check") allocations name CPython's own frames"
else
    grep -m 5 FAIL "$OUT/code_watcher.check"; echo "FAIL: wrong call sites (see $OUT/code_watcher.check)"
    fail=1
fi
echo "=== without it (CUPROBE_FRAMEWORK=0: every hit validated)"
run code_watcher_off CUPROBE_FRAMEWORK=0
grep -Eq "python sites: 0 hits without validation" "$OUT/code_watcher_off.log" ||
    { echo "FAIL: hits skipped validation without the watcher"; fail=1; }
[ $fail = 0 ] && echo "PASS code_watcher" || echo "FAIL code_watcher"
