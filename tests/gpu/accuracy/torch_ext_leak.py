"""torch_ext_leak.py clean|bug - PyTorch with a native extension's scratch
memory: each step normalises a batch of rows through a scratch buffer the
extension takes from the driver itself (here cuMemAlloc through ctypes, as a
C library would), shown to PyTorch through __cuda_array_interface__.  100
steps of 64 KiB.
bug: the buffer's free() is never called: every step leaves 64 KiB behind,
which no caching allocator owns (leak at the allocation line: one site left
100 allocations, with kernels launched between them).  The clean run frees
it once its work is done."""
import ctypes
import sys

import torch

BUG = sys.argv[1:] == ["bug"]
libcuda = ctypes.CDLL("libcuda.so.1")
libcuda.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
libcuda.cuMemFree_v2.argtypes = [ctypes.c_uint64]


class Scratch:
    """n float32s of device memory from the driver."""

    def __init__(self, n):
        self.ptr = ctypes.c_uint64()
        rc = libcuda.cuMemAlloc_v2(ctypes.byref(self.ptr), n * 4)   # EXPECT: leak
        if rc != 0:
            raise RuntimeError("cuMemAlloc_v2 failed: %d" % rc)
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "strides": None,
                                         "data": (self.ptr.value, False), "version": 2}

    def free(self):
        libcuda.cuMemFree_v2(self.ptr)


def normalize_(rows):
    """rows /= their L2 norms, through the extension's scratch buffer."""
    scratch = Scratch(rows.numel())
    tmp = torch.as_tensor(scratch, device=rows.device).view_as(rows)
    torch.mul(rows, rows.pow(2).sum(1, keepdim=True).rsqrt(), out=tmp)
    rows.copy_(tmp)
    if not BUG:
        torch.cuda.current_stream().synchronize()   # the work on it is done
        scratch.free()


torch.manual_seed(0)
x = torch.randn(4096, 1024, device="cuda")          # the primary context is current now
w = torch.randn(1024, 1024, device="cuda") / 32
total = torch.zeros((), device="cuda")
for step in range(100):
    rows = x[(step * 16) % 4096:(step * 16) % 4096 + 16] @ w
    normalize_(rows)
    total += rows.sum()
print("done", float(total))
