"""check_fork.py - CUDA initialised, then fork, and the child uses the driver
(through ctypes, since PyTorch itself refuses): fork-after-init."""
import ctypes
import os

import torch

t = torch.ones(16, device="cuda")
pid = os.fork()
if pid == 0:
    cuda = ctypes.CDLL("libcuda.so.1")
    ptr = ctypes.c_uint64()
    r = cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(1 << 20))   # CHILD
    os._exit(0 if r in (0, 3, 4) else 1)
_, status = os.waitpid(pid, 0)
print("fork child status", status >> 8, "sum", t.sum().item())
