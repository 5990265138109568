#!/bin/sh
# writer_exec.sh - exec: EXEC record and END(exec) before the new image;
# a failed exec records the errno and continues into a new file.
. "$ROOT/tests/sh/lib.sh"
HELPER="$B/tests/unit/test_writer_proc"
[ -x "$HELPER" ] && [ -x "$ANA" ] || die "helper or analyzer not built"

mkdir "$TMP/e"
CUPROBE_OUTPUT="$TMP/e/%p.trace" "$HELPER" exec /bin/true || die "exec /bin/true failed"
f=$(ls "$TMP"/e/*.trace)
"$ANA" dump "$f" >"$TMP/d" || die "exec trace incomplete"
expect_grep '^EXEC .* path="/bin/true" errno_after=0$' "$TMP/d"
tail -n 1 "$TMP/d" | grep -q '^END .* reason=exec ' || die "last record is not END(exec)"

mkdir "$TMP/f"
CUPROBE_OUTPUT="$TMP/f/%p.trace" "$HELPER" exec-fail >"$TMP/out" || die "exec-fail mode failed"
[ "$(ls "$TMP/f" | wc -l)" -eq 2 ] || { ls "$TMP/f"; die "expected the first file and a new one"; }
first=$(ls "$TMP"/f/*.trace | grep -v '\.1\.trace$')
second=$(ls "$TMP"/f/*.1.trace)
"$ANA" dump "$first" >"$TMP/d1" || die "first file incomplete"
"$ANA" dump "$second" >"$TMP/d2" || die "second file incomplete"
expect_grep '^END .* reason=exec ' "$TMP/d1"
expect_grep '^EXEC .* errno_after=2$' "$TMP/d2"
expect_grep '^END .* reason=exit status=0 ' "$TMP/d2"
[ "$(grep -c '^CALL ' "$TMP/d2")" -eq 100 ] || die "the new file should hold the 100 later calls"
# A root image that only execs leaves no file of its own; the image it
# becomes writes the trace under the plain name.
mkdir "$TMP/q"
CUPROBE_OUTPUT="$TMP/q/%p.trace" sh -c 'CUPROBE_ROOT_PID=$$ exec "$0" exec-quiet "$0" basic 5' \
    "$HELPER" >/dev/null || die "exec-quiet failed"
[ "$(ls "$TMP/q" | wc -l)" -eq 1 ] || { ls "$TMP/q"; die "expected one trace for the exec chain"; }
"$ANA" dump "$TMP"/q/*.trace >"$TMP/d" || die "exec chain trace incomplete"
expect_grep '^HEADER .* root=1 .*argv\[1\]="basic"' "$TMP/d"
[ "$(grep -c '^CALL ' "$TMP/d")" -eq 5 ] || die "exec chain: calls missing"
ls "$TMP"/q/*.1.trace >/dev/null 2>&1 && die "the final image should have the plain name"
echo "writer_exec: ok"
