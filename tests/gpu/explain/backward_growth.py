"""backward_growth.py - a plain PyTorch loop that keeps every step's
activations in a list: memory grows, and the caching allocator takes its
new segments where a step peaks, in the backward pass, on the autograd
engine's threads (no Python frames).  Expected: memory-growth with a site
at a line of this file (the companion names the line that called
backward()).  Argument "clean" (the accuracy suite): nothing is kept."""
import sys

import torch

CLEAN = sys.argv[1:] == ["clean"]

model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(4)]).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
kept = []
for step in range(60):
    x = torch.randn(1024, 2048, device="cuda")
    out = model(x)
    if not CLEAN:
        kept.append(out)                            # every step's activations stay
    loss = out.square().mean()
    loss.backward()  # EXPECT: memory-growth
    opt.step()
    opt.zero_grad(set_to_none=True)
    if step % 10 == 0:
        print(step, torch.cuda.memory_allocated() >> 20, "MiB allocated")
print("done", len(kept))
