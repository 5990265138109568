#!/bin/sh
# shim_exit_status.sh - with the shim PRELOADED (as `cuprobe run` does), the
# END record carries how the process ended and its real status: exit(7),
# return 9 from main, Python's sys.exit(5), _exit(3), SIGTERM; and the report
# says so in text and JSON.  (Linking the writer into a test binary instead
# of preloading it hides the order in which exit handlers run.)
. "$ROOT/tests/sh/lib.sh"
export LD_LIBRARY_PATH="$FAKE_DIR"
P="$B/tests/progs/shim_lifecycle"
[ -x "$P" ] || die "$P not built"
# case NAME EXPECTED_RC END_REGEX CMD...
check() {
    name=$1 want=$2 endre=$3; shift 3
    mkdir -p "$TMP/$name"
    CUPROBE_OUTPUT="$TMP/$name/t-%p.trace" CUPROBE_ROOT_PID=$$ LD_PRELOAD="$PRELOAD" "$@" \
        >/dev/null 2>&1
    rc=$?
    [ "$rc" = "$want" ] || die "$name: the program's status changed: $rc, expected $want"
    set -- "$TMP/$name"/*.trace
    [ -f "$1" ] || die "$name: no trace written"
    "$ANA" dump "$1" >"$TMP/$name.txt" 2>&1
    expect_grep "^END .*$endre" "$TMP/$name.txt"
}
check exit7 7 'reason=exit status=7' "$P" exit 7
check return9 9 'reason=exit status=9' "$P" return 9
check exit0 0 'reason=exit status=0' "$P" exit 0
check _exit3 3 'reason=_exit status=3' "$P" _exit
check term 143 'reason=signal status=15' "$P" term
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
if [ -n "$PY" ] && [ -x "$PY" ]; then
    # The root process writes a trace even without CUDA (CUPROBE_ROOT_PID).
    # The interpreter itself, not a wrapper script that execs it (pyenv).
    mkdir -p "$TMP/py"
    if [ -n "${CUPROBE_TEST_PRELOAD:-}" ]; then
        # Sanitizer runs: the ASan runtime must come first in LD_PRELOAD,
        # which the front end (shim first) does not arrange; preload as it does.
        CUPROBE_OUTPUT="$TMP/py/t-%p.trace" SHIMS="$CUPROBE_TEST_PRELOAD:$SHIM" PY="$PY" \
            sh -c 'CUPROBE_ROOT_PID=$$ LD_PRELOAD=$SHIMS exec "$PY" -c "import sys; sys.exit(5)"'
    else
        CUPROBE_OUTPUT="$TMP/py/t-%p.trace" "$CUPROBE" run -- "$PY" -c 'import sys; sys.exit(5)'
    fi
    rc=$?
    [ $rc = 5 ] || die "python: status $rc, expected 5"
    set -- "$TMP"/py/*.trace
    "$ANA" dump "$1" >"$TMP/py.txt" 2>&1
    expect_grep '^END .*reason=exit status=5' "$TMP/py.txt"
    "$ANA" report --json --no-symbolize "$1" >"$TMP/py.json" 2>&1
    expect_grep '"exit_status": ?5' "$TMP/py.json"
    "$ANA" report --no-symbolize "$1" >"$TMP/py.out" 2>&1
    expect_grep 'exit, status 5' "$TMP/py.out"
    expect_no_grep 'destructor' "$TMP/py.out"
else
    echo "python3 not found: the sys.exit case is not run"
fi
echo "exit status ok"
