# tests/sh/lib.sh - helpers for shell tests; source it: . "$ROOT/tests/sh/lib.sh"
# Provides: $B (build dir), $SHIM, $FAKE_DIR, $ANA (analyzer), $CUPROBE (front end),
# a fresh $TMP removed at exit, and die/expect helpers.
set -u
B=${B:-build}
case "$B" in /*) ;; *) B="$ROOT/$B" ;; esac
SHIM="$B/libcuprobe.so"
# What a test preloads: the shim, behind a sanitizer runtime when
# CUPROBE_TEST_PRELOAD names one (make check-san).
PRELOAD="${CUPROBE_TEST_PRELOAD:+$CUPROBE_TEST_PRELOAD }$SHIM"
FAKE_DIR="$B/fakecuda"
ANA="$B/cuprobe-analyze"
CUPROBE="$B/cuprobe"
TMP=$(mktemp -d /tmp/cuprobe-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# die also kills the test's background jobs: a program a failed test left
# holding (writer_nospace's `disk_full ... hold`) would otherwise spin on.
# (dash lists no jobs inside $(...), hence the file.)
die() {
    echo "FAIL: $*"
    jobs -p >"$TMP/.jobs" 2>/dev/null && kill $(cat "$TMP/.jobs") 2>/dev/null
    exit 1
}
skip() { echo "$*"; exit 77; }
# expect_grep PATTERN FILE: fail with the file shown when PATTERN is absent
expect_grep() { grep -q -E -- "$1" "$2" || { echo "--- $2"; cat "$2"; die "expected /$1/ in $2"; }; }
expect_no_grep() { ! grep -q -E -- "$1" "$2" || { echo "--- $2"; cat "$2"; die "did not expect /$1/ in $2"; }; }
# need_py_fake: skip unless python3, the shim, the fake driver and the
# analyzer are there (tests that trace Python programs on the fake driver).
need_py_fake() {
    command -v python3 >/dev/null 2>&1 || skip "no python3"
    [ -f "$SHIM" ] || skip "no $SHIM"
    [ -f "$FAKE_DIR/libcuda.so.1" ] || skip "fake driver not built"
    [ -x "$ANA" ] || skip "no $ANA"
}
# cthread_lib [SYMBOL]: tests/py/cthread.c as $TMP/libcthread.so, a library
# whose threads start in C; CUPROBE_TEST_CTHREAD_SO is a prebuilt one (a
# machine with no compiler), used when it exports SYMBOL.  Skips when there
# is neither.
cthread_lib() {
    if [ -n "${CUPROBE_TEST_CTHREAD_SO:-}" ] && { [ -z "${1:-}" ] ||
        nm -D "$CUPROBE_TEST_CTHREAD_SO" 2>/dev/null | grep -q " $1\$"; }; then
        cp "$CUPROBE_TEST_CTHREAD_SO" "$TMP/libcthread.so" || die "cannot copy $CUPROBE_TEST_CTHREAD_SO"
        return
    fi
    command -v "${CC:-cc}" >/dev/null || skip "no C compiler (${CC:-cc}) for tests/py/cthread.c"
    "${CC:-cc}" -shared -fPIC -o "$TMP/libcthread.so" "$ROOT/tests/py/cthread.c" \
        -L"$FAKE_DIR" -lcuda -lpthread || die "cannot build tests/py/cthread.c"
}
# py_traced NAME [VAR=VALUE...] -- SCRIPT ARGS...: run python3 SCRIPT under
# the shim on the fake driver (1 GiB) with the companion and the stand-in
# frameworks; trace in $TMP/NAME.trace, stdout/stderr in $TMP/NAME.out/.err,
# exit status in $TMP/NAME.rc.  VALUEs must not hold spaces.
py_traced() {
    name_=$1; shift
    set -- env -u CUPROBE_FRAMEWORK_SINK "$@"
    env_=""
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do env_="$env_ $1"; shift; done
    [ $# -gt 0 ] && shift
    # shellcheck disable=SC2086
    $env_ PYTHONPATH="$ROOT/scripts/python:$ROOT/tests/py/standins" PYTHONDONTWRITEBYTECODE=1 \
        LD_PRELOAD="$SHIM" LD_LIBRARY_PATH="$FAKE_DIR" CUPROBE_OUTPUT="$TMP/$name_.trace" \
        FAKECUDA_MEM=1G python3 "$@" >"$TMP/$name_.out" 2>"$TMP/$name_.err"
    echo $? >"$TMP/$name_.rc"
}
# wait_line PATTERN FILE PID TRIES WHAT: poll FILE every 0.1 s, at most
# TRIES times, until it holds PATTERN; else kill -9 PID and fail with WHAT.
wait_line() {
    i_=0
    while ! grep -q -- "$1" "$2" 2>/dev/null; do
        i_=$((i_ + 1))
        [ $i_ -lt "$4" ] || { kill -9 "$3"; die "$5"; }
        sleep 0.1
    done
}
# small_tmpfs DIR SIZE: mount a tmpfs of SIZE (mount's size=) at DIR, made
# and unmounted at exit; as root, or else the test runs itself again in a
# user namespace (unshare -rm), or is skipped, saying so.
small_tmpfs() {
    mkdir -p "$1"
    if ! mount -t tmpfs -o size="$2" cuprobe-test "$1" 2>/dev/null; then
        if [ -z "${CP_TMPFS_NS:-}" ] && unshare -rm true 2>/dev/null; then
            rm -rf "$TMP"
            CP_TMPFS_NS=1 exec unshare -rm sh "$0"
        fi
        skip "cannot mount a $2 tmpfs here (not root, no user namespaces): not tested"
    fi
    trap "umount '$1' 2>/dev/null; rm -rf '$TMP'" EXIT
}
# pythons [MIN MAX]: every CPython 3.MIN to 3.MAX found here (all 3.x
# without arguments), one line each, "PATH ID" (ID: version and
# installation, each once): $CUPROBE_TEST_PYTHONS (space-separated
# interpreter paths), Debian's /usr/bin/python3.X, /usr/local's, pyenv's.
# The quick tier keeps the oldest and the newest minor version found (the
# two ends of every version-dependent path); the long tier (TIER=long or
# all, as sh/python_versions.sh runs them) and CUPROBE_TEST_ALL_PYTHONS=1
# keep every one.
pythons() {
    seen_=""
    for p_ in ${CUPROBE_TEST_PYTHONS:-} /usr/bin/python3.[0-9]* /usr/local/bin/python3.[0-9]* \
              "${HOME:-/root}"/.pyenv/versions/3.*/bin/python3.[0-9]*; do
        case "$p_" in *-config|*[!0-9.]) continue ;; esac
        [ -x "$p_" ] || continue
        id_=$("$p_" -c 'import sys; print("%d %d.%d.%d@%s" % ((sys.version_info[1],) + sys.version_info[:3] + (sys.base_prefix,)))' 2>/dev/null) || continue
        minor_=${id_%% *}; id_=${id_#* }
        [ "$minor_" -ge "${1:-0}" ] && [ "$minor_" -le "${2:-99}" ] || continue
        case " $seen_ " in *" $id_ "*) continue ;; esac
        seen_="$seen_ $id_"
        echo "$minor_ $p_ $id_"
    done | if [ "${CUPROBE_TEST_ALL_PYTHONS:-0}" = 1 ] || [ "${TIER:-quick}" != quick ]; then
        cut -d' ' -f2-
    else
        sort -s -n -k1,1 | awk '{ line[NR] = $0; m[NR] = $1 }
            END { for (i = 1; i <= NR; i++)
                      if (m[i] == m[1] && !lo++ || m[i] == m[NR] && m[NR] != m[1] && !hi++) {
                          sub(/^[0-9]+ /, "", line[i]); print line[i] } }'
    fi
}
