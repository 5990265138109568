"""numba_clean.py - a clean numba-cuda run on NVIDIA's CUDA Python bindings,
with PyTorch imported and holding memory too.  The bindings look up every
driver function they know at their own CUDA version; on an older driver
some are not found and nothing needs them.  Expected: no warning and no
error; memory held at exit named after its holder (numba's arrays are not
"PyTorch caching allocator").  numba-cuda's compiler still calls
numpy.row_stack, which numpy 2 removed: the alias numpy had for vstack is
put back first, so that the kernel is JIT-compiled and launched.  Where
numba still cannot compile it, the copies through the bindings run
instead."""
import numpy as np

if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack
from numba import cuda  # noqa: E402

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
try:
    for _ in range(20):
        axpy[(n + 255) // 256, 256](np.float32(2.0), x, y, out)
    how = "kernel"
except Exception as e:                              # no NVVM, a numba too old for this CUDA
    print("numba cannot compile a kernel here: %s: %s" % (type(e).__name__, str(e)[:120]))
    for _ in range(20):
        out.copy_to_device(x)                       # device to device, through the bindings
    how = "copies"
cuda.synchronize()
print("numba ok", how, float(out.copy_to_host()[:4].sum()), "torch", model is not None)
