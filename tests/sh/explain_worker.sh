#!/bin/sh
# explain_worker: a crash in a DataLoader worker process is explained at
# the worker's line.  tests/py/explain_prog.py worker initialises CUDA,
# then iterates a DataLoader whose 2 workers are forked (the stand-in
# PyTorch 2.11's default start method) and whose __getitem__ makes a CUDA
# tensor: PyTorch refuses CUDA in the forked worker, and the DataLoader
# re-raises "Caught RuntimeError in DataLoader worker process 0" in the
# parent with the worker's traceback in the text.  The report must be an
# error at __getitem__'s line naming the fork, where the parent initialised
# CUDA, and the fix; a worker's own bug is an error at its line too, and
# of a chained traceback (an exception raised while handling another) the
# exception named is the one raised at that line.
. "$ROOT/tests/sh/lib.sh"
need_py_fake
. "$ROOT/tests/sh/lib_explain.sh"

# 1. CUDA in a forked worker.
explain fork STANDIN_TORCH_DRIVER=1 -- worker
rc_is fork 1
W=$(line_of "WORKER LINE")
has "^error +\[fatal-error\] pid [0-9]+ died of CUDA used in a worker process forked after CUDA was initialised at .*explain_prog\.py:$W \(__getitem__\)" fork
has "Your line: .*explain_prog\.py:$W \(__getitem__\)" fork
has "In DataLoader worker process [01], at the line above: RuntimeError: Cannot re-initialize CUDA in forked subprocess" fork
has "Cause: this process initialised CUDA at .*explain_prog\.py:$(line_of "CUDA INIT") \(setup\), then forked 2 processes" fork
has 'multiprocessing_context="spawn"' fork
has "PyTorch re-raised it in this process at .*explain_prog\.py:$(line_of "RAISE worker") \(worker\)" fork
has_not "^(info|warning) +\[fatal-error\]" fork
expect_grep '"line": *'"$W"', *"fork_after_cuda_init": *true' "$TMP/fork.json"

# 2. The worker's own bug: an error at its line, no fork named.
B=$(line_of "WORKER BUG")
explain bug STANDIN_TORCH_DRIVER=1 -- workerbug
has "^error +\[fatal-error\] pid [0-9]+ died of an exception in a worker process at .*explain_prog\.py:$B \(__getitem__\)" bug
rc_is bug 1
has "In DataLoader worker process [01], at the line above: ValueError: sample [0-9] is corrupt" bug
has_not "Cause: |spawn" bug

# 3. A chained traceback: the ValueError raised while handling a KeyError.
C=$(line_of "WORKER CHAIN")
explain chain STANDIN_TORCH_DRIVER=1 -- workerchain
rc_is chain 1
has "^error +\[fatal-error\] pid [0-9]+ died of an exception in a worker process at .*explain_prog\.py:$C \(__getitem__\)" chain
has "In DataLoader worker process [01], at the line above: ValueError: sample [0-9] has no label \(raised while handling KeyError: [0-9]\)" chain
expect_grep '"exception": *"ValueError", *"message": *"sample [0-9] has no label", *"cause": *"KeyError: [0-9]"' "$TMP/chain.json"
echo "ok"
