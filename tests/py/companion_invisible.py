"""companion_invisible.py - the Python companion is invisible to the program
(run by tests/sh/framework_invisible.sh with each CPython found, 3.8 on).

Each case runs a small program in a fresh interpreter (this one) twice, with
scripts/python first on PYTHONPATH as `cuprobe run` arranges and without
it, and the two runs must print the same, exit the same and show the same
tracebacks:
  hooks     sys.excepthook and threading.excepthook are the interpreter's
            own objects (sys.excepthook is sys.__excepthook__);
  main      an uncaught exception: same traceback, and the companion still
            records it (kind "exception", hook sys.excepthook);
  thread    a thread's uncaught exception: same, hook threading.excepthook;
  caught    Ctrl-C caught, exit 0: nothing recorded;
  site      a failing sitecustomize of the environment, with and without
            PYTHONVERBOSE: the same message and frames, no frame of ours;
  import    a watched framework (cupy) whose import fails: the same
            traceback, no frame of the companion's;
  attribute attribution on (CUPROBE_ATTRIBUTE=1), the stand-in frameworks
            of tests/py/standins: pool allocations through CuPy's memory
            hook and PyTorch's recorded stacks, then an uncaught OOM raised
            after the OOM observers ran: the same output and traceback, and
            both frameworks' attribution recorded.
Records go to the companion's test sink (CUPROBE_FRAMEWORK_SINK).
Exit 0 when every case holds; prints what differs otherwise.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts", "python")
STANDINS = os.path.join(ROOT, "tests", "py", "standins")

HOOKS = """
import sys, threading
print(sys.excepthook is sys.__excepthook__)
print(getattr(threading, "__excepthook__", None) in (None, threading.excepthook))
print(threading.excepthook.__module__, threading.excepthook.__name__)
"""
MAIN = """
def inner():
    raise ValueError("main boom")
inner()
"""
THREAD = """
import threading
def work():
    raise KeyError("thread boom")
t = threading.Thread(target=work, name="worker")
t.start()
t.join()
print("main went on")
"""
ATTRIBUTE = """
import cupy, torch
pool = cupy.get_default_memory_pool()
kept = [pool.malloc(1 << 20) for _ in range(3)]
pool.free(kept.pop())
torch.cuda.init()
held = [torch.cuda._standin_alloc(1 << 20) for _ in range(3)]
print(len(kept), len(held), pool.used_bytes())
torch.cuda._standin_alloc(4 << 30)
"""
CAUGHT = """
import os, signal
try:
    os.kill(os.getpid(), signal.SIGINT)
    signal.pause()
except KeyboardInterrupt:
    print("caught")
"""


def run(tmp, code, companion, path=(), env=None):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("CUPROBE_", "PYTHON", "LD_PRELOAD"))}
    e["PYTHONDONTWRITEBYTECODE"] = "1"
    e["PYTHONPATH"] = os.pathsep.join(([SCRIPTS] if companion else []) + list(path))
    sink = os.path.join(tmp, "sink.jsonl")
    e["CUPROBE_FRAMEWORK_SINK"] = sink
    e.update(env or {})
    p = subprocess.run([sys.executable, "-c", code], env=e, cwd=tmp, capture_output=True,
                       text=True, timeout=60)
    records = []
    if os.path.exists(sink):
        with open(sink) as f:
            records = [json.loads(line) for line in f]
        os.unlink(sink)
    return p.returncode, p.stdout, p.stderr, records


def traceback_lines(err):
    """What a person reads of stderr: the traceback and the error, without
    PYTHONVERBOSE's import chatter."""
    keep = []
    for line in err.splitlines():
        if line.startswith(("#", "import ", "Processing ", "Adding ", "Python ", "Type ")) or \
                line.lstrip().startswith(("code object", "matches", "#")) or not line.strip():
            continue
        keep.append(line)
    return keep


def main():
    tmp = tempfile.mkdtemp(prefix="invisible-")
    bad = []

    def same(name, code, path=(), env=None, strip=False):
        a = run(tmp, code, True, path, env)
        b = run(tmp, code, False, path, env)
        ours = [x for x in a[2].splitlines()
                if x.lstrip().startswith("File ") and SCRIPTS in x]
        if strip:
            a = (a[0], a[1], traceback_lines(a[2]), a[3])
            b = (b[0], b[1], traceback_lines(b[2]), b[3])
        if a[:3] != b[:3]:
            bad.append("%s: with the companion %r, without %r" % (name, a[:3], b[:3]))
        if ours:
            bad.append("%s: cuprobe's frames or names in stderr: %r" % (name, ours))
        return a

    try:
        rc, out, _, _ = same("hooks", HOOKS)
        if out.splitlines()[:2] != ["True", "True"]:
            bad.append("hooks: %r" % out)
        rc, _, err, recs = same("main", MAIN)
        exc = [r["data"] for r in recs if r["kind"] == "exception"]
        if rc != 1 or len(exc) != 1 or exc[0]["hook"] != "sys.excepthook" or \
                exc[0]["type"] != "ValueError":
            bad.append("main: rc %d, records %r" % (rc, exc))
        rc, out, err, recs = same("thread", THREAD)
        exc = [r["data"] for r in recs if r["kind"] == "exception"]
        if out != "main went on\n" or len(exc) != 1 or \
                exc[0]["hook"] != "threading.excepthook" or exc[0]["thread"] != "worker":
            bad.append("thread: out %r, records %r" % (out, exc))
        rc, out, _, recs = same("caught", CAUGHT)
        if rc != 0 or [r for r in recs if r["kind"] == "exception"]:
            bad.append("caught: rc %d, records %r" % (rc, recs))

        theirs = os.path.join(tmp, "theirs")
        os.makedirs(theirs)
        with open(os.path.join(theirs, "sitecustomize.py"), "w") as f:
            f.write("def setup():\n    raise RuntimeError('site boom')\nsetup()\n")
        for verbose in ("", "1"):
            env = {"PYTHONVERBOSE": verbose} if verbose else None
            a = same("site%s" % (" verbose" if verbose else ""),
                     "import sys; print('sitecustomize' in sys.modules)",
                     path=[theirs], env=env, strip=True)
            if "RuntimeError: site boom" not in "\n".join(a[2]):
                bad.append("site: the error is not shown: %r" % (a[2],))
            if verbose and not any("in setup" in x for x in a[2]):
                bad.append("site verbose: no traceback: %r" % (a[2],))

        rc, out, err, recs = same("attribute", ATTRIBUTE, path=[STANDINS],
                                  env={"CUPROBE_ATTRIBUTE": "1"})
        events = sorted(set((r["kind"], r["data"]["event"]) for r in recs
                            if r["kind"].endswith(".attrib")))
        want = [("cupy.attrib", e) for e in ("end", "exit", "on")] + \
            [("torch.attrib", e) for e in ("end", "exit", "on", "oom")]
        if rc != 1 or "OutOfMemoryError" not in err or events != want:
            bad.append("attribute: rc %d, attribution records %r" % (rc, events))

        fw = os.path.join(tmp, "fw")
        os.makedirs(os.path.join(fw, "cupy"))
        with open(os.path.join(fw, "cupy", "__init__.py"), "w") as f:
            f.write("def load():\n    raise OSError('no libcudart')\nload()\n")
        a = same("import", "import cupy", path=[fw])
        if "OSError: no libcudart" not in a[2]:
            bad.append("import: %r" % (a[2],))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for b in bad:
        print("FAIL", b)
    print("companion invisible: %s (Python %s)" % ("no" if bad else "ok",
                                                    sys.version.split()[0]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
