"""ddp_train.py clean|bug - DDP under torchrun on 2 GPUs (NCCL): each rank
trains an MLP on its own GPU for 100 steps.
bug: the ranks never call torch.cuda.set_device, and one tensor is made
with device="cuda": on rank 1 that is GPU 0, where the rank opens a second
context and allocates (stray-device at that line)."""
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

BUG = sys.argv[1:] == ["bug"]
rank = int(os.environ["LOCAL_RANK"])
dev = torch.device("cuda", rank)
if not BUG:
    torch.cuda.set_device(rank)
dist.init_process_group("nccl", device_id=dev)
model = torch.nn.Linear(1024, 1024).to(dev)
ddp = DDP(model, device_ids=[rank])
opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
x = torch.randn(256, 1024, device=dev)
seen = torch.zeros(1, device="cuda" if BUG else dev)   # EXPECT: stray-device
for step in range(100):
    loss = ddp(x).pow(2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
print("rank", rank, "done", float(loss), int(seen.numel()))
dist.destroy_process_group()
