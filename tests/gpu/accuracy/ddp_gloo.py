"""ddp_gloo.py clean|bug - DDP under torchrun with 2 ranks sharing the only
GPU (gloo backend: NCCL refuses two ranks on one device).  Each rank trains
an MLP for 60 steps on batches that come from host memory.
clean: the batches are pinned, so non_blocking copies are asynchronous; two
       ranks on a 1-GPU host is the only placement possible (no
       rank-placement finding expected).
bug:   the batches are pageable, so every non_blocking copy blocks the rank
       (pageable-async-copy at that line, the same on both ranks)."""
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

BUG = sys.argv[1:] == ["bug"]
rank = int(os.environ["LOCAL_RANK"])
dev = torch.device("cuda", rank % torch.cuda.device_count())
torch.cuda.set_device(dev)
dist.init_process_group("gloo")
torch.manual_seed(rank)
model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 1024)).to(dev)
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
batches = [torch.randn(256, 1024) for _ in range(4)]
if not BUG:
    batches = [b.pin_memory() for b in batches]
for step in range(60):
    x = batches[step % 4].to(dev, non_blocking=True)   # EXPECT: pageable-async-copy
    loss = ddp(x).pow(2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
print("rank", rank, "done", float(loss))
dist.destroy_process_group()
