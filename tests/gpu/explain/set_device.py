"""set_device.py - a device index this process does not see: a synchronous
error, explained with the GPUs the process sees (CUDA_VISIBLE_DEVICES,
physical index, UUID), without CUDA_LAUNCH_BLOCKING or compute-sanitizer
advice, and without a second no-gpu-used warning.  explain_cases.sh runs
it with one GPU visible.  Argument "clean" (the accuracy suite): device 0."""
import sys

import torch

CLEAN = sys.argv[1:] == ["clean"]

print("visible GPUs:", torch.cuda.device_count())
torch.cuda.set_device(0 if CLEAN else 3)  # EXPECT: fatal-error
print("device", torch.cuda.current_device(), torch.ones(4, device="cuda").sum().item())
