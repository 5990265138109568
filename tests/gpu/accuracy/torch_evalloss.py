"""torch_evalloss.py clean|bug - a PyTorch training loop (MLP, 240 steps) that
validates on a held-out batch every other step and sums the validation loss,
under each of the caching allocator's settings (run.py sets
PYTORCH_CUDA_ALLOC_CONF: native, expandable_segments:True,
backend:cudaMallocAsync).
bug: the validation runs without torch.no_grad() and the loss is summed as a
tensor (`val_total += loss`, not `loss.item()`): the sum references every
validation's graph, which holds that forward pass's activations, so memory
grows to the end (memory-growth at the validation line, which allocates
what is kept)."""
import sys

import torch

BUG = sys.argv[1:] == ["bug"]
torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                            torch.nn.Linear(4096, 1024)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
loss_fn = torch.nn.MSELoss()
x = torch.randn(512, 1024, device=dev)
x_val = torch.randn(512, 1024, device=dev)
val_total = 0.0
for step in range(240):
    loss = loss_fn(model(x), x)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 2:
        continue
    if BUG:
        val_total += loss_fn(model(x_val), x_val)   # EXPECT: memory-growth
    else:
        with torch.no_grad():
            val_total += loss_fn(model(x_val), x_val).item()
    if step % 80 == 0:
        print("step", step, float(loss))
print("done", float(val_total) / 120, torch.cuda.memory_allocated() >> 20, "MiB allocated")
