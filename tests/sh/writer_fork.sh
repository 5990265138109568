#!/bin/sh
# writer_fork.sh - fork: the parent records FORK(child pid); a child that
# records nothing writes no file; a child that records writes its own
# complete file whose HEADER names the parent; a vfork child's exec leaves
# the parent's trace alone.
. "$ROOT/tests/sh/lib.sh"
HELPER="$B/tests/unit/test_writer_proc"
[ -x "$HELPER" ] && [ -x "$ANA" ] || die "helper or analyzer not built"

mkdir "$TMP/q"
CUPROBE_OUTPUT="$TMP/q/%p.trace" "$HELPER" fork-quiet >"$TMP/out" || die "fork-quiet failed"
child=$(sed -n 's/^child //p' "$TMP/out")
[ "$(ls "$TMP/q" | wc -l)" -eq 1 ] || { ls -l "$TMP/q"; die "expected only the parent's trace"; }
[ ! -e "$TMP/q/$child.trace" ] || die "the quiet child wrote a trace"
parent=$(ls "$TMP/q")
"$ANA" dump "$TMP/q/$parent" >"$TMP/d" || die "parent trace incomplete"
expect_grep "^FORK .* child_pid=$child\$" "$TMP/d"
[ "$(grep -c '^CALL ' "$TMP/d")" -eq 200 ] || die "parent should have 200 calls"

mkdir "$TMP/r"
CUPROBE_OUTPUT="$TMP/r/%p.trace" "$HELPER" fork-records >"$TMP/out" || die "fork-records failed"
child=$(sed -n 's/^child //p' "$TMP/out")
[ -f "$TMP/r/$child.trace" ] || die "the recording child wrote no trace"
"$ANA" dump "$TMP/r/$child.trace" >"$TMP/d" || die "child trace incomplete"
[ "$(grep -c '^CALL ' "$TMP/d")" -eq 50 ] || die "child should have exactly its own 50 calls"
expect_grep "^HEADER .* pid=$child ppid=[0-9]+ " "$TMP/d"
expect_grep '^END .* reason=exit status=0 ' "$TMP/d"
# vfork + exec: the child shares our memory, so the exec hook must pass
# straight through (no EXEC, no END(exec) in the parent's file).
mkdir "$TMP/v"
CUPROBE_OUTPUT="$TMP/v/%p.trace" "$HELPER" vfork-exec >"$TMP/out" || die "vfork-exec failed"
expect_grep '^child status 0$' "$TMP/out"
[ "$(ls "$TMP/v" | wc -l)" -eq 1 ] || die "vfork: expected only the parent's trace"
"$ANA" dump "$TMP"/v/*.trace >"$TMP/d" || die "vfork: parent trace incomplete"
expect_no_grep '^EXEC ' "$TMP/d"
expect_grep '^END .* reason=exit status=0 ' "$TMP/d"
[ "$(grep -c '^CALL ' "$TMP/d")" -eq 20 ] || die "vfork: parent should have 20 calls"
echo "writer_fork: ok"
