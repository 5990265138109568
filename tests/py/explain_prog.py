"""explain_prog.py SCENARIO [LIB] - runs whose report must explain what
really happened, for tests/sh/explain_*.sh.

Runs under the shim on the fake driver (through ctypes, which releases the
GIL as PyTorch does) with the stand-in frameworks of tests/py/standins,
installed by the test under a site-packages directory as pip would.  Lines
the tests look up end with a "# MARK" comment.

Scenarios:
  lookups   a clean numba run on NVIDIA's bindings, which look up every
            driver function at CUDA 13.3 on a 13.0 driver (FAKECUDA_GPA_
            NEWER=1: the missing ones are not found); PyTorch is imported
            and holds a 64 MiB segment; numba holds a 16 MiB array at exit
  needed    the same, then the program calls a function the driver lacks
            and dies of the bindings' 'Function "cuX" not found'
  setdev    torch.cuda.set_device(3) on a machine that shows one GPU
  ctxdev    a driver API program: a context on device 3 of a machine that
            shows one GPU fails, and the program exits 1 (no exception);
            ctxabort: it aborts instead; ctxretry: it falls back to device
            0, allocates there, and exits 2 for a reason of its own
  worker    a DataLoader with 2 workers forked after the parent initialised
            CUDA; __getitem__ makes a CUDA tensor
  workerbug the same, and __getitem__ raises a ValueError of its own
  workerchain the same, and __getitem__ raises a ValueError while handling
            a KeyError (a chained traceback: the ValueError is the one raised)
  backward  24 steps whose backward pass (LIB's pt_autograd_0 thread, no
            Python frames) allocates 8 MiB that the run keeps
"""
import ctypes
import os
import sys
import time

import torch

CUDA = ctypes.CDLL("libcuda.so.1")
MiB = 1 << 20


def setup():
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    assert CUDA.cuInit(0) == 0  # CUDA INIT
    assert CUDA.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert CUDA.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0
    return ctx


def kernel():
    mod, f = ctypes.c_void_p(), ctypes.c_void_p()
    assert CUDA.cuModuleLoadData(ctypes.byref(mod), b"fake") == 0
    assert CUDA.cuModuleGetFunction(ctypes.byref(f), mod, b"fake_noop") == 0
    return f


def launch(f):
    assert CUDA.cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, None, None, None) == 0


def lookups():
    setup()
    torch.cuda._standin_alloc(48 * MiB)   # the model, in a 48 MiB segment
    from numba import cuda

    arr = cuda.device_array(16 * MiB)  # NUMBA ARRAY
    cuda._standin_launch(4)  # NUMBA LAUNCH
    cuda.synchronize()
    print("numba ok", arr.nbytes)
    return arr


def needed():
    arr = lookups()
    from numba.cuda.cudadrv import driver

    driver.get().call("cuStreamBeginRecaptureToGraph")  # RAISE needed
    return arr


def setdev():
    setup()
    torch.cuda.set_device(3)  # RAISE setdev


def ctx_on(ordinal):
    ctx = ctypes.c_void_p()
    return CUDA.cuCtxCreate_v2(ctypes.byref(ctx), 0, ordinal)  # CTX CREATE


def ctxdev():
    assert CUDA.cuInit(0) == 0
    if ctx_on(3) != 0:
        sys.stderr.write("cannot use device 3\n")
        sys.exit(1)


def ctxabort():
    assert CUDA.cuInit(0) == 0
    if ctx_on(3) != 0:
        os.abort()


def ctxretry():
    assert CUDA.cuInit(0) == 0
    if ctx_on(3) != 0:
        assert ctx_on(0) == 0
    ptr = ctypes.c_uint64()
    assert CUDA.cuMemAlloc_v2(ctypes.byref(ptr), 1 << 20) == 0
    sys.exit(2)


class CudaDataset(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, index):
        return torch.empty(1024, device="cuda")  # WORKER LINE


class BadDataset(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, index):
        raise ValueError("sample %d is corrupt" % index)  # WORKER BUG


class LabelDataset(torch.utils.data.Dataset):
    labels = {}

    def __len__(self):
        return 8

    def __getitem__(self, index):
        try:
            return self.labels[index]
        except KeyError:
            raise ValueError("sample %d has no label" % index)  # WORKER CHAIN


def worker():
    setup()
    torch.cuda._standin_alloc(64 * MiB)     # the model, on the GPU
    loader = torch.utils.data.DataLoader(CudaDataset(), batch_size=2, num_workers=2)
    for batch in loader:  # RAISE worker
        print(len(batch))


def workerbug(dataset=BadDataset):
    setup()
    torch.cuda._standin_alloc(64 * MiB)
    loader = torch.utils.data.DataLoader(dataset(), batch_size=2, num_workers=2)
    for batch in loader:  # RAISE workerbug
        print(len(batch))


def workerchain():
    workerbug(LabelDataset)


def backward(lib):
    ctx = setup()
    f = kernel()
    engine = ctypes.CDLL(lib)
    engine.cpt_autograd_step.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                         ctypes.c_size_t)
    torch.cuda.init()
    kept = []
    for _ in range(24):
        for _ in range(8):
            launch(f)                       # the forward pass, on this thread

        def engine_work():
            assert engine.cpt_autograd_step(ctx, f, 4, 8 * MiB) == 0
            # The stand-in allocator's own count of what stays.
            kept.append(torch.cuda._standin_alloc(8 * MiB))

        loss = torch.Tensor("cuda:0", engine=engine_work)
        loss.backward()  # BACKWARD CALL
        assert CUDA.cuCtxSynchronize() == 0    # loss.item(): the step's read-back
        time.sleep(0.02)
    print("steps done")


def main():
    scenario = sys.argv[1]
    if scenario == "backward":
        backward(sys.argv[2])
        return
    {"lookups": lookups, "needed": needed, "setdev": setdev, "ctxdev": ctxdev,
     "ctxabort": ctxabort, "ctxretry": ctxretry, "worker": worker,
     "workerbug": workerbug, "workerchain": workerchain}[scenario]()


if __name__ == "__main__":
    main()
