#!/bin/sh
# writer_frontend.sh - `cuprobe run`: the command is exec'ed under the shim
# with its own exit status, is the root process (a trace even without CUDA,
# HEADER root=1), LD_PRELOAD keeps what was there, -o and defaults work;
# children that never use CUDA write nothing; the default name is absolute.
. "$ROOT/tests/sh/lib.sh"
[ -f "$SHIM" ] || skip "libcuprobe.so not built"
[ -x "$CUPROBE" ] && [ -x "$ANA" ] || die "front end or analyzer not built"
cd "$TMP" || die "cd"

"$CUPROBE" run -o "$TMP/r-%p.trace" -- sh -c 'echo "$LD_PRELOAD" >pre; /bin/true; exit 3'; rc=$?
[ $rc -eq 3 ] || die "exit status $rc, expected the command's 3"
[ "$(ls "$TMP"/r-*.trace | wc -l)" -eq 1 ] || { ls; die "expected one trace (the child /bin/true writes none)"; }
"$ANA" dump "$TMP"/r-*.trace >d || die "root trace incomplete"
expect_grep '^HEADER .* root=1 ' d
expect_grep 'argv\[2\]="echo' d
grep -q "^$SHIM\$" pre || die "LD_PRELOAD was '$(cat pre)'"

LD_PRELOAD=/lib/x86_64-linux-gnu/libc.so.6 "$CUPROBE" run -- sh -c 'echo "$LD_PRELOAD" >pre2; echo "$CUPROBE_OUTPUT" >out2'
grep -q "^$SHIM:/lib/x86_64-linux-gnu/libc.so.6\$" pre2 || die "LD_PRELOAD not prepended: '$(cat pre2)'"
# The default name, made absolute against the directory `run` started in.
grep -qx "$(pwd -P)/cuprobe-%p.trace" out2 || grep -qx "$TMP/cuprobe-%p.trace" out2 ||
    die "default CUPROBE_OUTPUT is '$(cat out2)'"
ls cuprobe-*.trace >/dev/null 2>&1 || die "no default-named trace in the cwd"

"$CUPROBE" run --flush-ms 0 -- true 2>err; [ $? -eq 2 ] || die "bad --flush-ms accepted"
expect_grep 'outside 1..10000' err
"$CUPROBE" run 2>/dev/null; [ $? -eq 2 ] || die "run without a command accepted"
"$CUPROBE" --help | grep -q 'cuprobe run' || die "--help"
"$CUPROBE" run --no-stacks --no-python -- sh -c 'echo "$CUPROBE_STACK_DEPTH $CUPROBE_PYTHON" >o3'
grep -q '^0 0$' o3 || die "--no-stacks/--no-python: '$(cat o3)'"
mkdir off && cd off || die "cd"
CUPROBE_DISABLE=1 "$CUPROBE" run -- sh -c 'exit 4'; rc=$?
[ $rc -eq 4 ] || die "CUPROBE_DISABLE=1: exit $rc"
[ -z "$(ls)" ] || die "CUPROBE_DISABLE=1 still wrote $(ls)"
echo "writer_frontend: ok"
