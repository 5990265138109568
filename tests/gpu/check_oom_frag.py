"""check_oom_frag.py - a fragmentation OOM under PyTorch: fill the card with
1 GiB tensors, free them, refill the cached segments with 100 MiB tensors,
free every other one, then ask for 4 GiB.  Expect oom verdict fragmentation
(reserved-but-unallocated within 1% of PyTorch's own message, largest free
block 100 MiB)."""
import torch

GiB, MiB = 1 << 30, 1 << 20
big = []
try:
    while True:
        big.append(torch.empty(GiB, dtype=torch.uint8, device="cuda"))
except torch.OutOfMemoryError:
    pass
n = len(big)
del big
small = []
try:
    for _ in range(n * 10):
        small.append(torch.empty(100 * MiB, dtype=torch.uint8, device="cuda"))
except torch.OutOfMemoryError:
    pass
for i in range(0, len(small), 2):
    small[i] = None
try:
    x = torch.empty(4 * GiB, dtype=torch.uint8, device="cuda")   # FRAG
except torch.OutOfMemoryError as e:
    print("OOM:", " ".join(str(e).split())[:400])
small = None
torch.cuda.empty_cache()
