"""check_growth.py - activations kept in a list every step: memory-growth at
the line marked GROWTH; and empty_cache() in the loop: segment churn."""
import torch

keep = []
w = torch.randn(1024, 1024, device="cuda")
for step in range(60):
    x = torch.randn(1024, 1024, device="cuda")
    y = x @ w
    keep.append(torch.empty(16 << 20, dtype=torch.uint8, device="cuda"))   # GROWTH
    tmp = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    del tmp
    torch.cuda.empty_cache()                                              # CHURN
torch.cuda.synchronize()
print("growth done, kept %d buffers" % len(keep))
