"""pystack_cases.py - run under the shim on the fake driver by
tests/sh/pystack_e2e.sh.  Each case calls cuMemAlloc_v2 through ctypes
(which releases the GIL, as PyTorch does) with its own size, and notes
CPython's own view of the frames at that call (file, qualname, line of the
very line that calls the driver) in a manifest ($CP_MANIFEST, JSON).
tests/py/check_pystack.py then compares the trace with it.

argv[1]: path of libcthread.so (tests/py/cthread.c) for the C-thread cases.

On CPython 3.12+ the companion's code watcher is registered first (as
`cuprobe run` does at a framework's import), so the cases also check the
call-site memo, and case_churn frees and makes code objects at reused
addresses between allocations.
"""
import asyncio
import atexit
import ctypes
import json
import os
import sys
import threading

from pystack_common import MANIFEST, churn, note, setup

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "scripts", "python"))
from cuprobe_companion import _codewatch  # noqa: E402

print("code watcher:", "on" if _codewatch.start() else "off")

CUDA = ctypes.CDLL("libcuda.so.1")
CUDA_GIL = ctypes.PyDLL("libcuda.so.1")     # the same calls, GIL held
CTHREAD = ctypes.CDLL(sys.argv[1])
CALLBACK = ctypes.CFUNCTYPE(None)
P = ctypes.c_uint64()
KB = 4096


def write_manifest():
    with open(os.environ["CP_MANIFEST"], "w") as f:
        json.dump(MANIFEST, f)


def case_nested():
    def outer():
        def inner():
            rc, line = CUDA.cuMemAlloc_v2(ctypes.byref(P), 2 * KB), sys._getframe().f_lineno
            note("nested", 2 * KB, rc, line)
        inner()
    outer()


def repeat_leaf(size, which):
    if which:
        rc, line = CUDA.cuMemAlloc_v2(ctypes.byref(P), size), sys._getframe().f_lineno
    else:
        rc, line = CUDA.cuMemAlloc_v2(ctypes.byref(P), size), sys._getframe().f_lineno
    note("repeat %d" % size, size, rc, line)


def repeat_deeper(size, which):
    repeat_leaf(size, which)


def case_repeat():
    # A training loop's chains again and again: on 3.12+ the walk memo
    # (cp_stack.c) answers for them.  Two lines in turn, and a deeper chain
    # through the same two lines, must each keep their own frames.
    for i in range(12):
        repeat_leaf((200 + i) * KB, i % 2)
    for i in range(12):
        repeat_deeper((220 + i) * KB, i % 2)
    for i in range(4):
        repeat_leaf((240 + i) * KB, i % 2)


def case_thread(ctx):
    def work():
        assert CUDA.cuCtxSetCurrent(ctx) == 0
        rc, line = CUDA.cuMemAlloc_v2(ctypes.byref(P), 3 * KB), sys._getframe().f_lineno
        note("thread", 3 * KB, rc, line)
    t = threading.Thread(target=work)
    t.start()
    t.join()


def gen():
    rc, line = CUDA.cuMemAlloc_v2(ctypes.byref(P), 4 * KB), sys._getframe().f_lineno
    note("generator", 4 * KB, rc, line)
    yield 1
    rc, line = CUDA.cuMemAlloc_v2(ctypes.byref(P), 5 * KB), sys._getframe().f_lineno
    note("generator resumed", 5 * KB, rc, line)
    yield 2


def case_generator():
    for _ in gen():
        pass


async def coro_leaf():
    await asyncio.sleep(0)
    rc, line = CUDA.cuMemAlloc_v2(ctypes.byref(P), 6 * KB), sys._getframe().f_lineno
    note("coroutine", 6 * KB, rc, line)


async def coro_root():
    await coro_leaf()


def case_coroutine():
    asyncio.run(coro_root())


def case_gil_held():
    rc, line = CUDA_GIL.cuMemAlloc_v2(ctypes.byref(P), 7 * KB), sys._getframe().f_lineno
    note("GIL held", 7 * KB, rc, line)


def case_c_thread(ctx):
    # A thread C started and that never ran Python: no Python frames.
    assert CTHREAD.cpt_alloc_in_c_thread(ctx, ctypes.c_size_t(8 * KB)) == 0
    MANIFEST.append({"case": "C thread", "size": 8 * KB, "frames": [],
                     "native0": "libcthread.so"})


def case_c_thread_callback(ctx):
    # A thread C started that calls back into Python: only the callback's
    # frames exist on it.  The context is per thread: make ours current.
    def cb():
        assert CUDA.cuCtxSetCurrent(ctx) == 0
        rc, line = CUDA.cuMemAlloc_v2(ctypes.byref(P), 9 * KB), sys._getframe().f_lineno
        note("C thread callback", 9 * KB, rc, line)
    fn = CALLBACK(cb)
    assert CTHREAD.cpt_call_in_c_thread(fn) == 0


def case_churn():
    churn(CUDA, [(100 + i) * KB for i in range(48)],
          os.path.dirname(os.path.abspath(os.environ["CP_MANIFEST"])))


def case_atexit():
    rc, line = CUDA.cuMemAlloc_v2(ctypes.byref(P), 10 * KB), sys._getframe().f_lineno
    note("atexit", 10 * KB, rc, line)


atexit.register(write_manifest)     # registered first: runs last
ctx = setup(CUDA)
rc, line = CUDA.cuMemAlloc_v2(ctypes.byref(P), 1 * KB), sys._getframe().f_lineno
note("module level", 1 * KB, rc, line)
case_nested()
case_repeat()
case_thread(ctx)
case_generator()
case_coroutine()
case_gil_held()
case_c_thread(ctx)
case_c_thread_callback(ctx)
case_churn()
atexit.register(case_atexit)
