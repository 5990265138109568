"""numba_clean.py - a clean numba-cuda run on NVIDIA's CUDA Python bindings,
with PyTorch imported and holding memory too.  The bindings look up every
driver function they know at their own CUDA version; on an older driver
some are not found and nothing needs them.  Expected: no warning and no
error; memory held at exit named after its holder (numba's arrays are not
"PyTorch caching allocator").  A kernel is compiled only where numba's
JIT works with the installed numpy (numba-cuda's compiler calls
numpy.row_stack, which numpy 2 removed); the copies through the bindings
run either way."""
import numpy as np
from numba import cuda

try:
    import torch

    model = torch.nn.Linear(1024, 1024).cuda()      # PyTorch's cache holds a segment
except ImportError:
    model = None


@cuda.jit
def axpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


n = 1 << 22                                         # 16 MiB of float32 each
x = cuda.to_device(np.arange(n, dtype=np.float32))
y = cuda.to_device(np.ones(n, dtype=np.float32))
out = cuda.device_array(n, dtype=np.float32)        # held until exit
if hasattr(np, "row_stack"):
    for _ in range(20):
        axpy[(n + 255) // 256, 256](np.float32(2.0), x, y, out)
else:
    for _ in range(20):
        out.copy_to_device(x)                       # device to device, through the bindings
cuda.synchronize()
print("numba ok", float(out.copy_to_host()[:4].sum()), "torch", model is not None)
