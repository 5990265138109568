"""torch_cpu_batches.py clean|bug - a PyTorch training loop (MLP, 200 steps)
that adds fresh noise to its input every step (a denoising objective), under
expandable segments.
bug: the noise is made on the CPU and moved with .to(device,
non_blocking=True): a tensor made each step in ordinary (pageable) host
memory, so every "asynchronous" copy blocks the loop while the driver stages
it (pageable-async-copy at that line).  The clean run makes the noise on
the GPU, where it belongs."""
import sys

import torch

BUG = sys.argv[1:] == ["bug"]
torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.GELU(),
                            torch.nn.Linear(2048, 1024)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
clean_x = torch.randn(1024, 1024, device=dev)
for step in range(200):
    if BUG:
        noise = torch.randn(1024, 1024).to(dev, non_blocking=True)   # EXPECT: pageable-async-copy
    else:
        noise = torch.randn(1024, 1024, device=dev)
    loss = (model(clean_x + 0.1 * noise) - clean_x).pow(2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 50 == 0:
        print("step", step, float(loss))
torch.cuda.synchronize()
print("done")
