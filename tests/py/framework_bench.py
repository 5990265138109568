"""Cost of cuprobe's framework companion, per call, in microseconds.

Usage: python3 tests/py/framework_bench.py [SEGMENTS...]
With tests/py/standins on PYTHONPATH it measures against the stand-in
PyTorch 2.11 (pure Python: its memory_stats is far slower than the real
C++ one, so these numbers are an upper bound); with a real PyTorch and a GPU
it measures the real thing.  For each fragmentation level (about SEGMENTS
allocator segments, every other block free) it prints one JSON line:
  stats_us     memory_stats_as_nested_dict() alone, per device
  periodic_us  one periodic summary with the snapshot-derived fields
  periodic_nosnap_us  one periodic summary without them
  oom_us       one torch.oom record (snapshot, segments, JSON, write)
  exit_us      one torch.exit record
Records go to the test sink (os.devnull), i.e. JSON encoding and one write
per record are included; the shim's cuprobe_framework_record() is not.
"""
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "python"))
os.environ["CUPROBE_FRAMEWORK_SINK"] = os.devnull
os.environ["CUPROBE_FRAMEWORK_INTERVAL"] = "0"   # we call tick() ourselves
os.environ.setdefault("STANDIN_TORCH_CAPACITY", str(1 << 40))

import cuprobe_companion  # noqa: E402

cuprobe_companion.install()
import torch  # noqa: E402
from cuprobe_companion import _core  # noqa: E402

MiB = 1 << 20


def fragment(segments, keep):
    """About `segments` segments, each with live blocks and holes."""
    if hasattr(torch.cuda, "_standin_alloc"):
        n = segments * 4
        ptrs = [torch.cuda._standin_alloc(400 << 10) for _ in range(n)]
        for p in ptrs[::2]:
            torch.cuda._standin_free(p)
        keep.extend(ptrs[1::2])
        return
    # Real allocator: 4 MiB requests share 20 MiB segments, five to one.
    tensors = [torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")
               for _ in range(segments * 5)]
    keep.extend(tensors[1::2])
    del tensors


def per_call_us(fn, n):
    fn()   # warm
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) * 1e6 / n


def main(levels):
    torch.cuda.init()
    state = _core._state
    col = state.collectors["torch"]
    keep = []
    done = 0
    for level in levels:
        fragment(level - done, keep)
        done = level
        n_seg = len(torch.cuda.memory._snapshot()["segments"])
        reps = 200 if n_seg < 200 else 20
        col.periodic_frag = True
        row = {"torch": str(torch.__version__), "segments": n_seg,
               "stats_us": round(per_call_us(
                   lambda: torch.cuda.memory_stats_as_nested_dict(0), reps), 1),
               "periodic_us": round(per_call_us(state.tick, reps), 1)}
        col.periodic_frag = False
        row["periodic_nosnap_us"] = round(per_call_us(state.tick, reps), 1)
        col.ooms = 0
        row["oom_us"] = round(per_call_us(
            lambda: col._oom(0, 1 << 40, 0, 0), min(reps, 20)), 1)
        row["exit_us"] = round(per_call_us(col.exit, min(reps, 20)), 1)
        row["oom_json_bytes"] = len(json.dumps(col._collect({0}, True, 0)[0]))
        print(json.dumps(row), flush=True)
    if _core.disabled():
        print("companion disabled during the benchmark", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main([int(a) for a in sys.argv[1:]] or [0, 100, 1000]))
