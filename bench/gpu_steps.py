"""gpu_steps.py - training steps per second, for overhead measurements.

Usage: python3 gpu_steps.py mlp|gpt2|alloc [seconds|serve]
  mlp   the launch-bound loop: 6-layer MLP, width 256, batch 8, AdamW
        (about 560 cuCtxGetDevice and ~100 launches a step)
  alloc one small tensor made and dropped from Python per step: under
        PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync a cuMemAllocAsync
        and a cuMemFreeAsync with PyTorch's real call stack (the shim's
        allocation path alone, without the noise of a training step)
  gpt2  GPT-2 small (transformers, random init, no download), batch 8 x 512
        tokens, bf16 autocast, fused AdamW
Warms up (GPU_STEPS_WARM_S seconds more if set), then runs for `seconds` (default 8 for mlp, 15 for gpt2) and prints
"steps_per_s X" and the last loss (identical with and without the shim).

`serve`: after the warm-up print "ready",
then for each line "run SECS" on stdin time SECS seconds of steps and print
"steps_per_s X cpu_us_per_step Y" (Y: the process's CPU time per step, all
its threads); "quit" (or end of input) prints the loss and exits.  Several
such processes, plain and traced, then take turns on one GPU without paying
torch's start-up between measurements.

`toggle [seconds] [block]` (under `cuprobe run` only): one traced process
times blocks of `block` steps (default 10) for `seconds` (default 20),
recording on and paused (cuprobe_bench_pause) in turn, ABBA, and prints
"toggle ratio R se S pairs N": R = median over adjacent pairs of
(paused block's time / recording block's time), i.e. traced/plain as a rate;
S its standard error (from the spread of the pairs' logs).  Both states share
one process, so R carries none of the few percent by which two processes
of one configuration differ on a GPU host; the paused state still pays the
wrappers' pass-through (bench/run_calls.sh with BENCH_PAUSE=1 measures it).  TOGGLE_AA=1 never pauses:
the same figures for two identical states (A/A).  TOGGLE_SELFTIME=1 (under
`make selftime`'s build/st/bin/cuprobe): per step, each wrapped API's calls
and time in the wrapper and in the driver, recording against paused, the
recording path's parts, and the time outside the calls.
TOGGLE_PMU=1: hardware counters per block where the machine has them
(bench/pmu.py; =soft: the task clock only)."""
import os
import sys
import time

import torch


def build(kind):
    """The step function of workload `kind`."""
    torch.manual_seed(0)
    if kind == "alloc":
        def step():
            return torch.empty(256, device="cuda")
        return step
    if kind == "mlp":
        layers = []
        for _ in range(6):
            layers += [torch.nn.Linear(256, 256), torch.nn.ReLU()]
        model = torch.nn.Sequential(*layers).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x = torch.randn(8, 256, device="cuda")
        y = torch.randn(8, 256, device="cuda")

        def step():
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            return loss
        return step
    from transformers import GPT2Config, GPT2LMHeadModel
    model = GPT2LMHeadModel(GPT2Config()).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    ids = torch.randint(0, 50257, (8, 512), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(ids, labels=ids).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss
    return step


def warm_up(step, kind):
    for _ in range(5 if kind == "gpt2" else 20):
        step()
    torch.cuda.synchronize()
    # GPU_STEPS_WARM_S: keep warming up for that long (default 0: the fixed
    # steps above only).  A traced run's start-up work (the writer's first
    # frames, the module map) then falls outside the timed window.
    warm = float(os.environ.get("GPU_STEPS_WARM_S", "0"))
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < warm:
        step()
    torch.cuda.synchronize()


def timed(step, kind, secs):
    """Steps for `secs` seconds (checked at a synchronize every few steps).
    @return : (steps per second, steps, the last loss, the process's CPU
    microseconds per step: all its threads, the shim's writer included)."""
    n, loss = 0, None
    every = 2000 if kind == "alloc" else 20
    torch.cuda.synchronize()
    c0 = time.process_time()
    t0 = time.perf_counter()
    while True:
        loss = step()
        n += 1
        if n % every == 0:
            torch.cuda.synchronize()
            if time.perf_counter() - t0 >= secs:
                break
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    return n / wall, n, loss, (time.process_time() - c0) * 1e6 / n


def serve(step, kind):
    print("ready", flush=True)
    loss = None
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        rate, _, loss, cpu = timed(step, kind, float(words[1]))
        print("steps_per_s %.3f cpu_us_per_step %.2f" % (rate, cpu), flush=True)
    if loss is not None and kind != "alloc":
        print("loss %.6f" % loss.item(), flush=True)


def toggle(step, kind, secs, block):
    import ctypes
    import math
    try:
        pause = ctypes.CDLL(None).cuprobe_bench_pause
    except AttributeError:
        sys.exit("gpu_steps.py toggle: cuprobe_bench_pause not found (run it under cuprobe run)")
    pause.argtypes = [ctypes.c_int]
    aa = os.environ.get("TOGGLE_AA") == "1"
    times = {0: [], 1: []}      # state 1: paused
    pairs = []
    # TOGGLE_PMU=1: hardware counters per block (bench/pmu.py); =soft: the
    # software task clock only (checks the plumbing where no PMU is exposed).
    pmu_mode = os.environ.get("TOGGLE_PMU")
    pmu = None
    # TOGGLE_SELFTIME=1 under a -DCP_SELFTIME build: time in the wrappers
    # and in the driver per block (bench/pmu.py SelfTime).
    st_timer = None
    if pmu_mode or os.environ.get("TOGGLE_SELFTIME") == "1":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import pmu as pmu_mod
    if os.environ.get("TOGGLE_SELFTIME") == "1":
        try:
            st_timer = pmu_mod.SelfTime()
        except AttributeError:
            sys.exit("gpu_steps.py toggle: cuprobe_bench_selftime not found (a -DCP_SELFTIME build)")
        st_sums = {0: None, 1: None}
        st_steps = {0: 0, 1: 0}
        st_wall = {0: 0.0, 1: 0.0}
    if pmu_mode:
        pmu = pmu_mod.Counters(soft_only=(pmu_mode == "soft"))
        print("pmu counters %s missing %s" % (pmu.names(), pmu.missing), flush=True)
        sums = {0: {}, 1: {}}
        nsteps = {0: 0, 1: 0}
    t_end = time.perf_counter() + secs
    i = 0
    while time.perf_counter() < t_end:
        order = (0, 1) if i % 2 == 0 else (1, 0)
        got = {}
        for st in order:
            if pause(st and not aa) != 0:
                sys.exit("gpu_steps.py toggle: cuprobe_bench_pause failed (not recording?)")
            torch.cuda.synchronize()
            c0 = pmu.read() if pmu else None
            s0 = st_timer.read() if st_timer else None
            t0 = time.perf_counter()
            for _ in range(block):
                step()
            torch.cuda.synchronize()
            got[st] = time.perf_counter() - t0
            if st_timer:
                s1 = st_timer.read()
                d = pmu_mod.selftime_delta(s0, s1)
                acc = st_sums[st]
                st_sums[st] = d if acc is None else [[a + b for a, b in zip(x, y)]
                                                     for x, y in zip(acc, d)]
                st_steps[st] += block
                st_wall[st] += got[st] * 1e9
            if pmu:
                d = pmu_mod.delta(c0, pmu.read())
                acc = sums[st]
                for k, (v, m) in d.items():
                    a, am = acc.get(k, (0.0, False))
                    acc[k] = (a + v, am or m)
                nsteps[st] += block
            times[st].append(got[st])
        pairs.append(got[1] / got[0])
        i += 1
    pause(0)
    pairs.sort()
    n = len(pairs)
    med = (pairs[(n - 1) // 2] + pairs[n // 2]) / 2
    logs = [math.log(r) for r in pairs]
    mean = sum(logs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (n - 1))
    # The median's standard error for a roughly normal spread: 1.2533 sd/sqrt(n).
    se = med * 1.2533 * sd / math.sqrt(n)
    for st, name in ((0, "recording"), (1, "paused")):
        t = sorted(times[st])
        print("toggle %s blocks %d median_ms_per_step %.4f" %
              (name, len(t), 1e3 * t[len(t) // 2] / block))
    print("toggle ratio %.4f se %.4f pairs %d aa %d mean_ratio %.4f" %
          (med, se, n, int(aa), math.exp(mean)), flush=True)
    if pmu:
        pmu_mod.report(sums, nsteps, lambda line: print(line, flush=True))
        pmu.close()
    if st_timer and st_sums[0] and st_sums[1]:
        pmu_mod.selftime_report(st_sums, st_steps, st_wall, st_timer.api,
                                lambda line: print(line, flush=True))


def main():
    kind = sys.argv[1]
    arg = sys.argv[2] if len(sys.argv) > 2 else None
    step = build(kind)
    warm_up(step, kind)
    if arg == "serve":
        serve(step, kind)
        return
    if arg == "toggle":
        secs = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0
        block = int(sys.argv[4]) if len(sys.argv) > 4 else 10
        toggle(step, kind, secs, block)
        return
    secs = float(arg) if arg else (15.0 if kind == "gpt2" else 8.0)
    # GPU_STEPS_PERF_CTL: a perf --control fifo; perf samples the timed window
    # only (perf record --control=fifo:PATH), not start-up and warm-up.
    ctl = os.environ.get("GPU_STEPS_PERF_CTL")
    ctl = open(ctl, "w", buffering=1) if ctl else None
    if ctl:
        ctl.write("enable\n")
    rate, n, loss, _ = timed(step, kind, secs)
    if ctl:
        ctl.write("disable\n")
        ctl.close()
    print("steps_per_s %.3f" % rate)
    print("steps %d" % n)
    if kind != "alloc":
        print("loss %.6f" % loss.item())


main()
