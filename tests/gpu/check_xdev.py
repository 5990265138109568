"""check_xdev.py - needs 2 GPUs.  A Triton kernel launched on GPU 0 given a
tensor of GPU 1 (line marked XDEV): cross-device-access.  Peer access is
enabled first (a cross-device copy does that), so the kernel does not fault."""
import ctypes

import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


x1 = torch.ones(1 << 16, device="cuda:1")
x0 = x1.to("cuda:0")
# Triton refuses pointers its context cannot map: enable peer access 0 -> 1
# the way a program that "works" on an NVLink machine has it.
torch.cuda.set_device(0)
cudart = ctypes.CDLL("libcudart.so.13")
print("enable peer access:", cudart.cudaDeviceEnablePeerAccess(1, 0))
with torch.cuda.device(0):
    scale[(64,)](x0, x0.numel(), BLOCK=1024)
    scale[(64,)](x1, x1.numel(), BLOCK=1024)   # XDEV
torch.cuda.synchronize(0)
torch.cuda.synchronize(1)
print("xdev done", x0.sum().item(), x1.sum().item())
