#!/bin/sh
# python_versions.sh - the tests that depend on the CPython version
# (pystack_versions, pystack_e2e, framework_invisible) with every
# interpreter found here, not only the oldest and the newest that the quick
# tier runs them with (lib.sh's pythons).
# tier: long
. "$ROOT/tests/sh/lib.sh"
for t in pystack_versions pystack_e2e framework_invisible; do
    CUPROBE_TEST_ALL_PYTHONS=1 sh "$ROOT/tests/sh/$t.sh" >"$TMP/$t.log" 2>&1
    rc=$?
    case $rc in
    0) echo "ok    $t: $(tail -n 1 "$TMP/$t.log")" ;;
    77) echo "skip  $t: $(tail -n 1 "$TMP/$t.log")" ;;
    *) cat "$TMP/$t.log"; die "$t failed with every interpreter (exit $rc)" ;;
    esac
done
