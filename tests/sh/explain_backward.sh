#!/bin/sh
# explain_backward: memory allocated in PyTorch's backward pass is named at
# a line of the program.  The autograd engine allocates on threads of its
# own that run no Python; tests/py/explain_prog.py backward runs 24 steps
# whose backward pass (tests/py/cthread.c's pt_autograd_0 thread, started
# by the stand-in torch.autograd.backward) allocates 8 MiB that the run
# keeps.  The companion records the line that called backward(); the
# memory-growth finding must name it, and say in words that the memory was
# allocated in the backward pass, also when the companion is off.
. "$ROOT/tests/sh/lib.sh"
need_py_fake
. "$ROOT/tests/sh/lib_explain.sh"
cthread_lib cpt_autograd_step
L=$(line_of "BACKWARD CALL")

# 1. The companion on: the site is the line that called backward().
explain on -- backward "$TMP/libcthread.so"
rc_is on 0
expect_grep "^steps done$" "$TMP/on.out"
has "^warning +\[memory-growth\]" on
has "^ +[0-9]+x +[0-9.]+ MiB +.*explain_prog\.py:$L \(backward\) +\[allocated in the backward pass of the model called at explain_prog\.py:$L\]" on
has "Some of it was allocated in the backward pass, on PyTorch's autograd threads, which run no Python: their sites are the line that called backward\(\)" on
"$ANA" dump "$TMP/on.trace" >"$TMP/on.dump" || die "dump failed"
[ "$(grep -c 'kind="torch.backward".*event\\":\\"begin\\",\\"file\\":\\"[^"]*explain_prog.py\\",\\"line\\":'"$L"',' "$TMP/on.dump")" -eq 24 ] ||
    die "expected 24 torch.backward begin records naming line $L"
[ "$(grep -c 'kind="torch.backward".*event\\":\\"end' "$TMP/on.dump")" -eq 24 ] ||
    die "expected 24 torch.backward end records"
expect_grep '^THREAD .* name="pt_autograd_0"' "$TMP/on.dump"

# 2. The companion off: the site is still the backward pass's, in words.
explain off CUPROBE_FRAMEWORK=0 -- backward "$TMP/libcthread.so"
rc_is off 0
has "^warning +\[memory-growth\]" off
has "\[allocated in the backward pass, on an autograd thread \(no Python frames; the line that called backward\(\) was not recorded\)\]" off
has "the line that called backward\(\) was not recorded \(the framework companion was off" off

# 3. The wrapper changes nothing the program sees.
cmp -s "$TMP/on.out" "$TMP/off.out" || die "stdout differs with the companion"
echo "ok"
