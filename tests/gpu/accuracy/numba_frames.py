"""numba_frames.py clean|bug - numba.cuda: a 1-D diffusion simulated for 160
steps by a jitted kernel on 16 MiB frames.
bug: each step's frame gets a new device array, kept in a list to be saved
at the end: every frame stays on the GPU (memory-growth at the line that
allocates it).  The clean run swaps two buffers and copies a frame to the
host when it needs one.  Exits 77 when numba cannot compile a kernel
here."""
import sys

import numpy as np

if not hasattr(np, "row_stack"):      # numba-cuda's compiler still calls it; numpy 2 removed it
    np.row_stack = np.vstack
from numba import cuda  # noqa: E402

BUG = sys.argv[1:] == ["bug"]


@cuda.jit
def diffuse(src, dst):
    i = cuda.grid(1)
    if 0 < i < src.size - 1:
        dst[i] = src[i] + 0.25 * (src[i - 1] - 2.0 * src[i] + src[i + 1])


n = 1 << 22
threads = 256
blocks = (n + threads - 1) // threads
cur = cuda.to_device(np.random.default_rng(0).random(n, dtype=np.float32))
spare = cuda.device_array_like(cur)
try:
    diffuse[blocks, threads](cur, spare)
    cuda.synchronize()
except Exception as e:                # no NVVM, a numba too old for this CUDA...
    print("numba cannot compile a kernel here: %s: %s" % (type(e).__name__, str(e)[:120]))
    sys.exit(77)
frames = []
for step in range(160):
    nxt = cuda.device_array_like(cur) if BUG else spare   # EXPECT: memory-growth
    diffuse[blocks, threads](cur, nxt)
    if BUG:
        frames.append(nxt)
    else:
        spare = cur
    cur = nxt
    if step % 40 == 0:
        print("step", step, float(cur[n // 2]))
cuda.synchronize()
print("done", len(frames), float(cur.copy_to_host()[:4].sum()))
