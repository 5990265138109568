"""cupy_unpinned.py clean|bug - CuPy: 200 steps that upload a 4 MiB frame
on a stream of their own with ndarray.set(frame, stream=s) and filter it
there, so that the next upload can overlap the kernels.
bug: the frames are ordinary numpy arrays (pageable memory): every
"asynchronous" upload blocks the host while the driver stages it
(pageable-async-copy at the upload line).  The clean run keeps the frames
in pinned memory (cupyx.empty_pinned)."""
import sys

import numpy as np
import cupy as cp
import cupyx

BUG = sys.argv[1:] == ["bug"]
frames = np.random.default_rng(0).random((8, 1 << 20), dtype=np.float32)
if not BUG:
    pinned = cupyx.empty_pinned(frames.shape, dtype=frames.dtype)
    pinned[...] = frames
    frames = pinned
stream = cp.cuda.Stream(non_blocking=True)
frame = cp.empty(1 << 20, dtype=cp.float32)
acc = cp.zeros(1 << 20, dtype=cp.float32)
with stream:
    for step in range(200):
        frame.set(frames[step % 8], stream=stream)   # EXPECT: pageable-async-copy
        acc += cp.tanh(frame) * 0.01
        if step % 50 == 0:
            print("step", step)
stream.synchronize()
print("done", float(acc[:16].sum()))
