"""A program run by framework_test.py, with and without cuprobe's companion.

Usage: framework_prog.py SCENARIO.  It uses the stand-in frameworks of
tests/py/standins (PyTorch 2.11 API) and prints what a user program would;
its output and exit status must not depend on the companion.

Scenarios:
  plain       no framework at all; prints the threads and companion modules
  import      imports torch, never initialises CUDA
  frag        the fragmentation OOM of check_oom_frag.py, scaled down: fill the card
              with 64 MiB tensors, free them, refill the cached segments
              with 6 MiB tensors, free every other one, ask for 256 MiB
  uncaught    an OOM that is not caught (traceback, exit status 1)
  periodic    initialise CUDA, hold some memory, sleep PROG_SLEEP seconds
  exitcode    some work, then sys.exit(3)
  grow        on the fake driver: 24 steps 40 ms apart, each keeps an 8 MiB
              tensor and launches a kernel; every new stand-in segment is
              also taken from the driver (cuMemAlloc), as PyTorch does
  steady      on the fake driver: 60 stream-ordered allocations of 8 MiB,
              each freed before the next, 10 ms apart (cudaMallocAsync's
              steady state: device memory never above its first peak)
  cupy        CuPy pool use, then exit
  jax         JAX backends initialised, then exit
"""
import os
import sys
import time

MiB = 1 << 20


def report_threads():
    import threading

    names = sorted(t.name for t in threading.enumerate())
    print("threads:", names)
    print("companion modules:", sorted(m for m in sys.modules
                                       if m.startswith("cuprobe_companion")))


def fill_and_fragment(torch):
    big = []
    try:
        while True:
            big.append(torch.cuda._standin_alloc(64 * MiB))
    except torch.cuda.OutOfMemoryError:
        pass
    for p in big:
        torch.cuda._standin_free(p)
    small = []
    try:
        while True:
            small.append(torch.cuda._standin_alloc(6 * MiB))
    except torch.cuda.OutOfMemoryError:
        pass
    for p in small[::2]:
        torch.cuda._standin_free(p)
    return len(big), len(small)


def grow(torch):
    """Live tensors growing: the allocator takes a 20 MiB segment every
    second step, and the driver sees each one."""
    import ctypes

    cuda = ctypes.CDLL("libcuda.so.1")
    dev, ctx, mod, fn = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    assert cuda.cuInit(0) == 0
    assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0
    assert cuda.cuModuleLoadData(ctypes.byref(mod), b"fake") == 0
    assert cuda.cuModuleGetFunction(ctypes.byref(fn), mod, b"fake_noop") == 0
    kept, reserved = [], 0
    for _ in range(int(os.environ.get("PROG_STEPS", "24"))):
        for _ in range(8):
            assert cuda.cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, None, None, None) == 0
        kept.append(torch.cuda._standin_alloc(8 * MiB))
        now = torch.cuda.memory_stats()["reserved_bytes.all.current"]
        if now > reserved:
            p = ctypes.c_uint64()
            assert cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(now - reserved)) == 0
            reserved = now
        time.sleep(0.04)
    print("kept", len(kept), "reserved", reserved)
    return 0


def steady(torch):
    """Stream-ordered allocations that never raise the live device bytes
    above the first one's: the shim must not wake the segment watch."""
    import ctypes

    cuda = ctypes.CDLL("libcuda.so.1")
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    assert cuda.cuInit(0) == 0
    assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0
    n = int(os.environ.get("PROG_STEPS", "60"))
    for _ in range(n):
        p = ctypes.c_uint64()
        assert cuda.cuMemAllocAsync(ctypes.byref(p), ctypes.c_size_t(8 * MiB), None) == 0
        assert cuda.cuMemFreeAsync(p, None) == 0
        time.sleep(0.01)
    print("steady", n)
    return 0


def main(scenario):
    if scenario == "plain":
        print("hello")
        report_threads()
        return 0
    if scenario in ("cupy", "jax"):
        if scenario == "cupy":
            import cupy

            pool = cupy.get_default_memory_pool()
            ptrs = [pool.malloc(3 * MiB) for _ in range(4)]
            pool.free(ptrs[0])
        else:
            import jax

            print("devices:", len(jax.devices()))
        time.sleep(float(os.environ.get("PROG_SLEEP", "0")))
        print("done", scenario)
        return 0
    import torch

    if scenario == "import":
        print("torch", torch.__version__, "cuda initialised:",
              torch.cuda.is_initialized())
        report_threads()
        return 0
    torch.cuda.init()
    if scenario == "frag":
        n_big, n_small = fill_and_fragment(torch)
        try:
            torch.cuda._standin_alloc(256 * MiB)
        except torch.cuda.OutOfMemoryError as exc:
            print("caught:", exc)
        print("big", n_big, "small", n_small)
        print("init by:", torch.cuda._standin_init_source)
        return 0
    if scenario == "grow":
        return grow(torch)
    if scenario == "steady":
        return steady(torch)
    if scenario == "uncaught":
        torch.cuda._standin_alloc(4 << 30)
        return 0
    keep = [torch.cuda._standin_alloc(40 * MiB) for _ in range(3)]
    torch.cuda._standin_free(keep[1])
    if scenario == "periodic":
        time.sleep(float(os.environ.get("PROG_SLEEP", "0.5")))
        print("slept")
        return 0
    if scenario == "exitcode":
        print("leaving with 3")
        sys.stdout.flush()
        sys.exit(3)
    print("unknown scenario", scenario, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
