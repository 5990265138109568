"""check_oom_capacity.py - a plain capacity OOM: 8 GiB blocks until the card is
full (line marked FILL), caught.  Expect oom with verdict capacity, naming
the FILL line as the dominant site."""
import torch

blocks = []
try:
    while True:
        blocks.append(torch.empty(8 << 30, dtype=torch.uint8, device="cuda"))   # FILL
except torch.OutOfMemoryError as e:
    print("OOM after %d blocks: %s" % (len(blocks), str(e).splitlines()[0][:100]))
del blocks
torch.cuda.empty_cache()
