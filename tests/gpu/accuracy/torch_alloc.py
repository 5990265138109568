"""torch_alloc.py clean|bug - a PyTorch training loop (MLP, 300 steps) run
under each of the caching allocator's settings (run.py sets
PYTORCH_CUDA_ALLOC_CONF: native, expandable_segments:True,
backend:cudaMallocAsync).
bug: every step also scores a batch with autograd on and keeps the result
(`scores.append(...)`): each kept score holds its graph's activations, so
memory grows to the end (memory-growth at the scoring line)."""
import sys

import torch

BUG = sys.argv[1:] == ["bug"]
torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(),
                            torch.nn.Linear(4096, 1024)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(512, 1024, device=dev)
probe = torch.randn(256, 1024, device=dev)
scores = []
for step in range(300):
    loss = (model(x) - x).pow(2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if BUG:
        scores.append(model(probe).sum())   # EXPECT: memory-growth
    if step % 100 == 0:
        print("step", step, float(loss))
print("done", torch.cuda.memory_allocated() >> 20, "MiB allocated")
