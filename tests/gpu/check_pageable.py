"""check_pageable.py - expect pageable-async-copy at the line marked PAGEABLE
(and nothing for the pinned copy above it)."""
import torch

src_pinned = torch.randn(4 << 20).pin_memory()
src_pageable = torch.randn(4 << 20)
acc = torch.zeros(4 << 20, device="cuda")
for step in range(30):
    acc += src_pinned.to("cuda", non_blocking=True)
    acc += src_pageable.to("cuda", non_blocking=True)   # PAGEABLE
torch.cuda.synchronize()
print("pageable done %.3f" % acc.sum().item())
