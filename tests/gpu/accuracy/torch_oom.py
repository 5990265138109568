"""torch_oom.py clean|bug - nearest neighbours of 200,000 embeddings
(256 floats each) with torch.cdist, native allocator.
bug: the whole distance matrix in one call: 200,000 x 200,000 floats is
160 GB, more than any one card holds, and PyTorch raises an out-of-memory
error there (oom at that line).  The clean run takes the queries 8,192 at a
time, 6.5 GB each."""
import sys

import torch

BUG = sys.argv[1:] == ["bug"]
torch.manual_seed(0)
emb = torch.randn(200_000, 256, device="cuda")
if BUG:
    nearest = torch.cdist(emb, emb).topk(2, largest=False).indices[:, 1]   # EXPECT: oom
else:
    parts = []
    for i in range(0, emb.shape[0], 8192):
        d = torch.cdist(emb[i:i + 8192], emb)
        rows = torch.arange(d.shape[0], device=d.device)
        d[rows, rows + i] = float("inf")                # not its own neighbour
        parts.append(d.argmin(1))
    nearest = torch.cat(parts)
print("done", int(nearest[:8].sum()))
