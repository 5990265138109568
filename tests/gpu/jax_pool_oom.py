"""tests/gpu/jax_pool_oom.py [--out DIR] - OOMs inside JAX's preallocated
pool on a real GPU, under `cuprobe run`, held to XLA's own numbers.

XLA takes its pool at start-up (75% of the card by default) and serves
every array from it: the driver never sees these OOMs.  Two runs of this
file as the traced program (--child VARIANT), each under build/cuprobe run:

  caught    fills 85% of the pool's limit with one array, asks for 25% more
            (over the limit, within the card: "the pool is a fraction of the
            card"), catches the error; then deletes it, fills the pool with
            chunks of 1/16 of the limit, deletes every other one (keeping
            the last) and asks for 2.5 chunks: the room is there, not in one
            piece ("fragmented pool"); caught again; exit 0
  uncaught  the first OOM of `caught`, not caught (exit 1)

Each program prints XLA's numbers (memory_stats()) just before each failing
request.  The report must give one `oom` finding per OOM with the request,
XLA's limit and bytes in use, the verdict those numbers call for, and
advice whose memory fraction XLA takes (in (0, 1], no more than .95) and
holds what was needed; the uncaught run's finding must say the run died of
it, with no fatal-error finding of its own; the pool must be no leak
(warning) and no stray device.

A caught OOM is seen only on CPython 3.12+ (sys.monitoring): older, the
caught run is reported as not checkable and only the uncaught run counts.
With JAX's newer default pool policy ("0.75+", the pool may grow to the
whole card) the first request may succeed: the runs are then made again
with XLA_PYTHON_CLIENT_MEM_FRACTION=.75 (a fixed limit) and say so.

Prints a PASS/FAIL line per check and a summary; exit 0 pass, 1 fail,
77 skip (no jax with a GPU).  Run from the repository root after make;
under a minute on one H100 (XLA waits up to 10 s before it gives up on an
allocation).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

MiB = 1 << 20
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY312 = sys.version_info >= (3, 12)


# --- the traced program --------------------------------------------------

def child(variant):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("SKIP: no jax")
        return 77
    dev = jax.devices()[0]
    if dev.platform != "gpu":
        print("SKIP: jax has no GPU (%s)" % dev.platform)
        return 77

    def stats():
        return dev.memory_stats()

    def alloc(nbytes):
        return jnp.zeros((nbytes // 4,), dtype=jnp.float32).block_until_ready()

    def settle(target):
        """Wait until the arrays let go are back in the pool (PjRt frees a
        buffer once its stream is done with it, not always at once)."""
        for _ in range(500):
            if stats()["bytes_in_use"] <= target:
                return
            time.sleep(0.01)

    def oom(request):
        """Ask for request bytes; @return : whether XLA refused."""
        try:
            alloc(request)
        except Exception as e:    # jax.errors.JaxRuntimeError, older: XlaRuntimeError
            if "RESOURCE_EXHAUSTED" not in str(e):
                raise
            print("caught:", str(e).splitlines()[0], flush=True)
            return True
        print("JAXPOOL_NO_OOM", flush=True)
        return False

    def note(what, request, **extra):
        s = stats()
        print("JAXPOOL " + json.dumps(dict(what=what, request=request, in_use=s["bytes_in_use"],
                                           limit=s["bytes_limit"], **extra)), flush=True)

    limit = stats()["bytes_limit"]
    a = alloc(int(limit * 0.85) // MiB * MiB)
    request = int(limit * 0.25) // MiB * MiB
    note("limit", request)
    if variant == "uncaught":
        alloc(request)
        print("JAXPOOL_NO_OOM", flush=True)
        return 0
    if not oom(request):
        return 0
    held = stats()["bytes_in_use"]
    size_a = a.nbytes
    del a
    settle(held - size_a)
    chunk = limit // 16 // MiB * MiB
    n = (limit - stats()["bytes_in_use"]) // chunk - 1
    chunks = [alloc(chunk) for _ in range(n)]
    # Every other one goes, the last one stays: no hole joins the free end.
    keep = chunks[(n - 1) % 2::2]
    held = stats()["bytes_in_use"]
    del chunks
    settle(held - (n - len(keep)) * chunk)
    request = 2 * chunk + chunk // 2
    note("frag", request, chunk=chunk, kept=len(keep))
    oom(request)
    return 0


# --- the checks ----------------------------------------------------------

class Checks:
    def __init__(self):
        self.failed = 0

    def check(self, name, ok, detail=""):
        print("%s %s%s" % ("PASS" if ok else "FAIL", name, (": " + detail) if detail else ""))
        self.failed += not ok
        return ok


def run(variant, out, env):
    """The child under cuprobe run.  @return : (rc, notes, oom findings,
    all findings, report text)."""
    tdir = tempfile.mkdtemp(prefix="jaxpool-", dir=out)
    cmd = [os.path.join(ROOT, "build", "cuprobe"), "run", "-o",
           os.path.join(tdir, "t-%p.trace"), "--", sys.executable, os.path.abspath(__file__),
           "--child", variant]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    with open(os.path.join(out, variant + ".out"), "w") as f:
        f.write(p.stdout + p.stderr)
    notes = [json.loads(l[8:]) for l in p.stdout.splitlines() if l.startswith("JAXPOOL {")]
    if "JAXPOOL_NO_OOM" in p.stdout:
        notes.append(None)
    ana = os.path.join(ROOT, "build", "cuprobe-analyze")
    traces = sorted(os.path.join(tdir, t) for t in os.listdir(tdir) if t.endswith(".trace"))
    text = subprocess.run([ana, "report", "--no-progress"] + traces, capture_output=True,
                          text=True).stdout
    js = os.path.join(out, variant + ".json")
    with open(js, "w") as f:
        subprocess.run([ana, "report", "--json", "--no-progress"] + traces, stdout=f)
    with open(os.path.join(out, variant + ".txt"), "w") as f:
        f.write(text)
    sys.path.insert(0, os.path.join(ROOT, "tests", "py"))
    from report_findings import findings

    every = [f for c in ("oom", "leak", "stray-device", "fatal-error")
             for f in findings(js, c)]
    ooms = [f for f in every if f["check"] == "oom" and f["severity"] == "error"]
    return p.returncode, notes, ooms, every, text


def expected_verdict(note, card):
    need = note["in_use"] + note["request"]
    if note["what"] == "frag":
        return "fragmentation"
    if need > note["limit"] and card and need * 100 <= card * 93:
        return "pool limit"
    return "capacity"


def judge(c, name, note, f, card_known=None):
    """One OOM finding against the program's numbers."""
    d = f["details"]
    x = d.get("xla", {})
    card = x.get("card_bytes", 0) or card_known
    want = expected_verdict(note, card)
    c.check(name + ": request", abs(d["request_bytes"] - note["request"]) <= note["request"] // 100,
            "%d vs the program's %d" % (d["request_bytes"], note["request"]))
    c.check(name + ": XLA's limit", x.get("bytes_limit") == note["limit"],
            "%s vs memory_stats() %d" % (x.get("bytes_limit"), note["limit"]))
    in_use = x.get("bytes_in_use", -1)
    c.check(name + ": bytes in use", abs(in_use - note["in_use"]) <= max(note["in_use"] // 20, 64 * MiB),
            "%d vs %d before the request" % (in_use, note["in_use"]))
    c.check(name + ": verdict", d.get("verdict") == want,
            "%s, expected %s (%s)" % (d.get("verdict"), want, d.get("verdict_reason")))
    lines = "\n".join(f.get("lines", []))
    if want == "pool limit":
        frac = x.get("suggested_mem_fraction") or ""
        ok = frac.startswith(".") and frac[1:].isdigit()
        value = float(frac) if ok else 0
        c.check(name + ": advice's fraction valid", ok and 0 < value <= 0.95 and
                value * card >= note["in_use"] + note["request"],
                "%s of %d bytes for %d needed" % (frac, card, note["in_use"] + note["request"]))
        for knob in ("XLA_PYTHON_CLIENT_MEM_FRACTION=" + frac, "XLA_PYTHON_CLIENT_PREALLOCATE=false",
                     "XLA_PYTHON_CLIENT_ALLOCATOR=platform"):
            c.check(name + ": advice names " + knob, knob in lines)
        c.check(name + ": title", "the pool is a fraction of the card: XLA took" in f["title"],
                f["title"])
    elif want == "fragmentation":
        c.check(name + ": largest free block below the request",
                x.get("largest_free_block_bytes", 1 << 62) < note["request"] <=
                x.get("bytes_limit", 0) - x.get("bytes_in_use", 0),
                "largest %s, free %s" % (x.get("largest_free_block_bytes"),
                                         x.get("bytes_limit", 0) - x.get("bytes_in_use", 0)))
        c.check(name + ": title", f["title"].endswith(": fragmented pool"), f["title"])
    return lines


def check_pool_quiet(c, name, every):
    bad = [f["title"] for f in every if f["check"] == "leak" and f["severity"] != "info"]
    c.check(name + ": the pool is no leak", not bad, "; ".join(bad))
    stray = [f["title"] for f in every if f["check"] == "stray-device"]
    c.check(name + ": the pool is no stray device", not stray, "; ".join(stray))


def main(argv):
    out = argv[argv.index("--out") + 1] if "--out" in argv else "jax-pool-oom-out"
    os.makedirs(out, exist_ok=True)
    out = os.path.abspath(out)
    probe = subprocess.run([sys.executable, "-c", "import jax; print(jax.__version__, "
                            "jax.devices()[0].platform)"], capture_output=True, text=True)
    if probe.returncode != 0 or not probe.stdout.strip().endswith("gpu"):
        print("SKIP jax_pool_oom: no jax with a GPU (%s)" % (probe.stdout + probe.stderr).strip()[-200:])
        return 77
    print("jax %s, Python %s" % (probe.stdout.split()[0], sys.version.split()[0]))
    env = dict(os.environ)
    for k in ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION",
              "XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR"):
        env.pop(k, None)
    c = Checks()
    rc, notes, ooms, every, text = run("uncaught", out, env)
    if None in notes:
        print("the pool grew past its first limit (JAX's growth policy): again with "
              "XLA_PYTHON_CLIENT_MEM_FRACTION=.75")
        env["XLA_PYTHON_CLIENT_MEM_FRACTION"] = ".75"
        rc, notes, ooms, every, text = run("uncaught", out, env)
    c.check("uncaught: exit status 1", rc == 1, str(rc))
    if c.check("uncaught: one oom finding", len(ooms) == 1 and len(notes) == 1,
               "%d findings, %d notes" % (len(ooms), len(notes))):
        lines = judge(c, "uncaught", notes[0], ooms[0])
        c.check("uncaught: the run died of it", "The run died of it" in lines)
        fatal = [f["title"] for f in every if f["check"] == "fatal-error"]
        c.check("uncaught: no fatal-error finding of its own", not fatal, "; ".join(fatal))
    check_pool_quiet(c, "uncaught", every)

    rc, notes, ooms, every, text = run("caught", out, env)
    c.check("caught: exit status 0", rc == 0, str(rc))
    if not PY312:
        print("NOT CHECKED caught: Python %d.%d has no sys.monitoring, a caught OOM is not "
              "seen (docs/framework.md)" % sys.version_info[:2])
    elif c.check("caught: two oom findings", len(ooms) == 2 and len(notes) == 2 and None not in notes,
                 "%d findings, notes %s" % (len(ooms), notes)):
        by_request = sorted(ooms, key=lambda f: f["details"]["request_bytes"])
        for note in notes:
            f = min(by_request, key=lambda f: abs(f["details"]["request_bytes"] - note["request"]))
            lines = judge(c, "caught " + note["what"], note, f)
            c.check("caught %s: caught and went on" % note["what"],
                    "The program caught it and went on" in lines)
    check_pool_quiet(c, "caught", every)
    print("jax_pool_oom: %s (%d failed; reports in %s)" % ("PASS" if not c.failed else "FAIL",
                                                          c.failed, out))
    return 1 if c.failed else 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        sys.exit(child(sys.argv[2]))
    sys.exit(main(sys.argv[1:]))
