"""clean_gpt2.py - a clean GPT-2 small training run (transformers, random
init) fed from a pinned loader: must report no warning or error."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_layer=6)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
data = torch.randint(0, 50257, (20, 8, 256))
loader = torch.utils.data.DataLoader(data, batch_size=None, pin_memory=True)
losses = []
for step, ids in enumerate(loader):
    ids = ids.to("cuda", non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(ids, labels=ids).loss
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    losses.append(loss.detach())
print("gpt2 losses", [round(v, 4) for v in torch.stack(losses).tolist()])
