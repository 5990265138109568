#!/bin/sh
# framework_attribute: memory growth inside a framework's pool is named at
# the line that keeps the memory.  tests/py/attribute_prog.py keeps a block
# every step at one line (KEEP) while the pool is refilled from the driver
# at another (REFILL: a temporary that finds the cache short), with the
# stand-in PyTorch and CuPy taking their memory from the fake driver.
# Without attribution the memory-growth finding can only name REFILL, and
# says how to get the right line (--attribute); with `cuprobe run
# --attribute` it names KEEP, with the allocation's own stack, and the
# held-by-allocator finding says what each line held at exit.  The
# program's output is the same either way.  Under backend:cudaMallocAsync
# the driver sees each tensor, and the finding says so.  --attribute with
# --no-python is refused.
. "$ROOT/tests/sh/lib.sh"
need_py_fake
[ -x "$CUPROBE" ] || skip "no $CUPROBE"
. "$ROOT/tests/sh/lib_explain.sh"
PROG="$ROOT/tests/py/attribute_prog.py"

# growth NAME: the memory-growth finding of NAME's report, from its title
# to its explanation.
growth() {
    sed -n '/^warning \[memory-growth\]/,/^  Why:/p' "$TMP/$1.report" >"$TMP/$1.growth"
    [ -s "$TMP/$1.growth" ] || { cat "$TMP/$1.report"; die "$1: no memory-growth warning"; }
}
# site NAME LINE FUNC: the finding lists a site at attribute_prog.py:LINE
site() { expect_grep "^ +[0-9]+x +[0-9.]+ MiB +.*attribute_prog\.py:$2 \($3\)\$" "$TMP/$1.growth"; }
no_site() { expect_no_grep "^ +[0-9]+x +[0-9.]+ MiB +.*attribute_prog\.py:$2 " "$TMP/$1.growth"; }
ATTRIB="^  Attribution \(.*\) names the lines that allocated the memory still held"
ADVICE="Run again with --attribute \(cuprobe run --attribute \.\.\.\) to name the line that keeps it\."

for fw in torch cupy; do
    FW=$(echo "$fw" | tr a-z A-Z)
    KEEP=$(line_of "$FW KEEP")
    REFILL=$(line_of "$FW REFILL")
    case $fw in
    torch) FUNC=torch_loop DRIVER=STANDIN_TORCH_DRIVER=1 ;;
    cupy) FUNC=cupy_loop DRIVER=STANDIN_CUPY_DRIVER=1 ;;
    esac

    # 1. Without attribution: the pool's refill, and the advice.
    explain "$fw-off" CUPROBE_ATTRIBUTE=0 $DRIVER -- "$fw"
    rc_is "$fw-off" 0
    growth "$fw-off"
    site "$fw-off" "$REFILL" "$FUNC"
    no_site "$fw-off" "$KEEP"
    expect_grep "allocator takes memory from the driver where its cache runs out: .*$ADVICE" \
        "$TMP/$fw-off.growth"
    expect_no_grep "$ATTRIB" "$TMP/$fw-off.growth"
    expect_grep '"sites_from":"driver"' "$TMP/$fw-off.json"

    # 2. cuprobe run --attribute: the line that keeps the memory, with its
    #    own stack (the caller's line below it), and not the refill.
    rm -f "$TMP/$fw-on".*trace
    env -u CUPROBE_FRAMEWORK_SINK -u CUPROBE_ATTRIBUTE $DRIVER PYTHONPATH="$SITE" \
        PYTHONDONTWRITEBYTECODE=1 LD_LIBRARY_PATH="$FAKE_DIR" FAKECUDA_MEM=1G CUPROBE_LOG=0 \
        "$CUPROBE" run --attribute -o "$TMP/$fw-on.trace" -- python3 "$PROG" "$fw" \
        >"$TMP/$fw-on.out" 2>"$TMP/$fw-on.err"
    echo $? >"$TMP/$fw-on.rc"
    rc_is "$fw-on" 0
    "$ANA" report --no-progress "$TMP/$fw-on.trace" >"$TMP/$fw-on.report" 2>&1
    "$ANA" report --json --no-progress "$TMP/$fw-on.trace" >"$TMP/$fw-on.json" 2>&1
    growth "$fw-on"
    site "$fw-on" "$KEEP" "$FUNC"
    no_site "$fw-on" "$REFILL"
    expect_grep "$ATTRIB" "$TMP/$fw-on.growth"
    expect_no_grep "$ADVICE" "$TMP/$fw-on.growth"
    expect_grep "^ +[^ ]*attribute_prog\.py:[0-9]+ in main\$" "$TMP/$fw-on.growth"
    expect_grep '"sites_from":"attribution"' "$TMP/$fw-on.json"
    expect_grep "^  Live in .* pool at exit, by the line that allocated it \(attribution\): [0-9.]+ MiB at .*attribute_prog\.py:$KEEP \($FUNC\), 80 blocks" \
        "$TMP/$fw-on.report"

    # The sites' stacks are the process's own: a summary keeps them.
    "$ANA" report --no-progress --summary "$TMP/$fw-on.summary" "$TMP/$fw-on.trace" 2>/dev/null ||
        die "$fw: --summary failed"
    "$ANA" report --no-progress "$TMP/$fw-on.summary" >"$TMP/$fw-sum.report" 2>&1
    growth "$fw-sum"
    site "$fw-sum" "$KEEP" "$FUNC"
    expect_grep "^ +[^ ]*attribute_prog\.py:[0-9]+ in main\$" "$TMP/$fw-sum.growth"

    # 3. The program cannot tell.
    cmp -s "$TMP/$fw-on.out" "$TMP/$fw-off.out" || die "$fw: output differs with attribution"
done

# 4. backend:cudaMallocAsync: every tensor is a driver allocation (the
#    stand-in's cuMemAllocAsync), PyTorch keeps no history and refuses an
#    OOM observer; the companion goes on, and the finding names the keeping
#    line from the driver, says why, and gives no advice that cannot work.
KEEP=$(line_of "TORCH KEEP")
explain async CUPROBE_ATTRIBUTE=1 STANDIN_TORCH_DRIVER=1 PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync -- torch
rc_is async 0
growth async
site async "$KEEP" torch_loop
expect_grep "^  Under backend:cudaMallocAsync every PyTorch tensor is a driver allocation of its own" "$TMP/async.growth"
expect_no_grep "$ADVICE|cache runs out" "$TMP/async.growth"
"$ANA" dump "$TMP/async.trace" >"$TMP/async.dump" || die "dump failed"
expect_grep 'kind="torch.attrib" json="\{\\"v\\":1,\\"event\\":\\"off\\",\\"reason\\":\\"backend\\"' "$TMP/async.dump"
expect_grep 'kind="torch.exit"' "$TMP/async.dump"
expect_no_grep 'companion disabled' "$TMP/async.dump"

# 5. A loop shorter than attribution's gap: the growth's end is the exit's
#    sample, taken after a library freed a small workspace (the teardown's
#    first free) but while every kept block was still held.
KEEP=$(line_of "SHORT KEEP")
explain short CUPROBE_ATTRIBUTE=1 STANDIN_CUPY_DRIVER=1 -- cupy_short
rc_is short 0
growth short
site short "$KEEP" cupy_short
expect_grep '"sites_from":"attribution"' "$TMP/short.json"

# 6. --attribute needs the companion: refused with --no-python.
"$CUPROBE" run --attribute --no-python -- true 2>"$TMP/refused"; rc=$?
[ $rc -eq 2 ] || die "--attribute --no-python: exit $rc, expected 2"
expect_grep "^cuprobe: run: --attribute needs the framework companion" "$TMP/refused"
echo "ok"
