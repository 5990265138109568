"""backward_growth.py - a plain PyTorch loop keeps every step's activations:
memory grows, the caching allocator taking its segments where a step peaks,
in the backward pass on autograd's threads (no Python frames).  Expected:
memory-growth at a line of this file: with `cuprobe run --attribute` the
marked one, which made what stays; without it, the line that called
backward().  Argument "clean" (the accuracy suite): nothing is kept."""
import sys

import torch

CLEAN = sys.argv[1:] == ["clean"]

model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(4)]).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
kept = []
for step in range(60):
    x = torch.randn(1024, 2048, device="cuda")
    out = model(x)  # EXPECT: memory-growth
    if not CLEAN:
        kept.append(out)                            # every step's activations stay
    loss = out.square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if step % 10 == 0:
        print(step, torch.cuda.memory_allocated() >> 20, "MiB allocated")
print("done", len(kept))
