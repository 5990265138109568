#!/bin/sh
# framework_invisible.sh - the Python companion is invisible to the program
# (tests/py/companion_invisible.py: the excepthooks stay the interpreter's
# own, uncaught exceptions are still recorded, tracebacks of a failing
# sitecustomize or framework import hold no frame of ours), with every
# CPython 3.8 or later found here (lib.sh's pythons: the oldest and the
# newest in the quick tier, every one in sh/python_versions.sh).
. "$ROOT/tests/sh/lib.sh"
ran=0
pythons 8 >"$TMP/pythons"
while read -r p id; do
    "$p" "$ROOT/tests/py/companion_invisible.py" </dev/null >"$TMP/out" 2>&1 ||
        { cat "$TMP/out"; die "the companion is visible with $p ($id)"; }
    echo "ok    $id"
    ran=$((ran + 1))
done <"$TMP/pythons"
[ $ran -gt 0 ] || skip "no CPython 3.8 or later found"
echo "companion invisible with $ran interpreters"
