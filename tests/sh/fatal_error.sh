#!/bin/sh
# fatal_error: what a run died of.  tests/py/fatal_prog.py runs
# under the shim on the fake driver with the stand-in PyTorch and dies of a
# device mismatch, a CPU-only torch, an OOM, a worker thread's exception
# and an asynchronous illegal address (FAKECUDA_FAIL_LAUNCH: the 3rd launch
# faults, the sync after the 5th reports 700).  Each report must give the
# right explanation and name the raising line (marked "# RAISE <scenario>"
# in the program); the asynchronous one must list the five launches in
# flight with their sites and the culprit's line.  Output and exit status
# must be the same as without the companion; a run that caught everything
# shows nothing, and neither do the workers a Pool ended with SIGTERM in a
# run that exited 0.
. "$ROOT/tests/sh/lib.sh"
need_py_fake

PROG="$ROOT/tests/py/fatal_prog.py"
line_of() { grep -n "# $1\$" "$PROG" | cut -d: -f1; }
run() { # run NAME [VAR=VALUE...]: trace fatal_prog.py NAME into $TMP/NAME.trace
    name=$1; shift
    py_traced "$name" "$@" -- "$PROG" "$name"
    "$ANA" report --no-progress "$TMP/$name.trace" >"$TMP/$name.report" 2>&1
    "$ANA" report --json --no-progress "$TMP/$name.trace" >"$TMP/$name.json" 2>&1
}
rc_is() { [ "$(cat "$TMP/$1.rc")" = "$2" ] || { cat "$TMP/$1.err"; die "$1: exit status $(cat "$TMP/$1.rc"), expected $2"; }; }
# finding CHECK SEV NAME: the report's line for that finding
has() { expect_grep "$1" "$TMP/$2.report"; }

# 1. Device mismatch: devices, argument, likely origin, allocating device, fix.
run mismatch
rc_is mismatch 1
L=$(line_of "RAISE mismatch")
has "^error +\[fatal-error\] pid [0-9]+ died of tensors on different devices in one operation at .*fatal_prog.py:$L \(cross_entropy\)" mismatch
has "Your line: .*fatal_prog.py:$L \(cross_entropy\)" mismatch
has "argument \`target\` of wrapper_CUDA_nll_loss_forward" mismatch
has "Likely origin: labels or indices straight from the data loader" mismatch
has "allocated device memory on: GPU 0 " mismatch
has "Fix: move it to the others' device" mismatch
expect_grep '"devices": *"cpu and cuda:0"' "$TMP/mismatch.json"

# 2. CPU-only torch: the framework layer, joined with no-gpu-used.
run nocuda STANDIN_TORCH_CUDA=
rc_is nocuda 1
L=$(line_of "RAISE nocuda")
has "^error +\[fatal-error\] pid [0-9]+ died of PyTorch without CUDA at .*fatal_prog.py:$L \(nocuda\)" nocuda
has "AssertionError: Torch not compiled with CUDA enabled" nocuda
has "Layer that failed: the framework: torch 2.11.0\+standin is a CPU-only build" nocuda
has "torch.version.cuda = None" nocuda
has "^info +\[no-gpu-used\]" nocuda
has "The run died of it: see fatal-error" nocuda

# 3. OOM: joined with the oom post-mortem, not reported twice.
run oom
rc_is oom 1
L=$(line_of "RAISE oom")
has "^error +\[oom\] cuMemAlloc_v2 of 2.00 GiB on GPU 0" oom
has "The run died of it: .*OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB" oom
has "raised at your line .*fatal_prog.py:$L \(oom\)" oom
expect_no_grep "\[fatal-error\]" "$TMP/oom.report"

# 4. A worker thread dies, the run goes on and exits 0: a warning naming it.
run thread
rc_is thread 0
L=$(line_of "RAISE thread")
has "^warning +\[fatal-error\] pid [0-9]+: thread 'loader' died of tensors on different devices in one operation at .*fatal_prog.py:$L \(load_batch\)" thread
has "the process went on and exited normally" thread
expect_grep "^main went on$" "$TMP/thread.out"

# in_flight NAME: NAME's report lists the five launches of five_launches()
# in flight, each with its site, the culprit's (the third) through its caller.
in_flight() {
    has "oldest first \(5;" "$1"
    for i in 1 2 4 5; do
        has "^ +$i\. fake_noop grid \($i,1,1\) block \(128,1,1\) stream 0x0, from .*fatal_prog.py:$(line_of "LAUNCH $i") \(five_launches\)" "$1"
    done
    has "^ +3\. fake_noop grid \(3,1,1\) block \(128,1,1\) stream 0x0, from .*fatal_prog.py:[0-9]+ \(launch\) <- .*fatal_prog.py:$(line_of CULPRIT) \(five_launches\)" "$1"
}

# 5. Asynchronous illegal address: surfaced line, the launches in flight with
#    their sites, the culprit's line among them, the rerun command lines.
run async FAKECUDA_FAIL_LAUNCH=3
rc_is async 1
L=$(line_of "RAISE async")
has "^error +\[fatal-error\] pid [0-9]+ died of an asynchronous CUDA error at .*fatal_prog.py:$L \(async_fault\)" async
has "where the error surfaced .*not where it happened" async
has "CUDA_ERROR_ILLEGAL_ADDRESS \(700\)" async
has "First reported by cuCtxSynchronize at .*fatal_prog.py:[0-9]+ \(async_fault\)" async
in_flight async
has "^ +CUDA_LAUNCH_BLOCKING=1 .*python[0-9.]* .*fatal_prog.py async$" async
has "^ +compute-sanitizer --tool memcheck .*python[0-9.]* .*fatal_prog.py async$" async
has "^info +\[cuda-errors\] CUDA_ERROR_ILLEGAL_ADDRESS" async
"$ANA" dump "$TMP/async.trace" >"$TMP/async.dump" || die "dump failed"
expect_grep "^ASYNC_ERROR .*api=cuCtxSynchronize .*result=700 .*n_inflight=5 overflow=0" "$TMP/async.dump"
[ "$(grep -c '^INFLIGHT ' "$TMP/async.dump")" -eq 5 ] || die "expected 5 INFLIGHT records"

# 5b. A device-side assert (CUDA_ERROR_ASSERT, sticky), surfacing as cuBLAS's
#     own error, whose text names no CUDA error: the trace's sticky error is
#     what the run died of, an error with the launches in flight and the
#     culprit's line among them, not an "other exception".
run assert FAKECUDA_FAIL_LAUNCH=3 FAKECUDA_FAIL_CODE=710
rc_is assert 1
L=$(line_of "RAISE assert")
has "^error +\[fatal-error\] pid [0-9]+ died of an asynchronous CUDA error at .*fatal_prog.py:$L \(device_assert\)" assert
has "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling" assert
has "The exception names no CUDA error, but the trace holds one before it" assert
has "CUDA_ERROR_ASSERT \(710\): a device-side assert fired" assert
in_flight assert
has "TORCH_USE_CUDA_DSA" assert
expect_no_grep "^(info|warning) +\[fatal-error\]" "$TMP/assert.report"

# 5c. An ordinary exception that ends a GPU program: a crash, never info.
run other
rc_is other 1
L=$(line_of "RAISE other")
has "^warning +\[fatal-error\] pid [0-9]+ died of ValueError at .*fatal_prog.py:$L \(other\)" other
has "ValueError: unknown optimizer 'adamw2'" other

# 6. The toolkit's stub libcuda: cuInit 34, the driver-library layer and its fix.
run init FAKECUDA_STUB=1
rc_is init 1
L=$(line_of "RAISE init")
has "^error +\[fatal-error\] pid [0-9]+ died of CUDA initialisation failed at .*fatal_prog.py:$L \(init\)" init
has "Layer that failed: the driver library: the CUDA toolkit's stub libcuda.so was loaded" init
has "Fix: remove the CUDA toolkit's stubs directory from LD_LIBRARY_PATH" init
has "^info +\[cuda-errors\] the CUDA toolkit's stub libcuda.so was loaded" init
[ "$(grep -c 'The run died of it: see fatal-error' "$TMP/init.report")" -eq 2 ] ||
    die "init: no-gpu-used and cuda-errors must both point at fatal-error"

# 7. An NCCL watchdog timeout: the collective, its sequence number and rank.
run nccl
rc_is nccl 1
L=$(line_of "RAISE nccl")
has "^error +\[fatal-error\] pid [0-9]+ died of an NCCL error at .*fatal_prog.py:$L \(allreduce\)" nccl
has "Collective: ALLREDUCE, sequence number 42, on rank 1, timed out\." nccl
has "The watchdog waited 600000 ms: another rank never joined" nccl
has "NCCL_DEBUG=INFO" nccl
expect_no_grep "no-gpu-used" "$TMP/nccl.report"

# 8. Caught everything, exit 0: nothing here.
run caught
rc_is caught 0
expect_no_grep "fatal-error" "$TMP/caught.report"

# 9. A Pool's spawned workers, each on the GPU, ended with SIGTERM by the
#    Pool's terminate() when its `with` block ends: the run exited 0, so
#    their deaths are info; when the parent then dies, they stay errors.
pool() { # pool NAME: fatal_prog.py NAME, every process's trace reported
    py_traced "$1" -- "$PROG" "$1"
    "$ANA" report --no-progress "$TMP/$1".*trace >"$TMP/$1.report" 2>&1
}
pool pool
rc_is pool 0
[ "$(grep -c '^== pid' "$TMP/pool.report")" -ge 2 ] || die "pool: no worker's trace"
has "^info +\[fatal-error\] pids? [0-9]+.* died of signal 15 \(SIGTERM\)" pool
has "SIGTERM came from a process \(kill\), and the parent, pid [0-9]+, outlived this one and exited 0" pool
expect_no_grep "^(error|warning) +\[fatal-error\]" "$TMP/pool.report"
pool poolfail
rc_is poolfail 1
has "^error +\[fatal-error\] pids? [0-9]+.* died of signal 15 \(SIGTERM\)" poolfail
has "^warning +\[fatal-error\] pid [0-9]+ died of ValueError at .*fatal_prog.py:$(line_of "RAISE poolfail") \(pool\)" poolfail

# 10. Output and exit status do not depend on the companion.
for s in mismatch async thread; do
    cp "$TMP/$s.out" "$TMP/$s.out1"; cp "$TMP/$s.err" "$TMP/$s.err1"; cp "$TMP/$s.rc" "$TMP/$s.rc1"
    extra=""; [ $s = async ] && extra=FAKECUDA_FAIL_LAUNCH=3
    run $s CUPROBE_FRAMEWORK=0 $extra
    cmp -s "$TMP/$s.out" "$TMP/$s.out1" || die "$s: stdout differs with the companion"
    cmp -s "$TMP/$s.rc" "$TMP/$s.rc1" || die "$s: exit status differs with the companion"
    grep -v '^\[cuprobe [0-9]*\]' "$TMP/$s.err" >"$TMP/$s.e0"
    grep -v '^\[cuprobe [0-9]*\]' "$TMP/$s.err1" >"$TMP/$s.e1"
    cmp -s "$TMP/$s.e0" "$TMP/$s.e1" || { diff "$TMP/$s.e0" "$TMP/$s.e1"; die "$s: stderr differs with the companion"; }
done
echo "ok"
