"""fatal_prog.py SCENARIO - a run that dies, for tests/sh/fatal_error.sh.

Runs under the shim on the fake driver (tests/fakecuda, through ctypes, which
releases the GIL as PyTorch does) with the stand-in PyTorch of
tests/py/standins, and dies the way a PyTorch program does.  Every raising
line ends with a "# RAISE" marker that the test looks up, so it checks the
report names exactly that line.

Scenarios:
  mismatch   CPU labels against CUDA logits: PyTorch 2.11's exact message
  nocuda     a CPU-only torch (STANDIN_TORCH_CUDA=): torch.cuda.init()
             raises "Torch not compiled with CUDA enabled"
  oom        a failed cuMemAlloc, then the OutOfMemoryError PyTorch raises
  thread     a worker thread dies of a device mismatch; the run goes on
             and exits 0
  async      five kernel launches from three lines, the third faults
             (FAKECUDA_FAIL_LAUNCH=3): the sync after them raises 700
  assert     five kernel launches, the third trips a device-side assert
             (FAKECUDA_FAIL_LAUNCH=3 FAKECUDA_FAIL_CODE=710); the next call,
             cuBLAS's, fails and PyTorch raises cuBLAS's own error, which
             names no CUDA error
  other      a GPU program that dies of an ordinary ValueError
  init       the toolkit's stub libcuda (FAKECUDA_STUB=1): cuInit fails and
             the program raises PyTorch's initialisation error
  nccl       rank 1's NCCL watchdog timeout (PyTorch 2.11's message)
  caught     an exception caught by the program: exit 0
  pool       a multiprocessing Pool of 2 "spawn" workers, each on the GPU;
             its `with` block ends with terminate(), which kills them with
             SIGTERM, and the run exits 0
  poolfail   the same, then the parent dies of an exception (exit 1)
"""
import multiprocessing
import ctypes
import sys
import threading

import torch

CUDA = ctypes.CDLL("libcuda.so.1")
GiB = 1 << 30


def setup():
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    assert CUDA.cuInit(0) == 0
    assert CUDA.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert CUDA.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0
    return ctx


def alloc(nbytes):
    p = ctypes.c_uint64()
    return CUDA.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(nbytes)), p.value


def cross_entropy(logits, labels):
    raise RuntimeError(  # RAISE mismatch
        "Expected all tensors to be on the same device, but got target is on cpu, "
        "different from other tensors on cuda:0 (when checking argument in method "
        "wrapper_CUDA_nll_loss_forward)")


def mismatch():
    setup()
    assert alloc(64 << 20)[0] == 0          # the logits, on GPU 0
    cross_entropy("logits", "labels")


def nocuda():
    torch.cuda.init()  # RAISE nocuda


def oom():
    setup()
    assert alloc(256 << 20)[0] == 0
    rc, _ = alloc(2 * GiB)
    assert rc == 2, rc
    raise torch.OutOfMemoryError(  # RAISE oom
        "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "1.00 GiB of which 768.00 MiB is free. Of the allocated memory 256.00 MiB is "
        "allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.")


def load_batch():
    raise RuntimeError("Expected all tensors to be on the same device, but found at least "  # RAISE thread
                       "two devices, cuda:0 and cpu!")


def thread():
    t = threading.Thread(target=load_batch, name="loader")
    t.start()
    t.join()
    print("main went on")


def launch(f, grid):
    return CUDA.cuLaunchKernel(f, grid, 1, 1, 128, 1, 1, 0, None, None, None)


def five_launches():
    """Five kernel launches after a synchronisation; the third is the one
    FAKECUDA_FAIL_LAUNCH=3 makes fault."""
    setup()
    mod, f = ctypes.c_void_p(), ctypes.c_void_p()
    assert CUDA.cuModuleLoadData(ctypes.byref(mod), b"fake") == 0
    assert CUDA.cuModuleGetFunction(ctypes.byref(f), mod, b"fake_noop") == 0
    assert CUDA.cuCtxSynchronize() == 0     # before: nothing in flight
    assert launch(f, 1) == 0  # LAUNCH 1
    assert launch(f, 2) == 0  # LAUNCH 2
    assert launch(f, 3) == 0  # CULPRIT
    assert launch(f, 4) == 0  # LAUNCH 4
    assert launch(f, 5) == 0  # LAUNCH 5


def async_fault():
    five_launches()
    rc = CUDA.cuCtxSynchronize()
    if rc != 0:
        raise RuntimeError(  # RAISE async
            "CUDA error: an illegal memory access was encountered\nCUDA kernel errors might "
            "be asynchronously reported at some other API call, so the stacktrace below "
            "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1")


def device_assert():
    five_launches()
    rc = CUDA.cuCtxSynchronize()            # cuBLAS's check of its own launch
    if rc != 0:
        raise RuntimeError(  # RAISE assert
            "CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, "
            "opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`")


def other():
    setup()
    assert alloc(64 << 20)[0] == 0
    raise ValueError("unknown optimizer 'adamw2'")  # RAISE other


def init():
    rc = CUDA.cuInit(0)
    if rc != 0:
        raise RuntimeError("Unexpected error from cudaGetDeviceCount(). Did you run some "  # RAISE init
                           "cuda functions before calling NumCudaDevices() that might have "
                           "already set an error? Error 34: CUDA driver is a stub library")


def allreduce():
    raise torch.distributed.DistBackendError(  # RAISE nccl
        "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, "
        "OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for "
        "600008 milliseconds before timing out.")


def nccl():
    setup()
    assert alloc(64 << 20)[0] == 0          # the gradients' bucket, on GPU 0
    allreduce()


def caught():
    try:
        cross_entropy("logits", "labels")
    except RuntimeError:
        print("caught")


def pool_work(i):
    setup()
    return alloc(1 << 20)[0] + i


def pool(fail=False):
    setup()
    assert alloc(1 << 20)[0] == 0
    with multiprocessing.get_context("spawn").Pool(2) as workers:
        print("pool", sum(workers.map(pool_work, range(4))))
    if fail:
        raise ValueError("after the pool")  # RAISE poolfail


def main():
    scenario = sys.argv[1]
    {"mismatch": mismatch, "nocuda": nocuda, "oom": oom, "thread": thread,
     "async": async_fault, "assert": device_assert, "other": other, "init": init,
     "nccl": nccl, "caught": caught, "pool": pool,
     "poolfail": lambda: pool(True)}[scenario]()


if __name__ == "__main__":
    main()
