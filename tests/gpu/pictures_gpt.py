"""pictures_gpt.py - a short GPT-2-like training run for the pictures
(tests/gpu/pictures.sh): a 6-layer causal transformer in plain PyTorch (no
transformers needed), AdamW, bf16 autocast, a pinned loader, 40 steps.
With --ddp (under torchrun) each rank trains its own shard with
DistributedDataParallel over NCCL, or over gloo when the ranks outnumber
the GPUs (2 ranks sharing one H200: NCCL refuses two ranks on a device)."""
import os
import sys

import torch
import torch.nn as nn

ddp = "--ddp" in sys.argv
rank = int(os.environ.get("RANK", "0"))
if ddp:
    import torch.distributed as dist
    nproc = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
    dist.init_process_group("nccl" if torch.cuda.device_count() >= nproc else "gloo")
torch.manual_seed(rank)
V, D, L, T = 50257, 512, 6, 256


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.pos = nn.Embedding(T, D)
        layer = nn.TransformerEncoderLayer(D, 8, 4 * D, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, L)
        self.head = nn.Linear(D, V, bias=False)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        mask = nn.Transformer.generate_square_subsequent_mask(ids.shape[1], device=ids.device)
        return self.head(self.blocks(x, mask=mask, is_causal=True))


model = GPT().cuda()
if ddp:
    model = nn.parallel.DistributedDataParallel(model)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
data = torch.randint(0, V, (40, 8, T))
loader = torch.utils.data.DataLoader(data, batch_size=None, pin_memory=True)
losses = []
for ids in loader:
    ids = ids.to("cuda", non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(ids[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, V).float(), ids[:, 1:].reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    losses.append(loss.detach())
print("rank", rank, "losses", [round(v, 3) for v in torch.stack(losses)[::8].tolist()])
if ddp:
    dist.destroy_process_group()
