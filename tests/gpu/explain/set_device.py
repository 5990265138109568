"""set_device.py - a device index this process does not see: a synchronous
error, explained with the GPUs the process sees (CUDA_VISIBLE_DEVICES,
physical index, UUID), without CUDA_LAUNCH_BLOCKING or compute-sanitizer
advice, and without a second no-gpu-used warning.  explain_cases.sh runs
it with one GPU visible."""
import torch

print("visible GPUs:", torch.cuda.device_count())
torch.cuda.set_device(3)  # EXPECT: fatal-error
print("unreachable")
