"""triton_add.py clean|bug - a Triton kernel (fused add + scale) launched
300 times on 16 MiB tensors.
bug: each step's output is allocated anew and kept (`outs.append(...)`):
memory grows to the end (memory-growth at the allocation line)."""
import sys

import torch
import triton
import triton.language as tl

BUG = sys.argv[1:] == ["bug"]


@triton.jit
def add_scale(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, (x + y) * 0.5, mask=mask)


n = 4 << 20
x = torch.randn(n, device="cuda")
y = torch.randn(n, device="cuda")
out = torch.empty_like(x)
outs = []
grid = (triton.cdiv(n, 1024),)
for step in range(300):
    if BUG:
        out = torch.empty_like(x)   # EXPECT: memory-growth
        outs.append(out)
    add_scale[grid](x, y, out, n, BLOCK=1024)
    if step % 100 == 0:
        print("step", step, float(out[0]))
torch.cuda.synchronize()
print("done")
