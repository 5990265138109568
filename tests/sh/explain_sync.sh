#!/bin/sh
# explain_sync: a synchronous CUDA error is not explained as an
# asynchronous one.  tests/py/explain_prog.py setdev calls
# torch.cuda.set_device(3) (the stand-in PyTorch 2.11 raises its
# AcceleratorError text, whose advice about asynchronous errors and
# device-side assertions every CUDA error carries) on a machine that shows
# one GPU.  The report must name the code, the GPUs the process sees (each
# ordinal's physical GPU, UUID, PCI address) and the device asked for, give
# no CUDA_LAUNCH_BLOCKING or compute-sanitizer advice, and not warn a
# second time that no GPU was used.  A program that leaves no exception to
# read (the driver API: ctxdev exits 1, ctxabort aborts, after a context on
# device 3 failed) is explained by the failing call the same way; one that
# dealt with the failure (ctxretry: device 0, memory there) and exited 2 for
# a reason of its own did not die of it.
. "$ROOT/tests/sh/lib.sh"
need_py_fake
. "$ROOT/tests/sh/lib_explain.sh"
L=$(line_of "RAISE setdev")

# 1. One GPU, CUDA_VISIBLE_DEVICES unset.
explain one -- setdev
rc_is one 1
has "^error +\[fatal-error\] pid [0-9]+ died of a synchronous CUDA error at .*explain_prog\.py:$L \(setdev\)" one
has "CUDA_ERROR_INVALID_DEVICE \(101\)" one
has "A synchronous error: the call at the line above failed by itself" one
has "This process sees 1 GPU \(CUDA_VISIBLE_DEVICES unset: every GPU of the machine\):" one
has "^ +cuda:0 is physical GPU 0, Fake H200, GPU-[0-9a-f-]{36}, PCI [0-9a-f]{4}:" one
has "Your line asks for device 3: it does not exist in this process \(only cuda:0 exists\)" one
has_not "Kernels run asynchronously|CUDA_LAUNCH_BLOCKING|compute-sanitizer|launches in flight" one
has_not "^warning +\[no-gpu-used\]" one
has "^info +\[no-gpu-used\]" one
has "The run died of it: see fatal-error" one
expect_grep '"synchronous": *true' "$TMP/one.json"
expect_grep '"device_asked": *3' "$TMP/one.json"
expect_grep '"cuda_error": *101' "$TMP/one.json"

# 2. Four GPUs, CUDA_VISIBLE_DEVICES=2: cuda:0 is physical GPU 2.
explain cvd FAKECUDA_DEVICES=4 CUDA_VISIBLE_DEVICES=2 -- setdev
rc_is cvd 1
has "This process sees 1 GPU \(CUDA_VISIBLE_DEVICES=\"2\": the GPUs it lists, renumbered from 0\):" cvd
has "^ +cuda:0 is physical GPU 2 \(entry 0 of CUDA_VISIBLE_DEVICES\), Fake H200" cvd
# ... and by UUID: the entry is the UUID the driver gave physical GPU 2.
U=$("$ANA" dump "$TMP/cvd.trace" | sed -n 's/^DEVICE .* uuid=\([0-9a-f-]*\) .*/\1/p' | head -1)
[ -n "$U" ] || die "no DEVICE record with a UUID in the trace"
explain uuid FAKECUDA_DEVICES=4 CUDA_VISIBLE_DEVICES=GPU-$U -- setdev
rc_is uuid 1
has "^ +cuda:0 is GPU-$U \(entry 0 of CUDA_VISIBLE_DEVICES\), Fake H200, GPU-$U" uuid

# 3. No exception: the failing call's death, at its line, with its device.
C=$(line_of "CTX CREATE")
explain ctx -- ctxdev
rc_is ctx 1
has "^error +\[fatal-error\] pid [0-9]+ died \(status 1\) after a synchronous CUDA error at .*explain_prog\.py:$C \(ctx_on\)" ctx
has "Returned by cuCtxCreate_v2 at .*explain_prog\.py:$C \(ctx_on\)" ctx
has "The failing call asked for device 3: it does not exist in this process \(only cuda:0 exists\)" ctx
has "^ +cuda:0 is physical GPU 0, Fake H200" ctx
has_not "Kernels run asynchronously|CUDA_LAUNCH_BLOCKING|compute-sanitizer" ctx
has_not "^warning +\[no-gpu-used\]" ctx
has "^info +\[cuda-errors\] CUDA_ERROR_INVALID_DEVICE \(101\) from cuCtxCreate_v2" ctx
expect_grep '"device_asked": *3' "$TMP/ctx.json"
# ... without the companion, in a process with no framework: the driver's words.
explain ctx0 CUPROBE_FRAMEWORK=0 -- ctxdev
has "Fix: use a device ordinal below the device count \(cuDeviceGetCount, cudaGetDeviceCount: 1 here\)" ctx0
explain abort -- ctxabort
rc_is abort 134
has "^error +\[fatal-error\] pid [0-9]+ died of signal 6 \(SIGABRT\) after a synchronous CUDA error at .*explain_prog\.py:$C \(ctx_on\)" abort
has "The failing call asked for device 3" abort
has_not "^warning +\[no-gpu-used\]" abort

# 4. Dealt with: device 0 and memory there, then exit 2: not the call's death.
explain retry -- ctxretry
rc_is retry 2
has_not "\[fatal-error\]" retry
has "^info +\[cuda-errors\] CUDA_ERROR_INVALID_DEVICE \(101\) from cuCtxCreate_v2, 1 call, recovered" retry
echo "ok"
