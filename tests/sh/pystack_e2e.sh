#!/bin/sh
# pystack_e2e.sh - Python call sites end to end: tests/py/pystack_cases.py
# calls the fake driver through ctypes under LD_PRELOAD of the shim, and
# tests/py/check_pystack.py checks with `cuprobe-analyze dump` that every
# allocation's recorded Python frames are CPython's own, down to the exact
# line (nested functions, a thread, a generator, a coroutine, the GIL held,
# threads started by C with and without Python, atexit, a forked child's
# own file), code objects freed and made again at the same addresses
# (with the companion's code watcher on 3.12+, whose memo must then be hit).
# Runs on the CPythons 3.11-3.13 of lib.sh's pythons (the oldest and the
# newest in the quick tier, every one in sh/python_versions.sh), then once
# with CUPROBE_PYTHON=0.
. "$ROOT/tests/sh/lib.sh"
[ -f "$SHIM" ] || skip "$SHIM not built"
[ -f "$FAKE_DIR/libcuda.so.1" ] || skip "fake driver not built"
[ -x "$ANA" ] || skip "$ANA not built"
cthread_lib

pythons 11 13 >"$TMP/pythons"

# run PY NAME [ENV...]: trace the cases with interpreter PY into $TMP/NAME.*
run() {
    py=$1; name=$2; shift 2
    env "$@" LD_PRELOAD="$SHIM" LD_LIBRARY_PATH="$FAKE_DIR" \
        CUPROBE_OUTPUT="$TMP/$name.trace" CP_MANIFEST="$TMP/$name.json" \
        "$py" "$ROOT/tests/py/pystack_cases.py" "$TMP/libcthread.so" \
        >"$TMP/$name.out" 2>&1 || { cat "$TMP/$name.out"; die "$py failed under the shim"; }
    "$ANA" dump "$TMP/$name.trace" >"$TMP/$name.dump" || die "dump of $name failed"
}

ran=0; last=""
while read -r p id <&3; do
    minor=${id#3.}; minor=${minor%%.*}
    name="py$ran"
    run "$p" "$name" CUPROBE_LOG=2
    echo "== $id"
    "$p" "$ROOT/tests/py/check_pystack.py" "$TMP/$name.dump" "$TMP/$name.json" ||
        die "Python call sites wrong for $id"
    # 3.12+: the companion's code watcher is on and hits skip validation.
    if [ "$minor" -ge 12 ]; then
        expect_grep "^code watcher: on" "$TMP/$name.out"
        expect_grep "python sites: [1-9][0-9]* hits without validation.*memo stopped" "$TMP/$name.out"
        # ... and repeated chains take the walk memo (cp_stack.c), which
        # check_pystack.py above proved right, line for line.
        expect_grep "stack cache: .*python chains repeated [1-9][0-9]*, python walks [1-9]" "$TMP/$name.out"
    else
        expect_grep "^code watcher: off" "$TMP/$name.out"
        expect_grep "python sites: 0 hits without validation.*memo never started" "$TMP/$name.out"
        expect_grep "stack cache: .*python chains repeated 0," "$TMP/$name.out"
    fi
    ran=$((ran + 1)); last=$p
done 3<"$TMP/pythons"   # fd 3: what the loop runs may read stdin
[ $ran -gt 0 ] || skip "no CPython 3.11-3.13 found"

# fork: the child's file must define again everything it uses.
env LD_PRELOAD="$SHIM" LD_LIBRARY_PATH="$FAKE_DIR" CUPROBE_OUTPUT="$TMP/fork-%p.trace" \
    CP_MANIFEST="$TMP/fork.json" "$last" "$ROOT/tests/py/pystack_fork.py" >"$TMP/fork.out" 2>&1 ||
    { cat "$TMP/fork.out"; die "fork case failed under the shim"; }
n=0
for t in "$TMP"/fork-*.trace; do
    "$ANA" dump "$t" >"$t.dump" || die "dump of $t failed"
    role=parent
    grep -q "size=49152 " "$t.dump" && role=child
    "$last" "$ROOT/tests/py/check_pystack.py" "$t.dump" "$TMP/fork.json.$role" ||
        die "Python call sites wrong in the $role's trace after fork"
    n=$((n + 1))
done
[ $n -eq 2 ] || die "expected 2 traces (parent, child), got $n"

run "$last" off CUPROBE_PYTHON=0
"$last" "$ROOT/tests/py/check_pystack.py" "$TMP/off.dump" "$TMP/off.json" --no-python ||
    die "CUPROBE_PYTHON=0 still recorded Python frames"
expect_grep "^ALLOC .*size=4096 " "$TMP/off.dump"
echo "Python call sites right on $ran interpreters; CUPROBE_PYTHON=0 honoured"
