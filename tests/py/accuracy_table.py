"""accuracy_table.py - the accuracy suite's judging and table
(tests/gpu/accuracy/run.py), on canned `cuprobe report --json` documents:
no GPU, no cuprobe run.  Exits 0 when every count and verdict is the one
the canned reports call for, 1 with the differences otherwise.

Ten workloads, written to a scratch folder with their markers, and results
in two OUTDIRs (shards; the second replaces one run of the first):
  growth_at       bug: memory-growth whose innermost frame in the script is
                  the marker's line (an outer frame elsewhere)    at the line
  growth_else     bug: innermost frame elsewhere, an outer one at the
                  marker (must not count); clean: one warning     elsewhere
  crash_at        bug: fatal-error by details file/line, a kernel-log the
                  marker allows, a cuda-errors error it does not  at the line
  async_inflight  bug: the line only in a launch-in-flight site   at the line
  worker          bug: the line only in details.worker            at the line
  missed_info     bug: the planted check as info only; clean: a
                  warning and an error                            missed
  missed_none     bug: nothing; clean: exit 1 (failed)            missed
  skipped_mod     a module missing: listed, not counted
  two_gpu         not run: needs 2 GPUs
  crash_no_crash  bug exits 0 though it should crash (failed)
  no_result       no run at all
Expected last line: recall 4/7 at the line, 4 false alarms in 7 clean runs.

With arguments CUPROBE FAKE_DIR (the front end and the fake driver's
folder), also the whole path on the fake driver: run.py runs
accuracy_fake_prog.py (copies from pageable memory; clean: pinned) under
cuprobe, a program that exits 77, one whose module is missing and one that
needs 2 GPUs, and its table must say so; then --again reports the kept
traces again.
"""
import importlib.util
import io
import json
import os
import re
import shutil
import sys
import tempfile
from contextlib import redirect_stdout

ROOT = os.environ.get("ROOT") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
spec = importlib.util.spec_from_file_location(
    "accuracy_run", os.path.join(ROOT, "tests", "gpu", "accuracy", "run.py"))
run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)

problems = []


def want(cond, what):
    if not cond:
        problems.append(what)


def finding(check, sev, sites=(), details=None):
    return {"check": check, "severity": sev, "details": details or {},
            "sites": [{"site": s[0], "python": [{"file": f, "line": l, "function": "f",
                                                  "user": True} for f, l in s[1]]}
                      for s in sites]}


def report(*findings):
    return {"schema": "cuprobe-report", "version": 1, "findings": list(findings)}


tmp = tempfile.mkdtemp(prefix="accuracy-table-")
scripts = os.path.join(tmp, "scripts")
os.makedirs(scripts)
SCRIPTS = {
    "growth_at.py": ["import sys", "", "", "", "", "", "x = keep()   # EXPECT: memory-growth"],
    "growth_else.py": ["x = 1", "", "", "", "y = 2", "", "keep()  # EXPECT: memory-growth"],
    "crash_at.py": ["a = 1", "boom()   # EXPECT: fatal-error +kernel-log"],
    "async_inflight.py": [""] * 8 + ["launch()   # EXPECT: fatal-error"],
    "worker.py": ["", "", "getitem()   # EXPECT: fatal-error"],
    "missed_info.py": ["copy()   # EXPECT: pageable-async-copy"],
    "missed_none.py": ["leak()   # EXPECT: leak"],
    "skipped_mod.py": ["flax()   # EXPECT: memory-growth"],
    "two_gpu.py": ["mix()   # EXPECT: fatal-error"],
    "crash_no_crash.py": ["assert_()   # EXPECT: fatal-error"],
    "no_result.py": ["x()   # EXPECT: oom"],
}
for name, lines in SCRIPTS.items():
    with open(os.path.join(scripts, name), "w") as f:
        f.write("\n".join(lines) + "\n")
run.HERE = scripts
run.WORKLOADS = [
    run.W("growth_at", "growth_at.py", "t", ["torch"]),
    run.W("growth_else", "growth_else.py", "t", ["cupy"]),
    run.W("crash_at", "crash_at.py", "t", [], crash=True),
    run.W("async_inflight", "async_inflight.py", "t", [], crash=True),
    run.W("worker", "worker.py", "t", [], crash=True),
    run.W("missed_info", "missed_info.py", "t", []),
    run.W("missed_none", "missed_none.py", "t", []),
    run.W("skipped_mod", "skipped_mod.py", "t", ["flax"]),
    run.W("two_gpu", "two_gpu.py", "t", [], gpus=2),
    run.W("crash_no_crash", "crash_no_crash.py", "t", [], crash=True),
    run.W("no_result", "no_result.py", "t", []),
]

# The markers.
e = run.expectation("crash_at.py")
want(e == {"check": "fatal-error", "line": 2, "also": ["kernel-log"]}, "marker parsed as %r" % e)
with open(os.path.join(scripts, "two_markers.py"), "w") as f:
    f.write("a()  # EXPECT: leak\nb()  # EXPECT: oom\n")
for bad in ("two_markers.py", "no_result.py.missing"):
    try:
        run.expectation(bad)
        problems.append("expectation(%s) did not fail" % bad)
    except (OSError, ValueError):
        pass

P = "/work/x/"                       # the scripts as the traced program saw them
TORCH = "/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py"
REPORTS = {
    ("growth_at", "bug"): report(
        finding("memory-growth", "warning",
                [("growth_at.py:7 (<module>)", [(TORCH, 125), (P + "growth_at.py", 7),
                                                (P + "growth_at.py", 1)])]),
        finding("leak", "info", [("x", [(P + "growth_at.py", 3)])])),
    ("growth_at", "clean"): report(finding("blocking-copy", "info")),
    ("growth_else", "bug"): report(
        finding("memory-growth", "warning",
                [("growth_else.py:5 (step)", [(P + "growth_else.py", 5),
                                              (P + "growth_else.py", 7)])])),
    ("growth_else", "clean"): report(finding("pageable-async-copy", "warning")),
    ("crash_at", "bug"): report(
        finding("fatal-error", "error", details={"file": P + "crash_at.py", "line": 2}),
        finding("kernel-log", "warning"),
        finding("cuda-errors", "error", [("libfoo.so+0x1", [])])),
    ("crash_at", "clean"): report(),
    ("async_inflight", "bug"): report(
        finding("fatal-error", "error", details={
            "file": P + "async_inflight.py", "line": 20,
            "in_flight": [{"kernel": "k", "stream": 0,
                           "site": P + "async_inflight.py:9 (f) <- "
                                   + P + "async_inflight.py:20 (<module>)"}]})),
    ("async_inflight", "clean"): report(),
    ("worker", "bug"): report(
        finding("fatal-error", "error", details={
            "file": "/usr/lib/python3.12/multiprocessing/x.py", "line": 77,
            "worker": {"file": P + "worker.py", "line": 3, "function": "__getitem__"}})),
    ("worker", "clean"): report(),
    ("missed_info", "bug"): report(finding("pageable-async-copy", "info",
                                           [("missed_info.py:1 (<module>)", [])])),
    ("missed_info", "clean"): report(finding("leak", "warning"), finding("oom", "error")),
    ("missed_none", "bug"): report(),
    ("missed_none", "clean"): report(),
    ("crash_no_crash", "clean"): report(),
    ("crash_no_crash", "bug"): report(),
}
RC = {("missed_none", "clean"): 1, ("crash_at", "bug"): 1, ("async_inflight", "bug"): 1,
      ("worker", "bug"): 1}
SHARD2 = {"missed_none", "skipped_mod", "two_gpu", "crash_no_crash", "growth_else"}

dirs = [os.path.join(tmp, "shard1"), os.path.join(tmp, "shard2")]
docs = {d: {"meta": {"ngpu": 1, "gpu": "Fake H100", "date": "today", "commit": "abc",
                     "wall": {"%d/2" % (i + 1): 100 + i}}, "runs": []}
        for i, d in enumerate(dirs)}
for d in dirs:
    os.makedirs(d)
for w in run.WORKLOADS:
    for variant in ("clean", "bug"):
        if w["name"] == "no_result":
            continue
        d = dirs[1] if w["name"] in SHARD2 else dirs[0]
        rec = {"name": w["name"], "variant": variant, "script": w["script"],
               "expect": run.expectation(w["script"]), "status": "ran",
               "rc": RC.get((w["name"], variant), 0), "secs": 3.0}
        if w["name"] == "skipped_mod":
            rec = {"name": w["name"], "variant": variant, "status": "skipped",
                   "why": "flax cannot be imported (No module named 'flax')"}
        elif w["name"] == "two_gpu":
            rec = {"name": w["name"], "variant": variant, "status": "not run",
                   "why": "needs 2 GPUs"}
        else:
            tag = "%s-%s" % (w["name"], variant)
            with open(os.path.join(d, tag + ".json"), "w") as f:
                json.dump(REPORTS[(w["name"], variant)], f)
            with open(os.path.join(d, tag + ".txt"), "w") as f:
                f.write("report of %s\n" % tag)
            rec["report"] = tag + ".json"
        docs[d]["runs"].append(rec)
# The first shard also ran growth_else's bug, a run the second replaces.
docs[dirs[0]]["runs"].append({"name": "growth_else", "variant": "bug", "status": "ran", "rc": 0,
                              "secs": 1.0, "script": "growth_else.py",
                              "expect": run.expectation("growth_else.py")})
for d in dirs:
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump(docs[d], f)

run.DOCS = os.path.join(tmp, "docs")
out = io.StringIO()
with redirect_stdout(out):
    rc = run.main(["--table", dirs[0], dirs[1], "--docs"])
page = out.getvalue()
want(rc == 0, "--table returned %r" % rc)
lines = page.rstrip("\n").splitlines()
want(lines[-1] == "recall 4/7 at the line, 4 false alarms in 7 clean runs",
     "last line is %r" % lines[-1])
want(page.endswith("clean runs\n"), "the page does not end with the recall line")
rows = {l.split(" | ")[0].lstrip("| "): l for l in lines if l.startswith("| ") and " | t | " in l}
expect_rows = {
    "growth_at": ["| at the line | clean |"],
    "growth_else": ["| elsewhere (line 5) |",
                    "| FALSE ALARM: warning pageable-async-copy |"],
    "crash_at": ["at the line; FALSE ALARM: error cuda-errors |", "(also: kernel-log)"],
    "async_inflight": ["| at the line | clean |"],
    "worker": ["| at the line | clean |"],
    "missed_info": ["| MISSED (info only) |",
                    "FALSE ALARM: warning leak; error oom |"],
    "missed_none": ["| MISSED | FAILED: exit 1, see missed_none-clean.out |"],
    "skipped_mod": ["| skipped: flax cannot be imported (No module named 'flax') | skipped |"],
    "two_gpu": ["| not run: needs 2 GPUs | not run |"],
    "crash_no_crash": ["FAILED: exit 0: the planted crash did not happen"],
    "no_result": ["| not run: no result | not run |", "`oom` at no_result.py:1"],
}
for name, parts in expect_rows.items():
    row = rows.get(name)
    if row is None:
        problems.append("no row for %s" % name)
        continue
    for p in parts:
        want(p in row, "row %s lacks %r:\n  %s" % (name, p, row))
want("Planted bugs judged: 7: 4 found at the line, 1 found elsewhere, 2 missed." in page,
     "the counts line is wrong")
want("Of them memory growth and leaks under a caching allocator (PyTorch, CuPy, JAX): "
     "1/2 at the line." in page, "the caching allocators' line is wrong")
want("False alarms: 4: 3 in 7 clean runs, 1 in bug runs beside the planted bug." in page,
     "the false alarms line is wrong")
want("Fake H100" in page and "201 s in 2 shards" in page, "the header lacks the machine or time")
want("Not counted: flax cannot be imported (No module named 'flax'): skipped_mod; "
     "needs 2 GPUs: two_gpu; no result: no_result." in page, "the not-counted line is wrong")
with open(os.path.join(run.DOCS, "accuracy.md")) as f:
    want(f.read() == page, "--docs wrote another page")
copied = sorted(os.listdir(os.path.join(run.DOCS, "accuracy")))
want(copied == ["reports.txt"], "--docs wrote %s" % copied)
with open(os.path.join(run.DOCS, "accuracy", "reports.txt")) as f:
    names = [l.strip() for l in f if re.match(r"^[a-z_]+-(bug|clean)$", l.strip())]
want("growth_at-bug" in names and "missed_none-bug" in names and
     not any(n.startswith("two_gpu") for n in names), "--docs published %s" % names)

# The whole path, on the fake driver.
if len(sys.argv) == 3:
    shutil.copy(os.path.join(ROOT, "tests", "py", "accuracy_fake_prog.py"), scripts)
    with open(os.path.join(scripts, "fake_skip.py"), "w") as f:
        f.write("import sys\nprint('no frobnicator here')\nsys.exit(77)   # EXPECT: oom\n")
    run.CUPROBE = sys.argv[1]
    run.WORKLOADS = [run.W("fake_copy", "accuracy_fake_prog.py", "ctypes", ["ctypes"]),
                     run.W("fake_skip", "fake_skip.py", "t", ["ctypes"]),
                     run.W("fake_nomod", "accuracy_fake_prog.py", "t", ["no_such_module_here"]),
                     run.W("fake_two", "accuracy_fake_prog.py", "t", [], gpus=2)]
    os.environ.update(LD_LIBRARY_PATH=sys.argv[2], FAKECUDA_MEM="1G")
    line = run.expectation("accuracy_fake_prog.py")["line"]
    fake = os.path.join(tmp, "fake")
    out = io.StringIO()
    with redirect_stdout(out):
        rc = run.main(["-j", "2", "--gpus", "1", "--keep-traces", fake])
    log = out.getvalue()
    try:
        with open(os.path.join(fake, "accuracy.md")) as f:
            page = f.read()
    except OSError:
        page = ""
    want(rc == 0, "run.py returned %r:\n%s" % (rc, log))
    want(page.rstrip("\n").splitlines()[-1:] ==
         ["recall 1/1 at the line, 0 false alarms in 1 clean runs"],
         "fake-driver table:\n%s\n%s" % (page, log))
    for p in ("| fake_copy | ctypes | `pageable-async-copy` at accuracy_fake_prog.py:%d | "
              "at the line | clean |" % line,
              "| skipped: no frobnicator here | skipped |",
              "skipped: no_such_module_here cannot be imported",
              "| not run: needs 2 GPUs | not run |"):
        want(p in page, "fake-driver table lacks %r:\n%s" % (p, page))
    for f in ("fake_copy-bug.json", "fake_copy-bug.txt", "fake_copy-clean.out", "results.json"):
        want(os.path.exists(os.path.join(fake, f)), "run.py wrote no %s" % f)
    # --again: the kept traces reported again (the reports gone here), the
    # same verdicts, and the table says which build reported them.
    for f in ("fake_copy-bug.json", "fake_copy-bug.txt"):
        os.unlink(os.path.join(fake, f))
    with redirect_stdout(io.StringIO()) as again:
        rc = run.main(["--again", fake])
    want(rc == 0 and os.path.exists(os.path.join(fake, "fake_copy-bug.json")),
         "run.py --again returned %r and wrote no report" % rc)
    lines = again.getvalue().rstrip("\n").splitlines()
    want(lines[-1:] == ["recall 1/1 at the line, 0 false alarms in 1 clean runs"] and
         any(l.startswith("Its traces reported again by cuprobe ") for l in lines[:5]),
         "run.py --again table:\n%s" % again.getvalue())

# The real suite's markers and scripts.
run.HERE = os.path.join(ROOT, "tests", "gpu", "accuracy")
spec.loader.exec_module(run)
real = run.check()
want(not real, "run.py --check: %s" % real)
want(len(run.WORKLOADS) >= 24, "only %d workloads" % len(run.WORKLOADS))

if problems:
    print("\n".join("FAIL: " + p for p in problems))
    sys.exit(1)
print("ok: the table of 11 canned workloads counts right%s; %d real workloads pass --check"
      % (", and of a run on the fake driver" if len(sys.argv) == 3 else "", len(run.WORKLOADS)))
