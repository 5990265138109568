"""run.py OUTDIR - the accuracy suite: every workload of this
folder, clean and with one planted bug, under `cuprobe run`; then
`cuprobe report --json` of its traces, compared with the expectation:

  clean  no warning and no error;
  bug    a warning or error of the expected check whose sites include the
         line marked `# EXPECT: <check-id>` in the workload's source.

Writes OUTDIR/accuracy.md (one table row per run: expected, what the report
said, verdict; totals: recall and false warnings/errors), and per run the
traces, NAME.json, NAME.txt and NAME.out (the program's output).
Workloads whose framework cannot be imported, or that need more GPUs than
the machine has, are skipped with the reason (not counted).  ACCURACY_ONLY
(names, space-separated) runs only those.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
CUPROBE = os.path.join(ROOT, "build", "cuprobe")
RUN_TIMEOUT = 150
REPORT_TIMEOUT = 120

# name, script, environment, modules it needs, GPUs it needs, launcher
WORKLOADS = [
    ("hf_gpt2", "hf_gpt2.py", {}, ["torch", "transformers"], 1, None),
    ("compile_reduce_overhead", "compile_ro.py", {}, ["torch", "triton"], 1, None),
    ("jax_jit_train", "jax_train.py",
     {"XLA_PYTHON_CLIENT_ALLOCATOR": "cuda_async"}, ["jax"], 1, None),
    ("cupy_loop", "cupy_loop.py", {}, ["cupy"], 1, None),
    ("triton_kernel", "triton_add.py", {}, ["torch", "triton"], 1, None),
    ("cuda_graph_replay", "cuda_graph.py", {}, ["torch"], 1, None),
    ("torch_alloc_native", "torch_alloc.py", {"PYTORCH_CUDA_ALLOC_CONF": ""}, ["torch"], 1,
     None),
    ("torch_alloc_expandable", "torch_alloc.py",
     {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}, ["torch"], 1, None),
    ("torch_alloc_cudamallocasync", "torch_alloc.py",
     {"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"}, ["torch"], 1, None),
    ("ddp_torchrun", "ddp_train.py", {}, ["torch"], 2, "torchrun"),
    # 2 ranks on whatever GPUs there are (one H200: both share GPU 0)
    ("ddp_gloo_shared_gpu", "ddp_gloo.py", {}, ["torch"], 1, "torchrun:2"),
    # the explanations of tests/gpu/explain (explain_cases.sh runs them too)
    ("set_device_invalid", "../explain/set_device.py", {"CUDA_VISIBLE_DEVICES": "0"},
     ["torch"], 1, None),
    ("dataloader_fork_cuda", "../explain/fork_worker.py", {}, ["torch"], 1, None),
    ("backward_growth", "../explain/backward_growth.py", {}, ["torch"], 1, None),
    ("lightning_backward_growth", "../explain/backward_growth_lightning.py", {},
     ["torch", "lightning"], 1, None),
]


def have_module(mod):
    r = subprocess.run([sys.executable, "-c", "import " + mod], capture_output=True,
                       text=True, timeout=120)
    if r.returncode == 0:
        return None
    last = (r.stderr.strip().splitlines() or ["import failed"])[-1]
    return "%s cannot be imported (%s)" % (mod, last[:120])


def gpu_count():
    try:
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
        return sum(1 for l in r.stdout.splitlines() if l.startswith("GPU "))
    except (OSError, subprocess.SubprocessError):
        return 0


def expectation(script):
    """(check id, line) of the `# EXPECT: id` marker in the script."""
    with open(os.path.join(HERE, script)) as f:
        for n, line in enumerate(f, 1):
            m = re.search(r"#\s*EXPECT:\s*([a-z-]+)", line)
            if m:
                return m.group(1), n
    return None, None


def site_lines(finding, script):
    """Lines of `script` named by any Python frame of the finding's sites,
    or by its details' file and line (fatal-error has no sites)."""
    base = os.path.basename(script)
    out = set()
    details = finding.get("details") or {}
    if os.path.basename(str(details.get("file") or "")) == base and details.get("line"):
        out.add(int(details["line"]))
    for s in finding.get("sites") or ():
        for fr in s.get("python") or ():
            if fr.get("file") and os.path.basename(fr["file"]) == base and fr.get("line"):
                out.add(int(fr["line"]))
        m = re.search(re.escape(base) + r":(\d+)", s.get("site") or "")
        if m:
            out.add(int(m.group(1)))
    return out


def run_one(outdir, name, script, env, launcher, variant, ngpu_needed):
    tag = "%s-%s" % (name, variant)
    tdir = os.path.join(outdir, tag)
    shutil.rmtree(tdir, ignore_errors=True)
    os.makedirs(tdir)
    cmd = [CUPROBE, "run", "-o", os.path.join(tdir, "t.%p.trace"), "--"]
    if launcher and launcher.startswith("torchrun"):
        nproc = int(launcher.split(":")[1]) if ":" in launcher else ngpu_needed
        cmd += [sys.executable, "-m", "torch.distributed.run", "--standalone",
                "--nproc_per_node=%d" % nproc]
    else:
        cmd += [sys.executable]
    cmd += [os.path.join(HERE, script), variant]
    e = dict(os.environ)
    e.update(env)
    e["PYTHONUNBUFFERED"] = "1"
    t0 = time.time()
    with open(os.path.join(outdir, tag + ".out"), "w") as out:
        try:
            rc = subprocess.run(cmd, env=e, stdout=out, stderr=subprocess.STDOUT,
                                timeout=RUN_TIMEOUT, cwd=HERE).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    secs = time.time() - t0
    traces = sorted(os.path.join(tdir, f) for f in os.listdir(tdir) if f.endswith(".trace"))
    rep = {"findings": []}
    if traces:
        base = [CUPROBE, "report", "--no-progress", "--no-symbolize"]
        with open(os.path.join(outdir, tag + ".txt"), "w") as f:
            subprocess.run(base + traces, stdout=f, stderr=subprocess.STDOUT,
                           timeout=REPORT_TIMEOUT)
        r = subprocess.run(base + ["--json"] + traces, capture_output=True, text=True,
                           timeout=REPORT_TIMEOUT)
        with open(os.path.join(outdir, tag + ".json"), "w") as f:
            f.write(r.stdout)
        try:
            rep = json.loads(r.stdout)
        except ValueError:
            rep = {"findings": [], "error": "report JSON unreadable: " + r.stderr[-200:]}
    return rc, secs, rep


def judge(rep, variant, script):
    """(verdict, said, false_alarms, found)"""
    want, line = expectation(script)
    bad = [f for f in rep.get("findings", ()) if f.get("severity") in ("warning", "error")]
    said = "; ".join("%s %s" % (f["severity"], f["check"]) for f in bad) or "no warning/error"
    if rep.get("error"):
        said = rep["error"]
    if variant == "clean":
        return ("pass" if not bad else "FALSE ALARM"), said, len(bad), None
    hits = [f for f in bad if f.get("check") == want]
    found = any(line in site_lines(f, script) for f in hits)
    others = [f for f in bad if f.get("check") != want]
    if found:
        verdict = "found"
    elif hits:
        lines = sorted(set().union(*(site_lines(f, script) for f in hits)))
        verdict = "found, not at line %d (sites: %s)" % (line, lines or "no line of the script")
    else:
        verdict = "MISSED"
    return verdict, said, len(others), found


def main():
    outdir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                             os.environ.get("OUT", "accuracy-out"))
    os.makedirs(outdir, exist_ok=True)
    if not os.access(CUPROBE, os.X_OK):
        sys.exit("run.py: %s is not built (make first)" % CUPROBE)
    ngpu = gpu_count()
    mods = {}
    rows, planted, found, false_alarms, skipped = [], 0, 0, 0, 0
    t_all = time.time()
    # ACCURACY_ONLY="name ...": only those workloads (a short device call).
    only = os.environ.get("ACCURACY_ONLY", "").split()
    for name, script, env, needs, ngpu_needed, launcher in WORKLOADS:
        if only and name not in only:
            continue
        why = None
        if ngpu < ngpu_needed:
            why = "needs %d GPUs, this machine has %d" % (ngpu_needed, ngpu)
        for m in needs:
            if why is None:
                if m not in mods:
                    mods[m] = have_module(m)
                why = mods[m]
        want, line = expectation(script)
        for variant in ("clean", "bug"):
            exp = ("no warning/error" if variant == "clean"
                   else "%s at %s:%s" % (want, script, line))
            if why:
                print("skip %s-%s: %s" % (name, variant, why), flush=True)
                rows.append((name, variant, exp, "-", "skipped: " + why, ""))
                skipped += 1
                continue
            rc, secs, rep = run_one(outdir, name, script, env, launcher, variant, ngpu_needed)
            verdict, said, fa, ok = judge(rep, variant, script)
            false_alarms += fa
            if variant == "bug":
                planted += 1
                found += bool(ok)
            note = "%.0f s, exit %s" % (secs, rc)
            rows.append((name, variant, exp, said, verdict, note))
            print("%-28s %-5s %-12s %s (%s)" % (name, variant, verdict, said, note), flush=True)
    total = time.time() - t_all
    with open(os.path.join(outdir, "accuracy.md"), "w") as f:
        f.write("# cuprobe accuracy on real workloads\n\n")
        f.write("`tests/gpu/accuracy/run.sh OUTDIR` on %s GPU(s) (%s), %s; %.0f s in all.\n\n"
                % (ngpu, gpu_name(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), total))
        f.write("Clean runs must have no warning and no error; a planted bug must be a "
                "warning or error of the expected check with a site at the marked line "
                "(`# EXPECT:` in the workload).\n\n")
        f.write("| workload | variant | expected | report said (warnings and errors) | verdict | run |\n")
        f.write("|---|---|---|---|---|---|\n")
        for r in rows:
            f.write("| %s |\n" % " | ".join(str(x).replace("|", "/") for x in r))
        recall = "%d/%d" % (found, planted) if planted else "n/a"
        f.write("\n**Totals:** recall %s planted bugs found at their line; %d false "
                "warnings/errors (in clean runs, and other than the planted one in bug runs); "
                "%d runs skipped.\n" % (recall, false_alarms, skipped))
    print("accuracy: recall %s, %d false warnings/errors, %d skipped, %.0f s -> %s"
          % (recall, false_alarms, skipped, total, os.path.join(outdir, "accuracy.md")))


def gpu_name():
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=60)
        names = sorted(set(l.strip() for l in r.stdout.splitlines() if l.strip()))
        return ", ".join(names) or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


if __name__ == "__main__":
    main()
