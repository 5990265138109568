"""check_stray.py - needs 2 GPUs.  Two "ranks" like torchrun starts them
(LOCAL_RANK 0 and 1); each should use only its own GPU, but the code touches
CUDA before set_device (line marked STRAY), so rank 1 also opens a context
on GPU 0.  Run as the launcher: it starts both ranks."""
import os
import subprocess
import sys

if os.environ.get("LOCAL_RANK") is None:
    procs = [subprocess.Popen([sys.executable, __file__],
                              env=dict(os.environ, LOCAL_RANK=str(r), RANK=str(r), WORLD_SIZE="2"))
             for r in range(2)]
    print("ranks exited", [p.wait() for p in procs])
    sys.exit(0)

import torch  # noqa: E402

rank = int(os.environ["LOCAL_RANK"])
warm = torch.zeros(1, device="cuda")      # STRAY: before set_device, lands on GPU 0
torch.cuda.set_device(rank)
x = torch.randn(8 << 20, device="cuda")
print("rank", rank, "sum", round(x.sum().item(), 1))
