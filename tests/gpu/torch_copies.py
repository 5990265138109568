"""torch_copies.py - non_blocking copies from pinned and from pageable host
memory, in known numbers, so the trace's classification can be checked.
Prints the checksum of what arrived on the device."""
import torch

N_PINNED, N_PAGEABLE = 25, 15
pinned = torch.arange(1 << 20, dtype=torch.float32).pin_memory()
pageable = torch.arange(1 << 20, dtype=torch.float32)
acc = torch.zeros(1 << 20, device="cuda")
for _ in range(N_PINNED):
    acc += pinned.to("cuda", non_blocking=True)
for _ in range(N_PAGEABLE):
    acc += pageable.to("cuda", non_blocking=True)
torch.cuda.synchronize()
print("copies pinned=%d pageable=%d checksum=%.1f" % (N_PINNED, N_PAGEABLE, acc.sum().item()))
