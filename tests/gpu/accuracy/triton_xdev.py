"""triton_xdev.py clean|bug - needs 2 GPUs.  A Triton kernel (scale in place)
applied to a tensor on each GPU, from a thread whose current device is GPU
0.  Peer access is on between the GPUs (as on an NVLink machine where the
program "works"), so nothing faults.
bug: the launch on GPU 1's tensor has no `with torch.cuda.device(...)`: the
kernel runs on GPU 0 and reads and writes GPU 1's memory across the link
(cross-device-access at that launch).  The clean run launches each kernel
on its tensor's own GPU."""
import contextlib
import ctypes
import sys

import torch
import triton
import triton.language as tl

BUG = sys.argv[1:] == ["bug"]


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * 0.5, mask=m)


def cudart():
    """The CUDA runtime PyTorch loaded."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "libcudart.so" in line:
                return ctypes.CDLL(line.split()[-1])
    return ctypes.CDLL("libcudart.so")


xs = [torch.ones(1 << 20, device="cuda:%d" % d) for d in (0, 1)]
torch.cuda.set_device(0)
print("peer access 0 -> 1:", cudart().cudaDeviceEnablePeerAccess(1, 0))
for step in range(50):
    for x in xs:
        guard = contextlib.nullcontext() if BUG else torch.cuda.device(x.device)
        with guard:
            scale[(x.numel() // 1024,)](x, x.numel(), BLOCK=1024)   # EXPECT: cross-device-access
torch.cuda.synchronize(0)
torch.cuda.synchronize(1)
print("done", [float(x.sum()) for x in xs])
