"""compile_ro.py clean|bug - torch.compile(mode="reduce-overhead") (CUDA
graphs under the hood) running an MLP for 300 steps on batches uploaded
from pinned host memory.
bug: the batch is uploaded with non_blocking=True from ordinary (pageable)
host memory: the copy blocks (pageable-async-copy at the upload line)."""
import sys

import torch

BUG = sys.argv[1:] == ["bug"]
torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(2048, 4096), torch.nn.GELU(),
                            torch.nn.Linear(4096, 2048)).to(dev).eval()
fast = torch.compile(model, mode="reduce-overhead")
host = torch.randn(1024, 2048)
if not BUG:
    host = host.pin_memory()
with torch.inference_mode():
    for step in range(300):
        x = host.to(dev, non_blocking=True)   # EXPECT: pageable-async-copy
        y = fast(x)
        if step % 100 == 0:
            print("step", step, float(y.float().mean()))
torch.cuda.synchronize()
print("done")
