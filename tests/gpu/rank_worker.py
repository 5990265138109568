# rank_worker.py - one rank of a 2-rank torchrun job (tests/gpu/ranks_torchrun.sh).
# placement "bug": device="cuda" and no set_device: every rank on GPU 0.
# placement "good": torch.cuda.set_device(LOCAL_RANK) first.
import os
import sys

import torch

placement = sys.argv[1] if len(sys.argv) > 1 else "good"
lr = int(os.environ.get("LOCAL_RANK", "0"))
if placement == "good":
    torch.cuda.set_device(lr)
dev = torch.device(f"cuda:{lr}") if placement == "good" else torch.device("cuda")
model = torch.nn.Linear(1024, 1024).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(256, 1024, device=dev)
for _ in range(20):
    opt.zero_grad(set_to_none=True)
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print(f"rank {os.environ.get('RANK')} local {lr} on {torch.cuda.current_device()} loss {loss.item():.4f}")
