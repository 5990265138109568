#!/bin/sh
# tests/run.sh - run every CI test and print "N passed, N failed".
#
# A test is either a unit binary ($B/tests/unit/test_*) or a shell script
# (tests/sh/*.sh).  Exit 0 = pass, 77 = skipped (says why on stdout),
# anything else = fail.  Each runs with a timeout, its output is kept in
# $B/test-logs/ and shown on failure.  TESTS="pattern" selects by name,
# TESTS_SKIP="pattern ..." leaves out what matches any of them.
B=${B:-build}
export B
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export ROOT
LOGS=$B/test-logs
# pyenv's shims start a shell and pyenv itself for every python3 (about
# 0.3 s of CPU each, seconds on a loaded machine); the tests start python3
# hundreds of times, so they use the interpreter the shim resolves to.
case "$(command -v python3 2>/dev/null)" in
*/shims/python3)
    py_=$(pyenv which python3 2>/dev/null) && [ -x "$py_" ] &&
        PATH="$(dirname "$py_"):$PATH" && export PATH ;;
esac
mkdir -p "$LOGS"
pass=0; fail=0; skip=0; failed=""
run_one() {
    name=$1; shift
    case "$name" in *${TESTS:-}*) ;; *) return ;; esac
    for skip_ in ${TESTS_SKIP:-}; do
        case "$name" in *$skip_*) return ;; esac
    done
    log="$LOGS/$name.log"
    mkdir -p "$(dirname "$log")"
    timeout "${TEST_TIMEOUT:-300}" "$@" >"$log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1)); echo "PASS  $name"
    elif [ $rc -eq 77 ]; then
        skip=$((skip + 1)); echo "SKIP  $name: $(tail -n 1 "$log")"
    else
        fail=$((fail + 1)); failed="$failed $name"
        echo "FAIL  $name (exit $rc)"; tail -n 30 "$log" | sed 's/^/      /'
    fi
}
for t in "$B"/tests/unit/test_*; do
    [ -x "$t" ] || continue
    run_one "unit/$(basename "$t")" "$t"
done
for t in "$ROOT"/tests/sh/*.sh; do
    case "$(basename "$t")" in lib*.sh) continue ;; esac
    [ -f "$t" ] || continue
    run_one "sh/$(basename "$t" .sh)" sh "$t"
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
