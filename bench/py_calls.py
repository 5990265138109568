"""py_calls.py - nanoseconds per cuMemAllocAsync + cuMemFreeAsync pair made
from Python through ctypes at a given Python stack depth, on the fake driver
(or any libcuda.so.1 the loader finds): the shim's Python call-site walk
costs in proportion to the depth (GPT-2 small allocates under 17-24 Python
frames).  Run it plain and under the shim and compare.

Usage: python3 bench/py_calls.py [DEPTH [PAIRS]]   (default 20, 20000)
Prints "py_pair_depthN NS", the median of 50 batches (a batch in which the
process was preempted is dropped, not averaged in).
PY_CALLS_LAUNCH=1: time launches of the fake driver's kernel instead
("py_launch_depthN NS": what a launch's raw Python frames cost).
PY_CALLS_WATCH=1: first start the companion's code watcher, as `cuprobe run`
does at a framework's import (CPython 3.12+: the call-site memo on)."""
import ctypes
import os
import statistics
import sys
import time


def main():
    depth = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    if os.environ.get("PY_CALLS_WATCH") == "1":
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                        "scripts", "python"))
        from cuprobe_companion import _codewatch
        _codewatch.start()
    launch = os.environ.get("PY_CALLS_LAUNCH") == "1"
    cuda = ctypes.CDLL("libcuda.so.1")
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    assert cuda.cuInit(0) == 0
    assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0
    alloc, free = cuda.cuMemAllocAsync, cuda.cuMemFreeAsync
    alloc.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t, ctypes.c_void_p]
    free.argtypes = [ctypes.c_uint64, ctypes.c_void_p]
    ptr = ctypes.c_uint64()
    ref = ctypes.byref(ptr)
    per = max(1, pairs // 50)

    if launch:
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        assert cuda.cuModuleLoadData(ctypes.byref(mod), b"fake") == 0
        assert cuda.cuModuleGetFunction(ctypes.byref(fn), mod, b"fake_noop") == 0
        go = cuda.cuLaunchKernel
        go.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3

    def batch():
        t = time.perf_counter_ns()
        if launch:
            for _ in range(per):
                go(fn, 1, 1, 1, 1, 1, 1, 0, None, None, None)
        else:
            for _ in range(per):
                alloc(ref, 1024, None)
                free(ptr.value, None)
        return (time.perf_counter_ns() - t) / per

    def down(n):
        if n > 1:
            return down(n - 1)
        batch()     # warm: first-use sites, caches
        return [batch() for _ in range(50)]

    print("py_%s_depth%d %.1f" % ("launch" if launch else "pair", depth,
                                  statistics.median(down(depth))))


main()
