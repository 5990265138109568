"""triton_launch.py - a Triton kernel (its launcher reaches cuLaunchKernelEx
through dlsym on libcuda's handle).  Launches it LAUNCHES times."""
import torch
import triton
import triton.language as tl

LAUNCHES = 50


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


n = 1 << 20
x = torch.arange(n, device="cuda", dtype=torch.float32)
y = torch.ones(n, device="cuda", dtype=torch.float32)
out = torch.empty_like(x)
for _ in range(LAUNCHES):
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
torch.cuda.synchronize()
print("triton launches=%d checksum=%.1f" % (LAUNCHES, out.sum().item()))
