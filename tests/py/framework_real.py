"""The companion against the real frameworks, on a GPU machine (not CI).

Usage: python3 tests/py/framework_real.py [CASE...]
Each case runs a child Python with scripts/python first on PYTHONPATH and
the companion's test sink, then checks the records against what the
framework itself reports.  Cases:
  frag        check_oom_frag.py's fragmentation OOM: fill the card with 1 GiB tensors,
              free them, refill the cache with 100 MiB tensors, free every
              other one, ask for 4 GiB.  The torch.oom record must give
              reserved-but-unallocated within 1% of PyTorch's message and a
              largest free block of 100 MiB.
  expandable  a plain OOM with expandable_segments:True: the record says so.
  periodic    torch.periodic records every 0.2 s of a short training loop.
  cupy        cupy.periodic / cupy.exit match the pool's own numbers.
  jax         jax.exit matches Device.memory_stats().
Prints one line per case ("PASS case ..." or "FAIL case: why"); exit 1 on
any failure, 77 when torch or a GPU is missing.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MiB, GiB = 1 << 20, 1 << 30
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": MiB, "GiB": GiB, "TiB": 1 << 40}


def child(case):
    """The program side: runs inside the companion-injected interpreter."""
    if case in ("frag", "expandable", "periodic"):
        import torch

        torch.cuda.init()
        if case == "periodic":
            import time

            model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(4)]).cuda()
            opt = torch.optim.AdamW(model.parameters())
            end = time.time() + 1.5
            while time.time() < end:
                loss = model(torch.randn(64, 1024, device="cuda")).square().mean()
                loss.backward()
                opt.step()
                opt.zero_grad()
            torch.cuda.synchronize()
            print("loss", float(loss) > 0)
            return
        if case == "frag":
            big = []
            try:
                while True:
                    big.append(torch.empty(GiB, dtype=torch.uint8, device="cuda"))
            except torch.OutOfMemoryError:
                pass
            big.clear()
            small = []
            try:
                while True:
                    small.append(torch.empty(100 * MiB, dtype=torch.uint8, device="cuda"))
            except torch.OutOfMemoryError:
                pass
            del small[::2]
        try:
            x = torch.empty(4 * GiB if case == "frag" else 1 << 50, dtype=torch.uint8,
                            device="cuda")
            del x
        except torch.OutOfMemoryError as exc:
            print("MESSAGE", " ".join(str(exc).split()))
    elif case == "cupy":
        import cupy

        arrays = [cupy.zeros(8 * MiB, dtype=cupy.uint8) for _ in range(4)]
        del arrays[0]
        pool = cupy.get_default_memory_pool()
        print("POOL", pool.used_bytes(), pool.total_bytes())
        import time

        time.sleep(0.5)   # periodic records while the arrays are alive
        del arrays
    elif case == "jax":
        import jax
        import jax.numpy as jnp

        x = jnp.ones((64 << 20,), dtype=jnp.uint8)
        x.block_until_ready()
        stats = jax.devices()[0].memory_stats()
        print("STATS", json.dumps({k: stats.get(k) for k in ("bytes_in_use", "bytes_limit")}))
        import time

        time.sleep(0.5)   # periodic records while x is alive
        del x


def run_case(case, tmp):
    sink = os.path.join(tmp, case + ".jsonl")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "scripts", "python")] + [p for p in
                                                     [env.get("PYTHONPATH")] if p])
    env["CUPROBE_FRAMEWORK_SINK"] = sink
    env["CUPROBE_FRAMEWORK_INTERVAL"] = "0.2"
    if case == "expandable":
        env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
    if case == "jax":
        env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", case],
                       env=env, capture_output=True, text=True, timeout=400)
    records = []
    if os.path.exists(sink):
        with open(sink) as f:
            records = [json.loads(line) for line in f]
    return p, records


def size(text):
    num, unit = text.split()
    return float(num) * UNITS[unit]


def check(case, p, recs):
    """@return : a short summary; raises AssertionError with the reason."""
    kinds = [r["kind"] for r in recs]
    logs = [r["data"]["text"] for r in recs if r["kind"] == "log"]
    assert p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr[-2000:])
    assert not logs, logs
    if case in ("frag", "expandable"):
        msg = re.search(r"MESSAGE (.*)", p.stdout).group(1)
        oom = [r["data"] for r in recs if r["kind"] == "torch.oom"][-1]
        assert "torch.exit" in kinds, kinds
        summary = {k: oom.get(k) for k in (
            "request_bytes", "reserved_bytes", "allocated_bytes", "largest_free_block",
            "holes", "expandable_segments", "expandable_source", "num_ooms",
            "num_alloc_retries", "snapshot_us", "collect_us", "torch_version",
            "cuda_version", "allocator_backend")}
        summary["n_segments_listed"] = len(oom["segments"])
        summary["arch_list"] = oom["arch_list"][-3:]
        if case == "expandable":
            assert oom["expandable_segments"] is True, oom["expandable_segments"]
            return summary
        unalloc = size(re.search(r"([\d.]+ [KMGT]?i?B) is reserved by PyTorch but "
                                 r"unallocated", msg).group(1))
        mine = oom["reserved_bytes"] - oom["allocated_bytes"]
        summary["pytorch_says_unallocated"] = unalloc
        assert abs(mine - unalloc) <= 0.01 * unalloc, (mine, unalloc)
        assert oom["request_bytes"] == 4 * GiB, oom["request_bytes"]
        assert oom["largest_free_block"] == 100 * MiB, oom["largest_free_block"]
        assert oom["expandable_segments"] is False
        return summary
    if case == "periodic":
        per = [r["data"] for r in recs if r["kind"] == "torch.periodic"]
        assert len(per) >= 4, kinds
        info = [r["data"] for r in recs if r["kind"] == "companion.info"][-1]
        return {"periodic_records": len(per), "collect_us": [x["collect_us"] for x in per],
                "tick_us_mean": info["periodic_us_mean"], "tick_us_max": info["periodic_us_max"],
                "tick_wall_us_max": info["periodic_wall_us_max"],
                "last": {k: per[-1].get(k) for k in ("allocated_bytes", "reserved_bytes",
                                                     "largest_free_block", "holes", "frag")}}
    if case == "cupy":
        used, total = map(int, re.search(r"POOL (\d+) (\d+)", p.stdout).groups())
        ex = [r["data"] for r in recs if r["kind"] == "cupy.exit"][-1]
        per = [r["data"] for r in recs if r["kind"] == "cupy.periodic"]
        assert per, kinds
        last = per[-1]
        assert (last["used_bytes"], last["total_bytes"]) == (used, total), (last, used, total)
        assert ex["used_bytes"] == 0 and ex["total_bytes"] == total, ex  # arrays freed
        return {"periodic": len(per), "last_periodic": last, "exit": ex}
    if case == "jax":
        stats = json.loads(re.search(r"STATS (.*)", p.stdout).group(1))
        ex = [r["data"] for r in recs if r["kind"] == "jax.exit"][-1]
        assert ex["backends_initialized"], ex
        dev = ex["devices"][0]
        assert dev["bytes_limit"] == stats["bytes_limit"], (dev, stats)
        per = [r["data"]["devices"][0] for r in recs if r["kind"] == "jax.periodic"
               and r["data"]["devices"]]
        assert max(d["bytes_in_use"] for d in per) == stats["bytes_in_use"], (per, stats)
        return {"exit": ex, "periodic": len(per)}
    raise AssertionError("unknown case")


def main(cases):
    try:
        import torch

        if not torch.cuda.is_available():
            print("no GPU")
            return 77
    except ImportError:
        print("no torch")
        return 77
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            p, recs = run_case(case, tmp)
            try:
                print("PASS", case, json.dumps(check(case, p, recs)), flush=True)
            except Exception as exc:  # report and go on with the next case
                failed += 1
                print("FAIL %s: %s: %s\n  stdout: %s\n  kinds: %s" % (
                    case, type(exc).__name__, exc, p.stdout[-800:],
                    [r["kind"] for r in recs]), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2])
    else:
        sys.exit(main(sys.argv[1:] or ["frag", "expandable", "periodic", "cupy", "jax"]))
