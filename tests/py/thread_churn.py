"""thread_churn.py N - N Python threads one after the other, each making
and freeing four allocations from the same line on the fake driver (a
thread's stack cache is armed at its second walk, so the third hits and
fills a walk-memo table, cp_stack.c, and the fourth finds its chain
repeated), with the companion's code watcher on (CPython 3.12+).  Prints
the process's peak RSS: tests/sh/pystack_threads.sh compares two N."""
import ctypes
import os
import resource
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "scripts", "python"))
from cuprobe_companion import _codewatch  # noqa: E402

print("code watcher:", "on" if _codewatch.start() else "off")
cuda = ctypes.CDLL("libcuda.so.1")
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
assert cuda.cuInit(0) == 0
assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0


def work():
    assert cuda.cuCtxSetCurrent(ctx) == 0
    p = ctypes.c_uint64()
    for _ in range(4):
        assert cuda.cuMemAlloc_v2(ctypes.byref(p), 1024) == 0
        assert cuda.cuMemFree_v2(p) == 0


for _ in range(int(sys.argv[1])):
    t = threading.Thread(target=work)
    t.start()
    t.join()
print("maxrss_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
