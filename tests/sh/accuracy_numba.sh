#!/bin/sh
# accuracy_numba: the accuracy suite's numba workload
# (tests/gpu/accuracy/numba_unpinned.py) on the fake driver, through the
# stand-in numba (tests/py/standins: numba-cuda's copies on a device
# array's own stream, pinned arrays from cuMemHostAlloc) and the stand-in
# numpy, installed as site-packages are.  Its clean run must have no
# warning or error (every copy's host side pinned); its bug run exactly one,
# pageable-async-copy at the line its `# EXPECT:` marker names.
. "$ROOT/tests/sh/lib.sh"
need_py_fake
PROG="$ROOT/tests/gpu/accuracy/numba_unpinned.py"
SITE="$TMP/venv/lib/python3/site-packages"
mkdir -p "$SITE" && cp -R "$ROOT/tests/py/standins/." "$SITE/" || die "cannot install the stand-ins"
L=$(grep -n "# EXPECT: pageable-async-copy" "$PROG" | cut -d: -f1)
[ -n "$L" ] || die "no marker in $PROG"
for v in clean bug; do
    env -u CUPROBE_FRAMEWORK_SINK PYTHONPATH="$ROOT/scripts/python:$SITE" \
        PYTHONDONTWRITEBYTECODE=1 LD_PRELOAD="$SHIM" LD_LIBRARY_PATH="$FAKE_DIR" \
        CUPROBE_OUTPUT="$TMP/$v.trace" FAKECUDA_MEM=1G FAKECUDA_GPA_NEWER=1 \
        python3 "$PROG" "$v" >"$TMP/$v.out" 2>"$TMP/$v.err" ||
        { cat "$TMP/$v.err"; die "$v: the workload failed"; }
    "$ANA" report --no-progress "$TMP/$v.trace" >"$TMP/$v.report" 2>&1 || die "$v: no report"
done
expect_grep "^done " "$TMP/clean.out"
expect_no_grep "^(error|warning) " "$TMP/clean.report"
expect_grep "^warning +\[pageable-async-copy\] 200 async copies" "$TMP/bug.report"
expect_grep "^ +200x .*numba_unpinned\.py:$L \(<module>\) +\[pageable host to device\]" "$TMP/bug.report"
[ "$(grep -c -E '^(error|warning) ' "$TMP/bug.report")" -eq 1 ] ||
    { cat "$TMP/bug.report"; die "bug: a warning or error besides the planted one"; }
echo "ok"
