"""device_mismatch.py clean|bug - needs 2 GPUs.  A program told to work on
GPU 1 (gpu = 1, as from a --gpu flag): the batches go to f"cuda:{gpu}" and
the model to the current device with .cuda().
bug: torch.cuda.set_device(gpu) is missing, so .cuda() puts the model on
GPU 0 while the batches are on GPU 1: the first forward pass raises
"Expected all tensors to be on the same device" (fatal-error at that line;
the model's memory on GPU 0 may be called a stray device too).  The clean
run sets the device first."""
import sys

import torch

BUG = sys.argv[1:] == ["bug"]
gpu = 1
if not BUG:
    torch.cuda.set_device(gpu)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 1)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
data = torch.randn(8, 256, 1024)
for step in range(40):
    x = data[step % 8].to(f"cuda:{gpu}")
    loss = model(x).pow(2).mean()   # EXPECT: fatal-error +stray-device
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
print("done", float(loss))
