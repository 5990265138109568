"""run.py - the accuracy suite: every workload of this folder, clean and with
one planted bug, under `cuprobe run`; then `cuprobe report --json` of its
traces, judged against the bug's marker:

  clean  no warning and no error;
  bug    a warning or error of the planted check whose call sites (or the
         file and line the finding names) include the line marked
         `# EXPECT: CHECK` in the workload's source.

A marker may name other checks after the planted one, each with a `+`
(`# EXPECT: fatal-error +kernel-log`): findings the same bug causes too.
They are neither required nor false alarms.  Any other warning or error of a
bug run, and every warning or error of a clean run, is a false alarm.

Usage (from anywhere, after `make`; the GPU machine needs build/):
  run.py [-j JOBS] [--shard K/N] [--only NAME...] [--deadline SECONDS]
         [--gpus N] [--keep-traces] OUTDIR
      runs the workloads (-j: how many at a time, 4 by default; workloads
      that take most of the card run alone first; --deadline: start
      none after that many seconds; --gpus: the machine's GPUs, instead of
      nvidia-smi's count); OUTDIR gets per run NAME-VARIANT.out (the
      program's output), .json and .txt (the reports; the traces, in
      NAME-VARIANT/, are removed once reported unless --keep-traces),
      results.json, and accuracy.md: the table of every result in OUTDIR.
      A shard runs every Nth workload: shards run into one OUTDIR, or
      into several, add up.  ACCURACY_ONLY="NAME ..." is --only.  Exit 1
      when a workload failed to run as written.
  run.py --again OUTDIR... [--docs]
      without a GPU: the traces a --keep-traces run left in OUTDIR reported
      again with this build and judged against the markers as the scripts
      have them now (results.json keeps each run's exit status and time,
      and names the build that reported again), then the table as --table
      makes it.
  run.py --table OUTDIR... [--docs]
      the table again from the results of one or more OUTDIRs (later ones
      win), on stdout; --docs writes docs/validation/accuracy.md and copies
      the text reports into docs/validation/accuracy/reports.txt.
  run.py --check
      without a GPU: every workload's script compiles and has exactly one
      marker naming known checks.

A workload whose framework cannot be imported, that needs more GPUs than the
machine has, or whose program exits 77 (something it needs is missing at
run time; its last line says what) is listed with the reason, not counted.
"""
import argparse
import concurrent.futures
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
CUPROBE = os.path.join(ROOT, "build", "cuprobe")
DOCS = os.path.join(ROOT, "docs", "validation")
RUN_TIMEOUT = 240
REPORT_TIMEOUT = 180
SKIP_EXIT = 77

NATIVE = {"PYTORCH_CUDA_ALLOC_CONF": ""}
EXPANDABLE = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
MALLOC_ASYNC = {"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"}


POOLED = ("torch", "cupy", "jax")


def W(name, script, covers, needs, env=None, gpus=1, launcher=None, crash=False, alone=False,
      pooled=None):
    """One workload.  needs: modules to import ("a|b": either); crash: the
    planted bug ends the program (its exit is not 0); alone: runs with
    nothing else on the GPU (it takes most of the card, or fills it);
    pooled: its memory comes from a caching allocator (by default, when it
    needs PyTorch, CuPy or JAX)."""
    if pooled is None:
        pooled = any(m.split(".")[0] in POOLED for m in needs)
    return {"name": name, "script": script, "covers": covers, "needs": needs,
            "env": env or {}, "gpus": gpus, "launcher": launcher, "crash": crash,
            "alone": alone, "pooled": pooled}


WORKLOADS = [
    W("torch_alloc_native", "torch_alloc.py", "PyTorch, native allocator", ["torch"], NATIVE),
    W("torch_alloc_expandable", "torch_alloc.py", "PyTorch, expandable segments", ["torch"],
      EXPANDABLE),
    W("torch_alloc_cudamallocasync", "torch_alloc.py", "PyTorch, cudaMallocAsync backend",
      ["torch"], MALLOC_ASYNC),
    W("torch_evalloss_native", "torch_evalloss.py", "PyTorch, native allocator", ["torch"],
      NATIVE),
    W("torch_evalloss_expandable", "torch_evalloss.py", "PyTorch, expandable segments",
      ["torch"], EXPANDABLE),
    W("torch_evalloss_cudamallocasync", "torch_evalloss.py", "PyTorch, cudaMallocAsync backend",
      ["torch"], MALLOC_ASYNC),
    W("torch_cpu_batches", "torch_cpu_batches.py", "PyTorch, tensors made on the CPU",
      ["torch"], EXPANDABLE),
    W("torch_ext_leak", "torch_ext_leak.py", "PyTorch with a native extension's memory",
      ["torch"], pooled=False),
    W("torch_oom_cdist", "torch_oom.py", "PyTorch, one request larger than the card",
      ["torch"], NATIVE, crash=True),
    W("torch_device_assert", "torch_device_assert.py", "PyTorch, device-side assert",
      ["torch"], crash=True),
    W("set_device_invalid", "../explain/set_device.py", "PyTorch, bad device ordinal",
      ["torch"], {"CUDA_VISIBLE_DEVICES": "0"}, crash=True),
    W("compile_reduce_overhead", "compile_ro.py", "torch.compile, CUDA graphs",
      ["torch", "triton"]),
    W("compile_eval_keep", "compile_eval.py", "torch.compile, training and evaluation",
      ["torch", "triton"]),
    W("hf_gpt2", "hf_gpt2.py", "transformers GPT-2, own loop", ["torch", "transformers"]),
    W("hf_trainer_predict", "hf_trainer.py", "transformers Trainer",
      ["torch", "transformers", "accelerate"]),
    W("lightning_step_logits", "lightning_logits.py", "Lightning",
      ["torch", "lightning|pytorch_lightning"]),
    W("lightning_unpinned", "lightning_unpinned.py", "Lightning, its own batch copies",
      ["torch", "lightning|pytorch_lightning"]),
    W("jax_jit_train", "jax_train.py", "JAX, cuda_async allocator", ["jax"],
      {"XLA_PYTHON_CLIENT_ALLOCATOR": "cuda_async"}, alone=True),
    W("flax_train", "flax_train.py", "Flax on JAX, preallocated pool", ["jax", "flax", "optax"],
      alone=True),
    W("jax_pool_oom", "jax_pool_oom.py", "JAX, OOM inside the preallocated pool", ["jax"],
      crash=True, alone=True),
    W("cupy_loop", "cupy_loop.py", "CuPy, memory pool", ["cupy"]),
    W("cupy_unpinned_set", "cupy_unpinned.py", "CuPy, stream copies", ["cupy"]),
    W("cupy_fork_pool", "cupy_fork.py", "CuPy, multiprocessing Pool", ["cupy"], crash=True),
    W("numba_frames", "numba_frames.py", "numba.cuda kernels", ["numba.cuda"]),
    W("numba_unpinned", "numba_unpinned.py", "numba.cuda stream copies", ["numba.cuda"]),
    W("triton_kernel", "triton_add.py", "Triton", ["torch", "triton"]),
    W("triton_oob_assert", "triton_gather.py", "Triton, device_assert", ["torch", "triton"],
      {"TRITON_DEBUG": "1"}, crash=True),
    W("cuda_graph_replay", "cuda_graph.py", "PyTorch CUDA graphs", ["torch"]),
    W("cuda_graph_recapture", "cuda_graph_cache.py", "PyTorch CUDA graphs, one per shape",
      ["torch"]),
    W("dataloader_fork_cuda", "../explain/fork_worker.py", "DataLoader workers, fork",
      ["torch"], crash=True),
    W("backward_growth", "../explain/backward_growth.py", "PyTorch, kept in the backward pass",
      ["torch"]),
    W("lightning_backward_growth", "../explain/backward_growth_lightning.py",
      "Lightning, kept in the backward pass", ["torch", "lightning|pytorch_lightning"]),
    W("dataloader_spawn_unpinned", "dataloader_spawn.py", "DataLoader workers, spawn",
      ["torch"]),
    # 2 ranks on one GPU (gloo: NCCL refuses two ranks on one device)
    W("ddp_gloo_shared_gpu", "ddp_gloo.py", "DDP under torchrun, gloo", ["torch"],
      launcher="torchrun:2"),
    W("ddp_torchrun", "ddp_train.py", "DDP under torchrun, NCCL", ["torch"], gpus=2,
      launcher="torchrun"),
    W("torch_device_mismatch", "device_mismatch.py", "PyTorch, tensors on two GPUs", ["torch"],
      gpus=2, crash=True),
    W("triton_wrong_device", "triton_xdev.py", "Triton, kernel given another GPU's tensor",
      ["torch", "triton"], gpus=2),
]

EXPECT_RE = re.compile(r"#\s*EXPECT:\s*([a-z][a-z-]*)((?:\s+\+[a-z][a-z-]*)*)")


def expectation(script):
    """{"check", "line", "also"} of the one `# EXPECT:` marker of script
    (a path relative to this folder); ValueError when it has none or
    several."""
    found = []
    with open(os.path.join(HERE, script)) as f:
        for n, text in enumerate(f, 1):
            m = EXPECT_RE.search(text)
            if m:
                also = [a.lstrip("+") for a in m.group(2).split()]
                found.append({"check": m.group(1), "line": n, "also": also})
    if len(found) != 1:
        raise ValueError("%s: %d `# EXPECT:` markers, one needed" % (script, len(found)))
    return found[0]


# ---------------------------------------------------------------- judging

def _base_line(text, base):
    """The line of the first `BASE:N` in text, or None."""
    m = re.search(r"(?:^|[/\s(])" + re.escape(base) + r":(\d+)", text or "")
    return int(m.group(1)) if m else None


def finding_lines(finding, script):
    """Lines of the workload's script that the finding names: per site the
    innermost Python frame in that file (or the site's label), and the
    file and line of its details: the exception's line, a worker's line,
    the sites of the launches in flight and of an OOM's allocations."""
    base = os.path.basename(script)
    out = set()
    for s in finding.get("sites") or ():
        frames = [fr for fr in s.get("python") or ()
                  if os.path.basename(fr.get("file") or "") == base and fr.get("line")]
        if frames:
            out.add(int(frames[0]["line"]))
        n = _base_line(s.get("site"), base)
        if n:
            out.add(n)

    def walk(v):
        if isinstance(v, dict):
            if os.path.basename(str(v.get("file") or "")) == base and \
                    isinstance(v.get("line"), int) and v["line"] > 0:
                out.add(v["line"])
            for k, x in v.items():
                if k == "site" and isinstance(x, str):
                    n = _base_line(x, base)
                    if n:
                        out.add(n)
                else:
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(finding.get("details") or {})
    return out


def _said(f, script):
    lines = sorted(finding_lines(f, script))
    return "%s %s%s" % (f.get("severity"), f.get("check"),
                        " (line %s)" % ", ".join(map(str, lines)) if lines else "")


def judge(run, report, crash):
    """The verdict of one run: a dict with
      state      "judged", "failed" (the program did not run as written, or
                 no report), "skipped" or "not run";
      found      for a judged bug run: "line", "elsewhere" or "missed";
      alarms     the false alarms (one string each);
      text       what the table says."""
    variant, script = run["variant"], run["script"]
    if run.get("status") in ("skipped", "not run"):
        return {"state": run["status"], "text": "%s: %s" % (run["status"], run.get("why")),
                "alarms": []}
    rc = run.get("rc")
    failed = None
    if rc == "error":
        failed = "run.py could not run it (%s)" % run.get("why")
    elif rc == "timeout":
        failed = "timed out after %s s" % run.get("secs")
    elif variant == "clean" and rc != 0:
        failed = "exit %s" % rc
    elif variant == "bug" and crash and rc == 0:
        failed = "exit 0: the planted crash did not happen"
    elif variant == "bug" and not crash and rc != 0:
        failed = "exit %s" % rc
    elif report is None:
        failed = "no report (%s)" % (run.get("report_error") or "no trace")
    if failed:
        return {"state": "failed", "text": "FAILED: %s, see %s-%s.out"
                % (failed, run["name"], variant), "alarms": []}
    bad = [f for f in report.get("findings") or () if f.get("severity") in ("warning", "error")]
    if variant == "clean":
        alarms = [_said(f, script) for f in bad]
        return {"state": "judged", "alarms": alarms,
                "text": "FALSE ALARM: " + "; ".join(alarms) if alarms else "clean"}
    want = run["expect"]["check"]
    line = run["expect"]["line"]
    ok = {want} | set(run["expect"].get("also") or ())
    hits = [f for f in bad if f.get("check") == want]
    alarms = [_said(f, script) for f in bad if f.get("check") not in ok]
    lines = set().union(*(finding_lines(f, script) for f in hits)) if hits else set()
    if line in lines:
        found, text = "line", "at the line"
    elif hits:
        found = "elsewhere"
        text = "elsewhere (%s)" % ("line " + ", ".join(map(str, sorted(lines)))
                                   if lines else "no line of the script")
    else:
        found = "missed"
        info = [f for f in report.get("findings") or ()
                if f.get("check") == want and f.get("severity") == "info"]
        text = "MISSED (info only)" if info else "MISSED"
    if alarms:
        text += "; FALSE ALARM: " + "; ".join(alarms)
    return {"state": "judged", "found": found, "alarms": alarms, "text": text}


# ---------------------------------------------------------------- the table

def load_results(dirs):
    """(meta of the first OUTDIR, {(name, variant): run}) over OUTDIRs, a
    later OUTDIR's run replacing an earlier one's; each run gets "dir"."""
    meta, runs = None, {}
    for d in dirs:
        path = os.path.join(d, "results.json")
        with open(path) as f:
            doc = json.load(f)
        m = doc.get("meta") or {}
        if meta is None:
            meta = dict(m, wall=dict(m.get("wall") or {}))
        else:
            meta["wall"].update(m.get("wall") or {})
        for r in doc.get("runs") or ():
            r = dict(r, dir=os.path.abspath(d))
            runs[(r["name"], r["variant"])] = r
    return meta or {}, runs


def read_report(run):
    if not run.get("report"):
        return None
    try:
        with open(os.path.join(run["dir"], run["report"])) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _cell(s):
    return str(s).replace("|", "/").replace("\n", " ")


def table(meta, runs, workloads=None):
    """The page, as a string: one row per workload, the totals, and last
    the line `recall N/M at the line, F false alarms in C clean runs`."""
    workloads = WORKLOADS if workloads is None else workloads
    rows = []
    n_line = n_else = n_missed = n_clean = 0
    pool_found = pool_all = 0           # growth and leaks under a caching allocator
    f_clean = f_bug = 0
    failed, skipped = [], []
    for w in workloads:
        try:
            exp = expectation(w["script"])
        except (OSError, ValueError) as e:
            exp = {"check": "?", "line": 0, "also": []}
            failed.append("%s: %s" % (w["name"], e))
        cells = {}
        for variant in ("bug", "clean"):
            run = runs.get((w["name"], variant))
            if run is None:
                cells[variant] = ("not run: no result", "", "not run")
                skipped.append((w["name"], variant, "no result"))
                continue
            run.setdefault("script", w["script"])
            run.setdefault("expect", exp)
            v = judge(run, read_report(run) if run.get("status") == "ran" else None, w["crash"])
            secs = "%.0f s" % run["secs"] if isinstance(run.get("secs"), (int, float)) else ""
            cells[variant] = (v["text"], secs, v["state"])
            if v["state"] == "failed":
                failed.append("%s-%s: %s" % (w["name"], variant, v["text"]))
            elif v["state"] in ("skipped", "not run"):
                skipped.append((w["name"], variant, run.get("why")))
            elif variant == "clean":
                n_clean += 1
                f_clean += len(v["alarms"])
            else:
                f_bug += len(v["alarms"])
                n_line += v["found"] == "line"
                n_else += v["found"] == "elsewhere"
                n_missed += v["found"] == "missed"
                if w.get("pooled") and exp["check"] in ("memory-growth", "leak"):
                    pool_all += 1
                    pool_found += v["found"] == "line"
        if cells["clean"][0] == cells["bug"][0] and cells["bug"][2] in ("skipped", "not run"):
            cells["clean"] = (cells["bug"][2], "", "")      # the reason said once
        planted = "`%s` at %s:%d" % (exp["check"], os.path.basename(w["script"]), exp["line"])
        if exp["also"]:
            planted += " (also: %s)" % ", ".join(exp["also"])
        rows.append((w["name"], w["covers"], planted,
                     cells["bug"][0], cells["clean"][0],
                     " / ".join(x for x in (cells["bug"][1], cells["clean"][1]) if x)))
    m = n_line + n_else + n_missed
    f_all = f_clean + f_bug
    out = ["# cuprobe accuracy on real workloads", ""]
    where = "%s GPU%s (%s)" % (meta.get("ngpu", "?"), "" if meta.get("ngpu") == 1 else "s",
                               meta.get("gpu", "unknown"))
    wall = meta.get("wall") or {}
    out.append("`tests/gpu/accuracy/run.sh %sOUTDIR` on %s, %s, cuprobe %s; %d s%s."
               % ("--attribute " if meta.get("attribute") else "", where, meta.get("date", "?"),
                  meta.get("commit", "?"),
                  sum(wall.values()), " in %d shards" % len(wall) if len(wall) > 1 else ""))
    if meta.get("reported_again"):
        out.append("Its traces reported again by cuprobe %s (`run.py --again OUTDIR --docs`, no "
                   "GPU): the programs ran under the build above, the analyzer is this one."
                   % meta["reported_again"])
    if meta.get("versions"):
        out += ["", "Frameworks: " + ", ".join("%s %s" % kv
                                                for kv in sorted(meta["versions"].items())) + "."]
    out += ["",
            "Every workload runs twice: clean, and with one planted bug marked `# EXPECT: CHECK` "
            "at its line.  A bug is found **at the line** when a warning or error of that check "
            "names the line (a call site, or the line the finding is about), **elsewhere** when "
            "the check fires without naming it, and **missed** otherwise.  A false alarm is a "
            "warning or error of a clean run, or in a bug run one of a check the marker does not "
            "name.  The text report of every run is in [accuracy/reports.txt](accuracy/reports.txt); the table comes "
            "from `python3 tests/gpu/accuracy/run.py --table OUTDIR --docs` "
            "([accuracy/README.md](accuracy/README.md)).",
            "",
            "| workload | runs | planted bug | bug run | clean run | time (bug / clean) |",
            "|---|---|---|---|---|---|"]
    out += ["| %s |" % " | ".join(_cell(x) for x in r) for r in rows]
    out += ["",
            "Planted bugs judged: %d: %d found at the line, %d found elsewhere, %d missed."
            % (m, n_line, n_else, n_missed),
            "Of them memory growth and leaks under a caching allocator (PyTorch, CuPy, JAX): "
            "%d/%d at the line." % (pool_found, pool_all),
            "False alarms: %d: %d in %d clean runs, %d in bug runs beside the planted bug."
            % (f_all, f_clean, n_clean, f_bug)]
    if skipped:
        # reason -> workloads (NAME-VARIANT where the variants differ)
        why, by_run = {}, {(n, v): r for n, v, r in skipped}
        for (name, variant), reason in by_run.items():
            other = by_run.get((name, "clean" if variant == "bug" else "bug"))
            tag = name if other == reason else "%s-%s" % (name, variant)
            if tag not in why.setdefault(reason, []):
                why[reason].append(tag)
        out.append("Not counted: " + "; ".join("%s: %s" % (r, ", ".join(v))
                                               for r, v in sorted(why.items(), key=str)) + ".")
    if failed:
        out.append("Failed to run as written (not counted): " + "; ".join(failed) + ".")
    out += ["", "recall %d/%d at the line, %d false alarms in %d clean runs"
            % (n_line, m, f_all, n_clean)]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- running

def have_module(mod, cache, lock):
    """None when one of the modules "a|b" imports, else why not."""
    with lock:
        if mod in cache:
            return cache[mod]
    why = None
    for alt in mod.split("|"):
        r = subprocess.run([sys.executable, "-c", "import " + alt], capture_output=True,
                           text=True, timeout=180)
        if r.returncode == 0:
            why = None
            break
        last = (r.stderr.strip().splitlines() or ["import failed"])[-1]
        why = "%s cannot be imported (%s)" % (alt, last[:100])
    with lock:
        cache[mod] = why
    return why


def gpu_query(args):
    try:
        r = subprocess.run(["nvidia-smi"] + args, capture_output=True, text=True, timeout=60)
        return [l.strip() for l in r.stdout.splitlines() if l.strip()]
    except (OSError, subprocess.SubprocessError):
        return []


def gpu_count():
    """nvidia-smi's count, else the device nodes'."""
    n = len([l for l in gpu_query(["-L"]) if l.startswith("GPU ")])
    if n == 0 and os.path.isdir("/dev"):
        n = len([d for d in os.listdir("/dev") if re.fullmatch(r"nvidia\d+", d)])
    return n


def framework_versions():
    want = ("torch", "triton", "jax", "jaxlib", "flax", "optax", "lightning",
            "pytorch-lightning", "transformers", "accelerate", "numba", "numba-cuda")
    out = {}
    for d in importlib.metadata.distributions():
        name = (d.metadata.get("Name") or "").lower()
        if name in want or name.startswith("cupy"):
            out[name] = d.version
    return out


def cuprobe_commit():
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    if r.returncode == 0 and r.stdout.strip():
        return r.stdout.strip()
    r = subprocess.run([CUPROBE, "--version"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def run_one(outdir, w, variant, keep_traces=False, limit=RUN_TIMEOUT, attribute=False):
    """Run one variant under cuprobe (killed after limit seconds) and
    report it; the run's record.  The traces are removed once reported
    unless keep_traces."""
    tag = "%s-%s" % (w["name"], variant)
    tdir = os.path.join(outdir, tag)
    shutil.rmtree(tdir, ignore_errors=True)
    os.makedirs(tdir)
    cmd = [CUPROBE, "run", "-o", os.path.join(tdir, "t.%p.trace")]
    cmd += ["--attribute", "--"] if attribute else ["--"]
    launcher = w["launcher"] or ""
    if launcher.startswith("torchrun"):
        nproc = int(launcher.split(":")[1]) if ":" in launcher else w["gpus"]
        cmd += [sys.executable, "-m", "torch.distributed.run", "--standalone",
                "--nproc_per_node=%d" % nproc]
    else:
        cmd += [sys.executable]
    cmd += [os.path.join(HERE, w["script"]), variant]
    env = dict(os.environ)
    if w["gpus"] == 1:
        env["CUDA_VISIBLE_DEVICES"] = "0"     # the same run on a machine with more
    env.update(w["env"])
    env["PYTHONUNBUFFERED"] = "1"
    rec = {"name": w["name"], "variant": variant, "script": w["script"],
           "expect": expectation(w["script"]), "status": "ran"}
    t0 = time.time()
    out_path = os.path.join(outdir, tag + ".out")
    with open(out_path, "w") as out:
        try:
            rec["rc"] = subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                       timeout=limit, cwd=HERE).returncode
        except subprocess.TimeoutExpired:
            rec["rc"] = "timeout"
    rec["secs"] = round(time.time() - t0, 1)
    if rec["rc"] == SKIP_EXIT:
        with open(out_path) as f:        # the program's last line, not cuprobe's
            last = ([l.strip() for l in f if l.strip() and not l.startswith("cuprobe:")]
                    or ["exit 77"])[-1]
        rec.update(status="skipped", why=last[:160])
        return rec
    return report_one(outdir, tag, rec, keep_traces)


def report_one(outdir, tag, rec, keep_traces=True):
    """Report the traces of run `tag` (OUTDIR/TAG/*.trace) into TAG.txt and
    TAG.json, noting the report in rec; the traces are removed afterwards
    unless keep_traces.  @return : rec."""
    tdir = os.path.join(outdir, tag)
    traces = sorted(os.path.join(tdir, f) for f in os.listdir(tdir) if f.endswith(".trace"))
    if not traces:
        return rec
    base = [CUPROBE, "report", "--no-progress", "--no-symbolize"]
    try:
        with open(os.path.join(outdir, tag + ".txt"), "w") as f:
            subprocess.run(base + traces, stdout=f, stderr=subprocess.STDOUT,
                           timeout=REPORT_TIMEOUT)
        r = subprocess.run(base + ["--json"] + traces, capture_output=True, text=True,
                           timeout=REPORT_TIMEOUT)
    except subprocess.TimeoutExpired:
        rec["report_error"] = "cuprobe report timed out"
        return rec
    with open(os.path.join(outdir, tag + ".json"), "w") as f:
        f.write(r.stdout)
    try:
        json.loads(r.stdout)
        rec["report"] = tag + ".json"
    except ValueError:
        rec["report_error"] = "report JSON unreadable: " + r.stderr.strip()[-160:]
    if not keep_traces:
        shutil.rmtree(tdir, ignore_errors=True)
    return rec


def save_results(outdir, meta, new):
    """Merge the new runs into OUTDIR/results.json (a run of the same
    workload and variant is replaced)."""
    path = os.path.join(outdir, "results.json")
    runs = []
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
        keys = {(r["name"], r["variant"]) for r in new}
        runs = [r for r in old.get("runs") or () if (r["name"], r["variant"]) not in keys]
        meta["wall"] = dict((old.get("meta") or {}).get("wall") or {}, **meta["wall"])
    order = {w["name"]: i for i, w in enumerate(WORKLOADS)}
    runs = sorted(runs + new, key=lambda r: (order.get(r["name"], 1 << 30), r["variant"]))
    with open(path + ".tmp", "w") as f:
        json.dump({"meta": meta, "runs": runs}, f, indent=1)
    os.replace(path + ".tmp", path)


def run_suite(args):
    outdir = os.path.abspath(args.outdir)
    os.makedirs(outdir, exist_ok=True)
    if not os.access(CUPROBE, os.X_OK):
        sys.exit("run.py: %s is not built (make first)" % CUPROBE)
    ngpu = args.gpus if args.gpus is not None else gpu_count()
    only = set(args.only or os.environ.get("ACCURACY_ONLY", "").split())
    k, n = args.shard
    chosen = [w for i, w in enumerate(WORKLOADS)
              if i % n == k - 1 and (not only or w["name"] in only)]
    unknown = only - {w["name"] for w in WORKLOADS}
    if unknown:
        sys.exit("run.py: no workload named %s" % ", ".join(sorted(unknown)))
    t_all = time.time()
    deadline = t_all + args.deadline if args.deadline else None
    cache, lock = {}, threading.Lock()
    failed = []
    meta = {"ngpu": ngpu, "gpu": ", ".join(sorted(set(gpu_query(
                ["--query-gpu=name", "--format=csv,noheader"])))) or "unknown",
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "commit": cuprobe_commit(), "versions": framework_versions(), "jobs": args.jobs,
            "attribute": args.attribute}
    shard = "%d/%d" % args.shard

    def one(w, variant):
        if ngpu < w["gpus"]:
            why = ("needs %d GPUs" % w["gpus"]) if w["gpus"] > 1 else "needs a GPU"
            return {"name": w["name"], "variant": variant, "status": "not run", "why": why}
        for m in w["needs"]:
            why = have_module(m, cache, lock)
            if why:
                return {"name": w["name"], "variant": variant, "status": "skipped", "why": why}
        if deadline and time.time() > deadline:
            return {"name": w["name"], "variant": variant, "status": "not run",
                    "why": "out of time (--deadline %d)" % args.deadline}
        # A run that starts near the deadline gets what is left of it
        # and a little more: the suite must end inside its machine's limit.
        limit = RUN_TIMEOUT if not deadline else \
            max(30, min(RUN_TIMEOUT, int(deadline + 90 - time.time())))
        try:
            return run_one(outdir, w, variant, args.keep_traces, limit, args.attribute)
        except (OSError, ValueError, subprocess.SubprocessError) as e:
            return {"name": w["name"], "variant": variant, "status": "ran", "rc": "error",
                    "why": "%s: %s" % (type(e).__name__, e)}

    def done(w, rec):
        v = judge(dict(rec, script=w["script"]),
                  read_report(dict(rec, dir=outdir)) if rec.get("status") == "ran" else None,
                  w["crash"])
        if v["state"] == "failed":
            failed.append(rec)
        print("%-30s %-5s %s%s" % (w["name"], rec["variant"], v["text"],
                                   " (%.0f s, exit %s)" % (rec["secs"], rec["rc"])
                                   if "secs" in rec else ""), flush=True)
        # Saved run by run: a suite cut short still leaves its results.
        save_results(outdir, dict(meta, wall={shard: round(time.time() - t_all)}), [rec])

    # Each module imported once, all at a time, before the runs need them.
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda m: have_module(m, cache, lock),
                      sorted({m for w in chosen for m in w["needs"]})))
    # The workloads that take the card first, one at a time; then the rest.
    for w in chosen:
        if w["alone"]:
            for v in ("clean", "bug"):
                done(w, one(w, v))
    jobs = [(w, v) for w in chosen if not w["alone"] for v in ("clean", "bug")]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {pool.submit(one, w, v): w for w, v in jobs}
        for fut in concurrent.futures.as_completed(futs):
            done(futs[fut], fut.result())
    if not chosen:
        save_results(outdir, dict(meta, wall={shard: 0}), [])
    meta, runs = load_results([outdir])
    page = table(meta, runs)
    with open(os.path.join(outdir, "accuracy.md"), "w") as f:
        f.write(page)
    print(page.rstrip().splitlines()[-1])
    print("run.py: %.0f s; table in %s" % (time.time() - t_all,
                                          os.path.join(outdir, "accuracy.md")))
    return 1 if failed else 0


def publish(dirs, meta, runs, page):
    """docs/validation/accuracy.md and, next to it, accuracy/reports.txt:
    the text report of every run, one after the other (one file, not one
    per run: the evidence of the latest run only)."""
    rdir = os.path.join(DOCS, "accuracy")
    os.makedirs(rdir, exist_ok=True)
    for f in os.listdir(rdir):
        if f.endswith(".txt"):
            os.remove(os.path.join(rdir, f))
    with open(os.path.join(rdir, "reports.txt"), "w") as out:
        for key in sorted(runs):
            r = runs[key]
            tag = "%s-%s" % (r["name"], r["variant"])
            src = os.path.join(r["dir"], tag + ".txt")
            if r.get("status") == "ran" and os.path.exists(src):
                out.write("=" * 100 + "\n%s\n" % tag + "=" * 100 + "\n")
                with open(src) as f:
                    out.write(f.read())
                out.write("\n")
    with open(os.path.join(DOCS, "accuracy.md"), "w") as f:
        f.write(page)


def check():
    """Lint without a GPU: names unique, scripts compile, one marker each
    naming known checks.  Returns the problems."""
    ids = set()
    cdir = os.path.join(ROOT, "analyzer", "checks")
    for f in os.listdir(cdir):
        if f.endswith(".c"):
            with open(os.path.join(cdir, f)) as src:
                ids |= set(re.findall(r'\.id = "([a-z-]+)"', src.read()))
    problems = []
    if not ids:
        problems.append("no check ids found under %s" % cdir)
    names = [w["name"] for w in WORKLOADS]
    problems += ["workload %s listed twice" % n for n in sorted(set(names))
                 if names.count(n) > 1]
    for w in WORKLOADS:
        path = os.path.join(HERE, w["script"])
        try:
            with open(path) as f:
                compile(f.read(), path, "exec")
            e = expectation(w["script"])
        except (OSError, ValueError, SyntaxError) as err:
            problems.append("%s: %s" % (w["name"], err))
            continue
        for c in [e["check"]] + e["also"]:
            if ids and c not in ids:
                problems.append("%s: %s:%d names no check %r" % (w["name"], w["script"],
                                                                 e["line"], c))
    return problems


def report_again(outdir):
    """--again: the kept traces of every run in results.json reported again
    with this build (no program runs), and the table redone."""
    path = os.path.join(outdir, "results.json")
    with open(path) as f:
        data = json.load(f)
    for rec in data.get("runs") or ():
        tag = "%s-%s" % (rec["name"], rec["variant"])
        if rec.get("status") == "ran" and os.path.isdir(os.path.join(outdir, tag)):
            rec.pop("report_error", None)
            rec["expect"] = expectation(rec["script"])    # the marker as the script has it now
            report_one(outdir, tag, rec)
    data.setdefault("meta", {})["reported_again"] = cuprobe_commit()
    with open(path + ".tmp", "w") as f:
        json.dump(data, f, indent=1)
    os.replace(path + ".tmp", path)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("outdir", nargs="*")
    p.add_argument("-j", "--jobs", type=int, default=4)
    p.add_argument("--shard", default="1/1")
    p.add_argument("--only", nargs="+")
    p.add_argument("--deadline", type=int, default=0)
    p.add_argument("--gpus", type=int)
    p.add_argument("--keep-traces", action="store_true")
    p.add_argument("--table", action="store_true")
    p.add_argument("--docs", action="store_true")
    p.add_argument("--check", action="store_true")
    p.add_argument("--again", action="store_true",
                   help="report the traces an earlier --keep-traces run left in OUTDIR again")
    p.add_argument("--attribute", action="store_true",
                   help="run every workload under `cuprobe run --attribute`")
    args = p.parse_args(argv)
    if args.check:
        problems = check()
        for x in problems:
            print("run.py --check: " + x)
        if not problems:
            print("run.py --check: %d workloads, each with one marker" % len(WORKLOADS))
        return 1 if problems else 0
    if not args.outdir:
        args.outdir = [os.environ.get("OUT", "accuracy-out")]
    if args.again:
        for outdir in args.outdir:
            report_again(os.path.abspath(outdir))
    if args.table or args.again:
        meta, runs = load_results(args.outdir)
        page = table(meta, runs)
        if args.docs:
            publish(args.outdir, meta, runs, page)
        sys.stdout.write(page)
        return 0
    m = re.fullmatch(r"(\d+)/(\d+)", args.shard)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        p.error("--shard K/N with 1 <= K <= N")
    args.shard = (int(m.group(1)), int(m.group(2)))
    if len(args.outdir) != 1:
        p.error("one OUTDIR to run into")
    args.outdir = args.outdir[0]
    return run_suite(args)


if __name__ == "__main__":
    sys.exit(main())
