"""torch_alloc_modes.py - small PyTorch training run whose allocator counters
are compared with the trace (tests/gpu/run_validation.sh).

Usage: python3 torch_alloc_modes.py MODE
  MODE default | expandable | async   (sets PYTORCH_CUDA_ALLOC_CONF itself
                                       before importing torch)
Prints deterministic losses (fixed seed) and, as JSON on the last line, what
PyTorch itself counted: torch.cuda.memory_stats() and, for the async backend
(whose stats are all zero), the number of tensors this script created and
freed between two cuprobe marks.
"""
import ctypes
import json
import os
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "default"
CONF = {"default": "", "expandable": "expandable_segments:True",
        "async": "backend:cudaMallocAsync"}[MODE]
if CONF:
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = CONF

import torch  # noqa: E402


def mark(text):
    """A marker in the trace, through the shim's exported entry point."""
    try:
        lib = ctypes.CDLL(None)
        f = lib.cuprobe_framework_record
        f.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        b = json.dumps({"mark": text}).encode()
        f(b"mark", b, len(b))
    except (AttributeError, OSError):
        pass


def train(steps=30):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    losses = []
    for step in range(steps):
        x = torch.randn(256, 512, generator=g).pin_memory().cuda(non_blocking=True)
        y = torch.randint(0, 10, (256,), generator=g).cuda()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(round(loss.item(), 5))
        if step % 10 == 9:
            # Grow and shrink the cache so segments are freed too.
            big = torch.empty(int(1.5 * 2**30), dtype=torch.uint8, device="cuda")
            del big
            torch.cuda.empty_cache()
    return losses


def counted_tensors(n=100):
    """Deterministic create/free of n tensors, for the async backend."""
    torch.cuda.synchronize()
    mark("tensors-begin")
    for i in range(n):
        t = torch.empty((i + 1) * 4096, dtype=torch.uint8, device="cuda")
        del t
    torch.cuda.synchronize()
    mark("tensors-end")
    return n


losses = train()
print("losses", losses)
n = counted_tensors()
torch.cuda.synchronize()
torch.cuda.empty_cache()
stats = torch.cuda.memory_stats()
keep = {k: v for k, v in stats.items() if k.startswith("num_")}
print(json.dumps({"mode": MODE, "conf": CONF, "stats": keep, "counted_tensors": n}))
