"""check_blocking.py - loss.item() every step (line marked ITEM): blocking-copy."""
import torch

model = torch.nn.Linear(256, 256).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 256, device="cuda")
total = 0.0
for step in range(50):
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    total += loss.item()   # ITEM
print("blocking done %.4f" % total)
