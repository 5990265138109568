"""cupy_fork.py clean|bug - CuPy and multiprocessing: the parent uses the GPU,
then a Pool of 2 workers computes the norms of 8 random matrices, each
worker on the GPU too.
bug: the Pool forks (the default start method on Linux before Python 3.14): its
workers inherit a CUDA state they cannot use, and their first CUDA call
fails (fork-after-init at the worker's line; the Pool re-raises the
worker's error in the parent, which dies of it).  The clean run starts the
workers with "spawn"."""
import multiprocessing
import sys

import cupy as cp

BUG = sys.argv[1:] == ["bug"]


def norm_of_random(seed):
    return float(cp.linalg.norm(cp.random.RandomState(seed).standard_normal((1024, 1024), dtype=cp.float32)))   # EXPECT: fork-after-init +fatal-error


if __name__ == "__main__":
    scale = float(cp.arange(8, dtype=cp.float32).sum())     # the parent uses the GPU
    with multiprocessing.get_context("fork" if BUG else "spawn").Pool(2) as pool:
        norms = pool.map(norm_of_random, range(8))
    print("done", sum(norms) * scale)
