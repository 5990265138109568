#!/bin/sh
# doctor: a driver call that hangs is cut off after --timeout and named; a
# driver that crashes is reported; doctor itself neither hangs nor dies.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
command -v "${CC:-gcc}" >/dev/null || skip "no C compiler"
mkdir -p "$TMP/hang"
"${CC:-gcc}" -shared -fPIC -o "$TMP/hang/libcuda.so.1" "$DR_FIX/hangcuda.c" || die "cannot build hangcuda"
use_tree gpu1
start=$(date +%s)
run_doctor hang LD_LIBRARY_PATH="$TMP/hang" --timeout 1
expect_verdict "FAIL at layer 2 (driver): cuInit(0) timed out after 1 s" 1
[ $(( $(date +%s) - start )) -lt 10 ] || die "doctor took too long"
run_doctor crash HANGCUDA_MODE=crash LD_LIBRARY_PATH="$TMP/hang"
expect_verdict "FAIL at layer 2 (driver): the driver probe crashed during cuInit(0)" 1
expect_grep 'killed by signal 11' "$out"
# a hanging interpreter is cut off too, and is only a warning
if [ -f "$FAKE_DIR/libcuda.so.1" ]; then
    printf '#!/bin/sh\nsleep 60\n' >"$TMP/slowpy" && chmod +x "$TMP/slowpy"
    start=$(date +%s)
    # 6 s, not 1: the same limit holds the fake driver's steps, which a
    # loaded machine can slow past 1 s; the interpreter sleeps 60.
    run_doctor slowpy LD_LIBRARY_PATH="$FAKE_DIR" FAKECUDA_DEVICES=1 --python "$TMP/slowpy" --timeout 6
    expect_verdict "PASS with 1 warning: python check did not run" 0
    expect_grep "! python check did not run: $TMP/slowpy timed out after 6 s" "$out"
    [ $(( $(date +%s) - start )) -lt 55 ] || die "doctor waited for the interpreter"
fi
echo ok
