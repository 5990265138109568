"""attribution_cost.py [--no-shim] [--reps N] [OUT.md] - what attribution
(`cuprobe run --attribute`, scripts/python/cuprobe_companion/_attrib*.py)
costs a training loop, on one GPU, in about 5 minutes on an H100.

Workloads, each in a process of its own per PyTorch allocator mode
(PYTORCH_CUDA_ALLOC_CONF unset, expandable_segments:True,
backend:cudaMallocAsync):
  gpt2  transformers' GPT2LMHeadModel built from GPT2Config() (124M
        parameters, nothing downloaded), AdamW, bf16 autocast, batch 8 x 256
        tokens: training steps per second;
  mlp   a launch-bound MLP (8 Linear(256, 256) + ReLU, batch 64, SGD):
        thousands of small kernels and allocations a second;
and, once, CuPy (a loop of small elementwise and matmul work through its
memory pool) with and without the companion's memory hook; and, once, Flax
(flax_train.py's MLP: Dense(2048) + Dense(10) on 1024 x 512, optax Adam,
jitted) with and without the companion's look at XLA's pool (JaxCollector).

Each worker runs under `cuprobe run` (build/cuprobe; --no-shim: without
it), warms up, then times blocks of a fixed number of steps (about 2 s
each), attribution off and on alternately (off-on, on-off, ...), N pairs
(--reps, default 5).  "On" is the companion's own attribution object,
driven as the companion drives it: PyTorch's memory history turned on
(enabled=state, context=state, stacks=python) and the sampler asked for a
sample every 50 ms (CUPROBE_FRAMEWORK_WATCH's gap: the most often the
companion asks, when the allocator grows all the time), which its throttle
turns into at most one per max(0.25 s, 100 x its cost); records are encoded
as the companion encodes them and dropped.  "Off" turns the history off
(and the CuPy hook out) again.  A steady training loop asks far less often
(the 10 s tick), so the sampler's share here is an upper bound.  Flax's
"on" drives JaxCollector.quick() from a thread of its own on the
collector's own schedule (quick_period()), held at its densest: every look
writes a full sample with the program's line, as while the pool grows
(every QUICK_MIN_S / QUICK_GROW_DIV, capped at QUICK_DUTY of its CPU).

Prints a markdown table: per workload and mode the median steps/s of the
blocks off and on, the median of the per-pair ratios on/off and the cost
(1 - that ratio), and what the sampler took.  A missing module (torch,
transformers, cupy) or no GPU skips its rows and says so; the exit status
is 0 unless a worker failed.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts", "python")
CUPROBE = os.path.join(ROOT, "build", "cuprobe")
MODES = (("native", ""), ("expandable", "expandable_segments:True"),
         ("cudaMallocAsync", "backend:cudaMallocAsync"))
BLOCK_S = {"gpt2": 2.0, "mlp": 1.5, "cupy": 1.0, "flax": 1.5}
WORKER_TIMEOUT_S = 150
BUDGET_S = 330            # the whole run; workers past it are skipped
ASK_EVERY_S = 0.05


# --- worker side ---------------------------------------------------------------

def _companion(name):
    """The companion's module `name` (_attrib_torch or _attrib_cupy), and a
    record() that encodes as the companion does and drops the record."""
    if SCRIPTS not in sys.path:
        sys.path.insert(0, SCRIPTS)
    import importlib

    from cuprobe_companion import _sink

    def record(kind, obj, shrink=None):
        _sink.encode(obj)           # the companion's cost of writing it
        return 0
    return importlib.import_module("cuprobe_companion." + name), record


class Asker:
    """Calls fn, then waits gap() seconds (ASK_EVERY_S unless given), while
    running: the attribution object asked for a sample as the companion's
    sampler thread asks when the allocator keeps growing, or XLA's pool
    looked at; pause() returns once no call is in flight."""

    def __init__(self, fn, gap=lambda: ASK_EVERY_S):
        self.fn, self.gap = fn, gap
        self.on = threading.Event()
        self.idle = threading.Event()
        self.idle.set()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while True:
            if not self.on.wait(0.1):
                continue
            self.idle.clear()
            try:
                if self.on.is_set():
                    self.fn()
            finally:
                self.idle.set()
            time.sleep(self.gap())

    def resume(self):
        self.on.set()

    def pause(self):
        self.on.clear()
        self.idle.wait()


def _switch(usable, att, enter, leave):
    """switch(on) for _timed_blocks(): attribution object att's way in
    (enter) and out (leave), with its sampler asked while it is in.  Starts
    out; a no-op when attribution is unavailable."""
    asker = Asker(att.segment)
    state = [True]          # att is attached (in) when the switch is made

    def switch(on):
        # Blocks alternate off/on, on/off: the same state twice in a row is
        # no change (CuPy's hook cannot be left twice).
        if not usable or on == state[0]:
            return
        state[0] = on
        if on:
            enter()
            asker.resume()
        else:
            asker.pause()
            leave()

    switch(False)
    return switch


def _timed_blocks(step, sync, kind, reps, switch):
    """Warm up, size a block to about BLOCK_S[kind], then time 2 x reps
    blocks alternating off/on; switch(True/False) turns attribution on/off.
    @return : (steps per block, [steps/s off], [steps/s on])."""
    for _ in range(5):
        step()
    sync()
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < 1.0:
        step()
        n += 1
    sync()
    per = max(3, int(n / (time.perf_counter() - t0) * BLOCK_S[kind]))
    off, on = [], []
    for rep in range(reps):
        for attrib in ((False, True) if rep % 2 == 0 else (True, False)):
            switch(attrib)
            sync()
            t0 = time.perf_counter()
            for _ in range(per):
                step()
            sync()
            (on if attrib else off).append(per / (time.perf_counter() - t0))
    switch(False)
    return per, off, on


def worker_torch(kind, reps):
    import torch

    if not torch.cuda.is_available():
        return {"skip": "torch.cuda is not available"}
    _attrib_torch, record = _companion("_attrib_torch")
    dev = torch.device("cuda")
    torch.manual_seed(0)
    if kind == "gpt2":
        try:
            from transformers import GPT2Config, GPT2LMHeadModel
        except Exception as exc:
            return {"skip": "transformers cannot be imported: %s" % exc}
        model = GPT2LMHeadModel(GPT2Config()).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        ids = torch.randint(0, 50257, (8, 256), device=dev)

        def step():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    else:
        layers = []
        for _ in range(8):
            layers += [torch.nn.Linear(256, 256), torch.nn.ReLU()]
        model = torch.nn.Sequential(*layers).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        x = torch.randn(64, 256, device=dev)

        def step():
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    step()          # CUDA is initialised by the program, as in a real run
    att = _attrib_torch.TorchAttrib(torch.cuda, record, lambda where, fn, *a: fn(*a))
    att._start()    # history on (or off with the backend's reason)
    hist = torch.cuda.memory._record_memory_history
    usable = att.sites.state == "on"
    per, off, on = _timed_blocks(
        step, torch.cuda.synchronize, kind, reps,
        _switch(usable, att, lambda: hist(enabled="state", context="state", stacks="python"),
                lambda: hist(enabled=None)))
    out = {"steps_per_block": per, "off": off, "on": on,
           "attribution": att.sites.state if usable else "unavailable",
           "backend": str(torch.cuda.get_allocator_backend()),
           "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0)}
    if not usable:
        out["why"] = att.sites.why
    out.update(att.sites.cost.fields())
    return out


def worker_cupy(reps):
    try:
        import cupy as cp
    except Exception as exc:
        return {"skip": "cupy cannot be imported: %s" % exc}
    try:
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return {"skip": "CuPy sees no GPU: %s" % exc}
    if n < 1:
        return {"skip": "CuPy sees no GPU"}
    _attrib_cupy, record = _companion("_attrib_cupy")
    a = cp.random.random((256, 256), dtype=cp.float32)
    b = cp.random.random((256, 256), dtype=cp.float32)

    def step():
        c = a @ b
        d = cp.tanh(c) * 0.5 + a
        return d.sum()

    att = _attrib_cupy.CupyAttrib(cp, record)
    att._attach()                       # the hook, on this thread
    usable = att.sites.state == "on"
    per, off, on = _timed_blocks(
        step, cp.cuda.Device().synchronize, "cupy", reps,
        _switch(usable, att, lambda: att.hook.__enter__(),
                lambda: att.hook.__exit__(None, None, None)))
    out = {"steps_per_block": per, "off": off, "on": on,
           "attribution": att.sites.state if usable else "unavailable",
           "backend": "pool", "cupy": cp.__version__}
    out.update(att.sites.cost.fields())
    return out


def worker_flax(reps):
    try:
        import jax
        import optax
        import flax.linen as nn
    except Exception as exc:
        return {"skip": "jax, flax or optax cannot be imported: %s" % exc}
    if not any(d.platform == "gpu" for d in jax.devices()):
        return {"skip": "JAX sees no GPU"}
    _others, record = _companion("_others")

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(10)(nn.relu(nn.Dense(2048)(x)))

    model = MLP()
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
    x = jax.random.normal(k1, (1024, 512))
    y = jax.random.randint(k2, (1024,), 0, 10)
    tx = optax.adam(1e-3)
    state = [model.init(k3, x)]
    state.append(tx.init(state[0]))

    @jax.jit
    def train_step(params, opt_state):
        def loss_fn(p):
            return optax.softmax_cross_entropy_with_integer_labels(model.apply(p, x), y).mean()
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    def step():
        state[0], state[1], _ = train_step(state[0], state[1])

    written = [0]

    def count(kind, obj, shrink=None):
        written[0] += 1
        return record(kind, obj, shrink)

    c = _others.JaxCollector(jax, count, lambda where, fn, *a: fn(*a))
    looked = [0, 0.0]                           # looks, their wall time

    def look():
        # Each look a growing pool's: a full sample with the program's
        # line, the budget never spent, and the next one soonest.
        c._last, c.samples = None, 0
        t0 = time.perf_counter()
        c.quick()
        looked[1] += time.perf_counter() - t0
        looked[0] += 1
        c._rising = True

    looker = Asker(look, c.quick_period)

    def switch(on):
        (looker.resume if on else looker.pause)()

    per, off, on = _timed_blocks(step, lambda: jax.block_until_ready(state[0]), "flax",
                                 reps, switch)
    return {"steps_per_block": per, "off": off, "on": on, "attribution": "on",
            "backend": "XLA BFC pool", "jax": jax.__version__,
            "gpu": str(jax.devices()[0].device_kind), "samples": written[0],
            "sample_us_mean": looked[1] / max(1, looked[0]) * 1e6}


def worker(kind, reps):
    try:
        res = {"cupy": worker_cupy, "flax": worker_flax}.get(kind)
        res = res(reps) if res else worker_torch(kind, reps)
    except ImportError as exc:
        res = {"skip": "cannot import: %s" % exc}
    print("RESULT " + json.dumps(res), flush=True)


# --- driver side ---------------------------------------------------------------

def run_worker(kind, mode, conf, reps, shim, tmp):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUPROBE_")}
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    if conf:
        env["PYTORCH_CUDA_ALLOC_CONF"] = conf
    env["CUPROBE_ATTRIBUTE"] = "0"      # the companion's own stays off: we drive ours
    if kind == "flax":
        env["CUPROBE_FRAMEWORK"] = "0"  # its own looks at XLA's pool too
    env["CUPROBE_LOG"] = "0"
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", kind, str(reps)]
    if shim:
        cmd = [CUPROBE, "run", "-o", os.path.join(tmp, "%s-%s-%%p.trace" % (kind, mode)),
               "--"] + cmd
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=WORKER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after %d s" % WORKER_TIMEOUT_S}
    for name in os.listdir(tmp):          # traces are not kept
        os.unlink(os.path.join(tmp, name))
    lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
    if p.returncode != 0 or not lines:
        tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
        return {"error": "exit %d: %s" % (p.returncode, " | ".join(tail))}
    res = json.loads(lines[-1][7:])
    res["wall_s"] = round(time.monotonic() - t0, 1)
    return res


def row(kind, mode, r):
    name = {"gpt2": "GPT-2 124M (b8 x 256, AdamW, bf16)",
            "mlp": "MLP 8 x Linear(256) (b64, SGD)", "cupy": "CuPy loop (256^2 matmul+tanh)",
            "flax": "Flax MLP (1024 x 512, Adam, jit)"}
    if "skip" in r or "error" in r:
        return "| %s | %s | - | - | - | - | %s |" % (
            name[kind], mode, ("skipped: " + r["skip"]) if "skip" in r else "FAILED: " + r["error"])
    off, on = r["off"], r["on"]
    pairs = [b / a for a, b in zip(off, on)]
    ratio = statistics.median(pairs)
    note = "%d+%d blocks of %d steps" % (len(off), len(on), r["steps_per_block"])
    if r.get("attribution") != "on":
        note += "; attribution unavailable (%s)" % (r.get("why") or r.get("backend"))
    else:
        note += "; %d samples, %d us mean" % (r.get("samples", 0), r.get("sample_us_mean", 0))
        if "sample_us_max" in r:
            note += ", %d us max" % r["sample_us_max"]
    return "| %s | %s | %.2f | %.2f | %.4f | %+.2f%% | %s |" % (
        name[kind], mode, statistics.median(off), statistics.median(on), ratio,
        (1 - ratio) * 100, note)


def main(argv):
    if argv[:1] == ["--worker"]:
        worker(argv[1], int(argv[2]))
        return 0
    shim, reps, out, only = True, 5, None, None
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--no-shim":
            shim = False
        elif a == "--only":             # gpt2, mlp, cupy or flax: those rows alone
            only = args.pop(0)
        elif a == "--reps":
            reps = int(args.pop(0))
        else:
            out = a
    if shim and not os.access(CUPROBE, os.X_OK):
        print("note: %s not built: workers run without the shim" % CUPROBE, file=sys.stderr)
        shim = False
    t_start = time.monotonic()
    jobs = [(k, m, c) for k in ("gpt2", "mlp") for m, c in MODES] + [("cupy", "pool", ""), ("flax", "XLA pool", "")]
    jobs = [j for j in jobs if only in (None, j[0])]
    rows, failed, seen = [], 0, {}
    with tempfile.TemporaryDirectory(prefix="attribution-cost-") as tmp:
        for kind, mode, conf in jobs:
            if time.monotonic() - t_start > BUDGET_S:
                r = {"skip": "out of time (%d s budget)" % BUDGET_S}
            else:
                r = run_worker(kind, mode, conf, reps, shim, tmp)
            failed += "error" in r
            for key in ("gpu", "torch", "cupy", "jax"):
                if r.get(key) and not seen.get(key):
                    seen[key] = r[key]
            rows.append(row(kind, mode, r))
            print(rows[-1], file=sys.stderr, flush=True)
    head = ["# What attribution costs", "",
            "`tests/gpu/attribution_cost.sh`, %s, %s (torch %s, cupy %s, jax %s), %s the shim; %d "
            "pairs of blocks per row, alternating off/on; %d s in all." % (
                time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), seen.get("gpu") or "no GPU",
                seen.get("torch") or "-", seen.get("cupy") or "-", seen.get("jax") or "-",
                "under" if shim else "without", reps, time.monotonic() - t_start),
            "", "| workload | allocator | steps/s off | steps/s on | on/off (median of pairs) "
            "| cost | notes |", "|---|---|---|---|---|---|---|"]
    text = "\n".join(head + rows) + "\n"
    sys.stdout.write(text)
    if out:
        with open(out, "w") as f:
            f.write(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
