#!/bin/sh
# framework_growth: memory kept every step inside PyTorch's caching
# allocator is a memory-growth warning at the line that keeps it, however
# the loop shows itself to the driver (tests/py/growth_prog.py, the stand-in
# torch taking its segments from the fake driver, attribution on):
#   evalloss  the autograd thread launches and records nothing else, so its
#             kernels reach the trace only in the launch counts written at
#             exit: the work they stand for was done during the loop, not
#             after the last allocation (a validation loss kept as a tensor
#             every other step);
#   backward  the same with the threads' roles swapped: the main thread is
#             the silent one (activations kept, allocated in the backward
#             pass: the line that called backward()), and PyTorch's pool
#             does not grow with it;
#   graphs    the cache grows ten times faster than the live tensors (a CUDA
#             graph captured per step), and a line keeps live tensors to the
#             end;
#   concat    the kept memory is one tensor that grows, and the program
#             frees it before exit (predictions concatenated on the GPU, then
#             moved to the host);
#   teardown  the program empties the cache at the end (Lightning);
#   predict   attribution off: PyTorch's timeline decides, and ends at the
#             last sample before the companion's exit record (the exit's
#             own comes after the program freed what grew);
#   slowexit  backward with a second of interpreter teardown after the
#             companion's exit record: the launch counts written at exit
#             stand for work done before that record, not after it.
# evalclean, the same loop keeping nothing, has no memory-growth finding.
. "$ROOT/tests/sh/lib.sh"
need_py_fake
. "$ROOT/tests/sh/lib_explain.sh"
cthread_lib cpt_autograd_step
PROG="$ROOT/tests/py/growth_prog.py"

# warns NAME MARK: NAME's report has a memory-growth warning whose first
# site is the line marked MARK.
warns() {
    sed -n '/^warning \[memory-growth\]/,/^  Why:/p' "$TMP/$1.report" >"$TMP/$1.growth"
    [ -s "$TMP/$1.growth" ] || { cat "$TMP/$1.report"; die "$1: no memory-growth warning"; }
    first=$(grep -m1 -E '^ +[0-9]+x +[0-9.]+ [KMG]iB +' "$TMP/$1.growth")
    echo "$first" | grep -q -E "growth_prog\.py:$(line_of "$2") " ||
        { cat "$TMP/$1.growth"; die "$1: first site is not growth_prog.py:$(line_of "$2") ($2)"; }
}

for sc in evalloss evalclean backward slowexit graphs concat teardown; do
    explain "$sc" CUPROBE_ATTRIBUTE=1 STANDIN_TORCH_DRIVER=1 -- "$sc" "$TMP/libcthread.so"
    rc_is "$sc" 0
    expect_grep "^steps done$" "$TMP/$sc.out"
done

warns evalloss "EVAL KEEP"
expect_grep '"sites_from":"attribution"' "$TMP/evalloss.json"
has_not "memory-growth" evalclean
# PyTorch's pool did not grow: the memory is held outside it.
warns backward "BACKWARD CALL"
expect_grep '"torch_cause":"outside"' "$TMP/backward.json"
warns slowexit "BACKWARD CALL"
# The cache grew ten times more than the live tensors, but those grew by
# 69 MiB (over 64 MiB and a sixteenth of the growth): they are the cause.
warns graphs "GRAPHS KEEP"
expect_grep '"torch_cause":"tensors"' "$TMP/graphs.json"
warns concat "GATHER KEEP"
expect_grep '"torch_cause":"kept"' "$TMP/concat.json"
explain predict CUPROBE_ATTRIBUTE=0 STANDIN_TORCH_DRIVER=1 -- predict "$TMP/libcthread.so"
rc_is predict 0
warns predict "GATHER KEEP"
expect_grep '"torch_cause":"tensors"' "$TMP/predict.json"
# The timeline ends where the growth did, not after the teardown.
warns teardown "TEARDOWN KEEP"
expect_grep "^  PyTorch's own timeline .*: live tensors are growing" "$TMP/teardown.growth"
echo "ok"
