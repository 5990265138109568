"""torch_device_assert.py clean|bug - a PyTorch classifier (10 classes) trained
for 100 steps with cross_entropy.
bug: the labels are 1-based, 1..10, as in the data's CSV: class 10 does not
exist, and the loss kernel's bounds check fails on the GPU (a device-side
assert; the error surfaces at a later call).  fatal-error naming the line
whose launch failed, among the launches in flight."""
import sys

import torch
import torch.nn.functional as F

BUG = sys.argv[1:] == ["bug"]
torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-2)
x = torch.randn(4096, 256, device=dev)
first = 1 if BUG else 0                             # the CSV's labels are 1..10
labels = torch.randint(first, first + 10, (4096,), device=dev)
for step in range(100):
    i = (step * 512) % 4096
    loss = F.cross_entropy(model(x[i:i + 512]), labels[i:i + 512])   # EXPECT: fatal-error +kernel-log
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 25 == 0:
        print("step", step, loss.item())
print("done")
