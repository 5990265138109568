"""numba_unpinned.py clean|bug - numba.cuda: 200 steps that upload a 4 MiB
frame on a stream of their own (DeviceNDArray.copy_to_device(frame,
stream=s)) and scale it there, so that uploads can overlap the kernels.
bug: the frames are ordinary numpy arrays (pageable memory): every
"asynchronous" upload blocks the host while the driver stages it
(pageable-async-copy at the upload line).  The clean run keeps them in
cuda.pinned_array; both read the result back into one too (copy_to_host()
alone copies to new pageable memory, async on the array's stream)."""
import sys

import numpy as np

BUG = sys.argv[1:] == ["bug"]
if not hasattr(np, "row_stack"):      # numba-cuda's compiler still calls it; numpy 2 removed it
    np.row_stack = np.vstack
from numba import cuda  # noqa: E402


@cuda.jit
def scale(x, a):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):     # grid-stride
        x[i] *= a


n = 1 << 20
frames = np.random.default_rng(0).random((8, n), dtype=np.float32)
if not BUG:
    pinned = cuda.pinned_array(frames.shape, dtype=frames.dtype)
    pinned[...] = frames
    frames = pinned
stream = cuda.stream()
frame = cuda.device_array(n, dtype=np.float32, stream=stream)
try:
    scale[(n + 255) // 256, 256, stream](frame, np.float32(1.0))
    kernel = True
except Exception as e:                # no NVVM, a numba too old for this CUDA...
    print("no kernel: %s: %s" % (type(e).__name__, str(e)[:120]))
    kernel = False
for step in range(200):
    frame.copy_to_device(frames[step % 8], stream=stream)   # EXPECT: pageable-async-copy
    if kernel:
        scale[(n + 255) // 256, 256, stream](frame, np.float32(0.5))
out = cuda.pinned_array(n, dtype=np.float32)
frame.copy_to_host(out, stream=stream)
stream.synchronize()
print("done", float(out[:4].sum()))
