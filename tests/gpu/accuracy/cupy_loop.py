"""cupy_loop.py clean|bug - CuPy: 300 steps of elementwise and matmul work
on 8 MiB arrays through CuPy's memory pool.
bug: every step's result is kept (`keep.append(...)`): the pool takes new
blocks from the driver to the end (memory-growth at the matmul line)."""
import sys

import cupy as cp

BUG = sys.argv[1:] == ["bug"]
a = cp.random.random((1024, 1024), dtype=cp.float64)
b = cp.random.random((1024, 1024), dtype=cp.float64)
keep = []
for step in range(300):
    c = a @ b   # EXPECT: memory-growth
    d = cp.tanh(c) * 0.5 + a
    if BUG:
        keep.append(c)
    if step % 100 == 0:
        print("step", step, float(d[0, 0]))
cp.cuda.Device().synchronize()
print("done", cp.get_default_memory_pool().used_bytes() >> 20, "MiB used")
