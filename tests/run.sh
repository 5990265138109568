#!/bin/sh
# tests/run.sh - run the CI tests of one tier, several at a time, and print
# "N passed, N failed, N skipped" as the last line.
#
#   sh tests/run.sh [-j N] [--list]
#
# A test is either a unit binary ($B/tests/unit/test_*) or a shell script
# (tests/sh/*.sh).  Exit 0 = pass, 77 = skipped (says why on stdout),
# anything else = fail.  Each runs with a timeout (TEST_TIMEOUT, by default
# 300 s, 900 s for a test of the long tier); its output is kept in
# $B/test-logs/NAME.log and shown on failure.
# --list prints the names of the tests that would run.
#
# Tiers: a shell script with a line "# tier: long" belongs to the long tier
# (make check-long: timed fuzzing, benches); every other test to the quick
# tier (make test).  TIER=quick (the default), TIER=long or TIER=all.
# TESTS="pattern" selects by name (a substring), TESTS_SKIP="pattern ..."
# leaves out what matches any of them; both apply within the tier.
# -j N (or JOBS=N) runs N tests at a time, by default one per online CPU.
# A line per test is printed as it ends, so in the order they finish; the
# failures are listed again at the end with the tail of their logs.  Tests
# start longest first, by the times of their last run ($B/test-logs/.times).
B=${B:-build}
export B
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export ROOT
LOGS=$B/test-logs

# run_one NAME: run one test, write "RC SECONDS" to its .rc file and print
# its line.  xargs calls this script with --one, several at a time.
run_one() {
    name=$1
    case "$name" in
    unit/*) set -- "$B/tests/$name" ;;
    sh/*) set -- sh "$ROOT/tests/$name.sh" ;;
    esac
    log="$LOGS/$name.log"
    # The long tier builds with clang and fuzzes: more time by default.
    limit=${TEST_TIMEOUT:-300}
    [ -n "${TEST_TIMEOUT:-}" ] || [ "$1" != sh ] || ! grep -q '^# tier: long$' "$2" || limit=900
    t0=$(date +%s)
    timeout -k 10 "$limit" "$@" >"$log" 2>&1
    rc=$?
    secs=$(($(date +%s) - t0))
    # CPU seconds of the test and its children (this shell runs one test):
    # the quick tier's budget is CPU on a 2-core machine, not wall time alone.
    # (times in a command substitution would see the subshell's children.)
    times >"$log.cpu"
    cpu=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m");
                         t += a[1] * 60 + a[2] } printf "%.1f", t }' "$log.cpu")
    rm -f "$log.cpu"
    echo "$rc $secs $cpu" >"$LOGS/$name.rc"
    case $rc in
    0) echo "PASS  $name (${secs} s, ${cpu} s CPU)" ;;
    77) echo "SKIP  $name: $(tail -n 1 "$log")" ;;
    124) echo "FAIL  $name (timed out after $limit s)" ;;
    *) echo "FAIL  $name (exit $rc)" ;;
    esac
}
if [ "${1:-}" = "--one" ]; then
    run_one "$2"
    exit 0          # a failed test must not stop xargs
fi

jobs=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
list_only=0
while [ $# -gt 0 ]; do
    case "$1" in
    -j) jobs=${2:-}; shift; [ $# -gt 0 ] && shift ;;
    -j*) jobs=${1#-j}; shift ;;
    --list) list_only=1; shift ;;
    *) echo "usage: sh tests/run.sh [-j N] [--list]" >&2; exit 2 ;;
    esac
done
case "$jobs" in ''|*[!0-9]*|0) echo "run.sh: bad job count '$jobs'" >&2; exit 2 ;; esac
tier=${TIER:-quick}
case "$tier" in quick|long|all) ;; *) echo "run.sh: TIER must be quick, long or all" >&2; exit 2 ;; esac

# TIER NAME for every test there is (no process per test: --list is run
# by a test, three times).
all_tests() {
    for t in "$B"/tests/unit/test_*; do
        [ -x "$t" ] && [ -f "$t" ] || continue
        case "$t" in *.d|*.o) continue ;; esac
        echo "quick unit/${t##*/}"
    done
    long_=" $(grep -l '^# tier: long$' "$ROOT"/tests/sh/*.sh | tr '\n' ' ') "
    for t in "$ROOT"/tests/sh/*.sh; do
        n_=${t##*/}
        case "$n_" in lib*.sh) continue ;; esac
        [ -f "$t" ] || continue
        case "$long_" in *" $t "*) t_=long ;; *) t_=quick ;; esac
        echo "$t_ sh/${n_%.sh}"
    done
}
# The names of the tests of the tier that TESTS and TESTS_SKIP select.
selected() {
    all_tests | while read -r t_ name; do
        [ "$tier" = all ] || [ "$tier" = "$t_" ] || continue
        case "$name" in *${TESTS:-}*) ;; *) continue ;; esac
        for skip_ in ${TESTS_SKIP:-}; do
            case "$name" in *$skip_*) continue 2 ;; esac
        done
        echo "$name"
    done
}
if [ $list_only = 1 ]; then
    selected
    exit 0
fi

# pyenv's shims start a shell and pyenv itself for every python3 (about
# 0.3 s of CPU each, seconds on a loaded machine); the tests start python3
# hundreds of times, so they use the interpreter the shim resolves to.
case "$(command -v python3 2>/dev/null)" in
*/shims/python3)
    py_=$(pyenv which python3 2>/dev/null) && [ -x "$py_" ] &&
        PATH="$(dirname "$py_"):$PATH" && export PATH ;;
esac
mkdir -p "$LOGS/unit" "$LOGS/sh"
touch "$LOGS/.times"
sel="$LOGS/.selected.$$"
trap 'rm -f "$sel" "$LOGS/.times.$$" "$LOGS/.times.new.$$"' EXIT
# Longest first, by the last run's times; a test never timed goes first.
selected | awk 'FILENAME != "-" { s[$2] = $1; next }
                { print ($1 in s ? s[$1] : 999999), $1 }' "$LOGS/.times" - |
    sort -k1,1nr -k2,2 | awk '{ print $2 }' >"$sel"

for name in $(cat "$sel"); do rm -f "$LOGS/$name.rc"; done
[ ! -s "$sel" ] || xargs -n 1 -P "$jobs" sh "$0" --one <"$sel"

pass=0; fail=0; skip=0; failed=""
: >"$LOGS/.times.$$"
for name in $(sort "$sel"); do
    if [ -f "$LOGS/$name.rc" ]; then read -r rc secs cpu <"$LOGS/$name.rc"; else rc=none; secs=; fi
    case $rc in
    0) pass=$((pass + 1)) ;;
    77) skip=$((skip + 1)) ;;
    *)  fail=$((fail + 1)); failed="$failed $name"
        echo "--- FAIL  $name (exit $rc): the end of $LOGS/$name.log"
        tail -n 30 "$LOGS/$name.log" 2>/dev/null | sed 's/^/      /' ;;
    esac
    [ -z "$secs" ] || echo "$secs $name" >>"$LOGS/.times.$$"
done
# The times of this run, and those of the tests it left out.
awk 'FILENAME == ARGV[1] { seen[$2] = 1; print; next } !($2 in seen)' "$LOGS/.times.$$" \
    "$LOGS/.times" >"$LOGS/.times.new.$$" && mv "$LOGS/.times.new.$$" "$LOGS/.times"
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
