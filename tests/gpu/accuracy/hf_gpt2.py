"""hf_gpt2.py clean|bug - Hugging Face transformers: a tiny GPT-2 built from
its config (no download) trained on random tokens for 200 steps.
bug: every step also evaluates a batch with autograd on and keeps the loss
(`val_losses.append(...)`): each kept loss holds its whole graph, so memory
grows to the end (memory-growth at the evaluation line)."""
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel

BUG = sys.argv[1:] == ["bug"]
torch.manual_seed(0)
dev = torch.device("cuda")
cfg = GPT2Config(vocab_size=2048, n_positions=256, n_embd=256, n_layer=4, n_head=4)
model = GPT2LMHeadModel(cfg).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(0, cfg.vocab_size, (8, 256), device=dev)
val = torch.randint(0, cfg.vocab_size, (4, 256), device=dev)
val_losses = []
for step in range(200):
    loss = model(ids, labels=ids).loss
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if BUG:
        val_losses.append(model(val, labels=val).loss)   # EXPECT: memory-growth
    if step % 50 == 0:
        print("step", step, float(loss))
print("done", torch.cuda.memory_allocated() >> 20, "MiB allocated")
