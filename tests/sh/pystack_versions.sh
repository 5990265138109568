#!/bin/sh
# pystack_versions.sh - run the GIL-free Python walker test
# (build/tests/unit/test_pystack_walk) against the CPythons of lib.sh's
# pythons (the oldest and the newest in the quick tier, every one in
# sh/python_versions.sh).  3.11-3.13 must match CPython's own
# frames exactly; older ones must be refused cleanly (one log line, no
# frames).  Skips when no interpreter with a shared libpython is found.
. "$ROOT/tests/sh/lib.sh"
BIN="$B/tests/unit/test_pystack_walk"
[ -x "$BIN" ] || skip "$BIN not built"
ran=0
pythons >"$TMP/pythons"
while read -r p id; do
    minor=$("$p" -c 'import sys; print(sys.version_info[1])' </dev/null)
    if [ "$minor" -ge 11 ] && [ "$minor" -le 13 ]; then
        CUPROBE_TEST_PYTHON=$p "$BIN" </dev/null >"$TMP/out" 2>&1; rc=$?
    else
        CUPROBE_TEST_PYTHON=$p CUPROBE_TEST_EXPECT_OFF=1 "$BIN" </dev/null >"$TMP/out" 2>&1; rc=$?
    fi
    case $rc in
    0) echo "ok    $id"; ran=$((ran + 1)) ;;
    77) echo "skip  $id: $(tail -n 1 "$TMP/out")" ;;
    *) cat "$TMP/out"; die "walker test failed for $p ($id)" ;;
    esac
done <"$TMP/pythons"
[ $ran -gt 0 ] || skip "no CPython with a shared libpython found"
echo "walker checked on $ran interpreters"
