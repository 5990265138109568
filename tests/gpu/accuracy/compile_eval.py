"""compile_eval.py clean|bug - torch.compile (default mode) on an MLP
classifier: 200 training steps, with the validation batch scored every
other step for the epoch's accuracy.
bug: the validation runs with autograd on and its logits are kept
(`val_logits.append(...)`): each kept output holds its graph and the
activations saved for a backward that never comes, so memory grows to the
end (memory-growth at that line).  The clean run scores under
torch.no_grad() and keeps only the predicted classes."""
import sys

import torch
import torch.nn.functional as F

BUG = sys.argv[1:] == ["bug"]
torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.GELU(),
                            torch.nn.Linear(2048, 1000)).to(dev)
fast = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=1e-2)
x = torch.randn(512, 1024, device=dev)
y = torch.randint(0, 1000, (512,), device=dev)
x_val = torch.randn(512, 1024, device=dev)
val_logits = []
for step in range(200):
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(fast(x), y)
    loss.backward()
    opt.step()
    if step % 2 == 0 and BUG:
        val_logits.append(fast(x_val))   # EXPECT: memory-growth
    elif step % 2 == 0:
        with torch.no_grad():
            val_logits.append(fast(x_val).argmax(1))
    if step % 50 == 0:
        print("step", step, float(loss))
print("done", len(val_logits), torch.cuda.memory_allocated() >> 20, "MiB allocated")
