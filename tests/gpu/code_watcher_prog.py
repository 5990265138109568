"""code_watcher_prog.py - run by tests/gpu/code_watcher.sh under `cuprobe run`
(CPython 3.12+, torch): the companion registers the shim's code watcher when
torch is imported, then
- steady: one call site allocating and freeing through the driver STEADY
  times (the call-site memo should answer nearly all of its lookups);
- churn: each iteration a new module and function, freed at its end, so
  the next one's code objects take the same addresses with other names;
  each allocates once with its own size, noted (with CPython's own view of
  the frames) in the manifest $CP_MANIFEST that tests/py/check_pystack.py
  compares with the trace.
"""
import ctypes
import json
import os
import sys
import time

import torch  # noqa: F401  (the companion's cue: the watcher is registered here)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from pystack_common import MANIFEST, churn  # noqa: E402

KB = 4096
STEADY = 20000
ROUNDS = 200


def steady(cuda, n):
    q = ctypes.c_uint64()
    t0 = time.perf_counter()
    for _ in range(n):
        assert cuda.cuMemAlloc_v2(ctypes.byref(q), 1 << 20) == 0
        assert cuda.cuMemFree_v2(q) == 0
    return (time.perf_counter() - t0) / n * 1e9


def main():
    torch.zeros(1, device="cuda")       # the primary context, current here
    cuda = ctypes.CDLL("libcuda.so.1")
    cw = sys.modules.get("cuprobe_companion._codewatch")
    print("python %d.%d, companion code watcher module %s" % (
        sys.version_info[0], sys.version_info[1], "loaded" if cw else "not loaded"))
    print("steady: %.0f ns per alloc+free pair, %d pairs" % (steady(cuda, STEADY), STEADY))
    # (a size none of torch's)
    churn(cuda, [(100 + i) * KB + 512 for i in range(ROUNDS)],
          os.path.dirname(os.path.abspath(os.environ["CP_MANIFEST"])))
    with open(os.environ["CP_MANIFEST"], "w") as f:
        json.dump(MANIFEST, f)
    print("churn: %d rounds noted" % len(MANIFEST))


main()
