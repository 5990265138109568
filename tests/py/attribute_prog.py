"""attribute_prog.py torch|cupy - a training loop that keeps a little memory
every step at one line while its pool is refilled at another, for
tests/sh/framework_attribute.sh.

Runs under the shim on the fake driver with the stand-in frameworks of
tests/py/standins, installed by the test under a site-packages directory
as pip would, whose pools take their memory from the driver (cuMemAlloc,
STANDIN_TORCH_DRIVER=1 / STANDIN_CUPY_DRIVER=1).  Each step allocates a
temporary (the forward pass) and frees it, then keeps a smaller block:
best fit puts the kept block in the temporary's freed memory, so the next
step's temporary finds the cache short and the pool takes a new segment
from the driver at the temporary's line (REFILL), while the memory that
stays is allocated at KEEP.  Lines the test looks up end with "# MARK".
"""
import ctypes
import sys
import time

import pystack_common

MiB = 1 << 20
STEPS = 80
CUDA = ctypes.CDLL("libcuda.so.1")


def setup():
    """A context (pystack_common.setup) and the fake driver's no-op kernel."""
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    pystack_common.setup(CUDA)
    assert CUDA.cuModuleLoadData(ctypes.byref(mod), b"fake") == 0
    assert CUDA.cuModuleGetFunction(ctypes.byref(fn), mod, b"fake_noop") == 0
    return fn


def first_sample(framework, timeout=10.0):
    """Wait until the companion's attribution for framework has taken its
    first sample (its thread can be slow to run on a loaded machine); at
    once when attribution is off."""
    try:
        from cuprobe_companion import _core
    except ImportError:
        return
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        state = _core._state
        attrib = state.attributors.get(framework) if state is not None else None
        if attrib is None or attrib.sites.seq >= 1:
            return
        time.sleep(0.01)


def work(fn):
    for _ in range(8):
        assert CUDA.cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, None, None, None) == 0


def torch_loop(fn):
    import torch

    torch.cuda.init()
    weights = torch.cuda._standin_alloc(32 * MiB)  # WEIGHTS
    scores = []
    for _ in range(STEPS):
        act = torch.cuda._standin_alloc(12 * MiB)  # TORCH REFILL
        work(fn)
        torch.cuda._standin_free(act)
        scores.append(torch.cuda._standin_alloc(2 * MiB))  # TORCH KEEP
        assert CUDA.cuCtxSynchronize() == 0    # loss.item(): the step's read-back
        time.sleep(0.01)
    return len(scores), weights


def cupy_loop(fn):
    import cupy

    pool = cupy.get_default_memory_pool()
    keep = []
    for _ in range(STEPS):
        c = pool.malloc(4 * MiB)  # CUPY KEEP
        t = pool.malloc(4 * MiB)  # CUPY REFILL
        work(fn)
        pool.free(t)
        keep.append(c)
        assert CUDA.cuCtxSynchronize() == 0
        time.sleep(0.01)
    return len(keep), None


def cupy_short(fn):
    """A loop shorter than attribution's least gap between samples (one
    sample at its first segment, the next at exit), then a library's
    workspace freed before the exit's sample: the teardown has begun, but
    the exit's sample still sees every kept block."""
    import cupy

    ws = ctypes.c_void_p()
    assert CUDA.cuMemAlloc_v2(ctypes.byref(ws), 192 << 10) == 0   # a library's workspace
    pool = cupy.get_default_memory_pool()
    keep = []
    for step in range(24):
        keep.append(pool.malloc(4 * MiB))  # SHORT KEEP
        t = pool.malloc(4 * MiB)
        work(fn)
        pool.free(t)
        assert CUDA.cuCtxSynchronize() == 0
        if step == 0:
            first_sample("cupy")
    assert CUDA.cuMemFree_v2(ws) == 0
    return len(keep), None


def main():
    fn = setup()
    kept, _ = {"torch": torch_loop, "cupy": cupy_loop,
               "cupy_short": cupy_short}[sys.argv[1]](fn)
    print("steps done, kept", kept)


if __name__ == "__main__":
    main()
