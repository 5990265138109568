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
die() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 77; }
# expect_grep PATTERN FILE: fail with the file shown when PATTERN is absent
expect_grep() { grep -q -E -- "$1" "$2" || { echo "--- $2"; cat "$2"; die "expected /$1/ in $2"; }; }
expect_no_grep() { ! grep -q -E -- "$1" "$2" || { echo "--- $2"; cat "$2"; die "did not expect /$1/ in $2"; }; }
