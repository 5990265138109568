#!/bin/sh
# report_fifo_module.sh - a trace whose MODULE paths name a FIFO (or a
# directory, or /dev/zero) must not hang or confuse the symbolizer: the
# report finishes, with module+offset frames.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
GEN="$B/tests/unit/test_decode"
[ -x "$ANA" ] && [ -x "$GEN" ] || die "analyzer or test_decode not built"
command -v python3 >/dev/null 2>&1 || skip "python3 not found (rewrites the module paths)"
mkfifo "$TMP/fifo" || skip "mkfifo failed"
mkdir "$TMP/dir"
for target in "$TMP/fifo" "$TMP/dir" /dev/zero; do
    python3 "$ROOT/tests/sh/module_path.py" "$ROOT/tests/fuzz/report_corpus/leak.raw" \
        "$TMP/m.raw" "$target" ||
        die "cannot rewrite the seed"
    "$GEN" pack "$TMP/m.raw" "$TMP/m.trace" || die "pack failed"
    timeout 20 "$ANA" report "$TMP/m.trace" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    [ $rc -eq 124 ] && die "report hangs on a trace whose module path is $target"
    [ $rc -eq 0 ] || { cat "$TMP/err"; die "report on module path $target: exit $rc"; }
    expect_grep '\[leak\]' "$TMP/out"
    echo "ok   module path $target"
done
echo "fifo module ok"
