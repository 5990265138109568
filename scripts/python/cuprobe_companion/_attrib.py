"""Attribution: the line of the program that allocated the framework memory
still held (kinds torch.attrib and cupy.attrib, docs/framework.md).

A caching allocator takes memory from the driver where its cache runs dry,
which is rarely the line that keeps the memory: the driver-level call site
of a growing pool is the line that refilled it.  This module records the
framework's own view instead: every live pool allocation counted under the
first frame of the program's own code that made it, aggregated here into
{site: bytes, blocks}, so that the analyzer can name the line whose live
bytes grew.

- PyTorch: torch.cuda.memory._record_memory_history(enabled="state",
  context="state", stacks="python") keeps the Python stack of every live
  block and nothing else (no history ring, no free stacks); the blocks of
  torch.cuda.memory._snapshot() carry it.  Turned on from the program's own
  CUDA initialisation (torch.cuda._lazy_call), never before; left alone when
  the program records history itself (then only read at exit and at OOMs);
  turned off again at exit when it was ours.  The cudaMallocAsync backend
  keeps no history, and needs none: each tensor is a driver allocation.
- CuPy: a cupy.cuda.memory_hook.MemoryHook counts each pool allocation under
  the first frame of the program's own code (a walk up sys._getframe(), the
  verdict cached per code object) and forgets it when it is freed.  CuPy
  keeps memory hooks per thread: the hook serves the thread that imported
  cupy.

Rules kept here:
- CUPROBE_ATTRIBUTE (auto, 1, 0) decides; DEFAULT_ON is what auto means;
- a sample is taken at each periodic tick, after the allocator grew (at
  most once per max(MIN_GAP_S, its own cost / DUTY), so that attribution
  holds the GIL for at most 1% of the time), at each of the first
  MAX_OOM_SAMPLES OOMs and at exit;
- a record lists at most MAX_SITES sites, the largest; a site's stack is
  written once per process, the first time the site is listed;
- attribution that cannot work (an API missing, a call refused) is turned
  off with one record saying why; it never disables the companion, and
  nothing it does raises into the program.
"""
import os
import sys
import time

from ._frames import LIBRARY_PACKAGES, is_user_frame, library_dirs
from ._sink import VERSION

# What CUPROBE_ATTRIBUTE=auto (or unset) means: the one place to change the
# default.
DEFAULT_ON = False
MAX_SITES = 64
MAX_FRAMES = 12          # frames of a site's stack, from the program's line outwards
MIN_GAP_S = 0.25
DUTY = 0.01
MAX_OOM_SAMPLES = 8

# In every "on" record.  Every number the records hold is an integer.
_LIMITS = {"max_sites": MAX_SITES, "min_gap_ms": int(MIN_GAP_S * 1000),
           "duty_pct": int(DUTY * 100)}
_ON = ("1", "on", "true", "yes")
_OFF = ("0", "off", "false", "no")

# Set once the companion turned PyTorch's history on: a snapshot then holds
# no history ring, and the torch collector may take its own.
_torch_history_ours = False


def enabled(text=None):
    """Whether attribution is on, from CUPROBE_ATTRIBUTE (text when given):
    1/on/true/yes, 0/off/false/no; auto, unset or anything else: DEFAULT_ON."""
    if text is None:
        text = os.environ.get("CUPROBE_ATTRIBUTE")
    value = (text or "").strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    return DEFAULT_ON


def torch_history_ours():
    """True while the companion owns PyTorch's memory history ("state": live
    blocks only), so that a snapshot converts no history ring."""
    return _torch_history_ours


class UserFiles:
    """Is a file the program's own code (by name, cached)?  Not the standard
    library, not an installed package, not a known framework's package
    directory (a framework run from a source checkout), not the companion,
    not code that TorchInductor generated."""

    def __init__(self):
        self.cache = {}
        self.libdirs = None

    def _package_dirs(self):
        dirs = [os.path.dirname(os.path.realpath(__file__)) + os.sep]
        for name in LIBRARY_PACKAGES:
            path = getattr(sys.modules.get(name), "__file__", None)
            if path:
                dirs.append(os.path.dirname(os.path.realpath(path)) + os.sep)
        return tuple(dirs)

    def prepare(self):
        """Find the library directories (sysconfig: milliseconds, once)
        before a sample's cost is timed."""
        if self.libdirs is None:
            self.libdirs = library_dirs()

    def __call__(self, filename):
        user = self.cache.get(filename)
        if user is None:
            user = self._judge(filename)
            self.cache[filename] = user
        return user

    def _judge(self, filename):
        if not isinstance(filename, str) or "/torchinductor_" in filename:
            return False
        self.prepare()
        # Packages are looked up again for every new file: a framework
        # imported after the companion attached counts too.
        return is_user_frame(filename, None, self.libdirs + self._package_dirs())


class _Cost:
    def __init__(self):
        self.n = 0
        self.us_total = 0.0
        self.us_max = 0.0

    def add(self, us):
        self.n += 1
        self.us_total += us
        self.us_max = max(self.us_max, us)

    def fields(self):
        return {"samples": self.n,
                "sample_us_mean": int(self.us_total / self.n) if self.n else 0,
                "sample_us_max": int(self.us_max)}


class Sites:
    """The sites of one framework's attribution and the records that list
    them.  A site is the first frame of the program's own code of an
    allocation (file, line, function); its id is handed out here and its
    stack (that frame and up to MAX_FRAMES - 1 callers, innermost first) is
    written with the first record that lists it."""

    def __init__(self, record, kind):
        self._record = record
        self.kind = kind
        self.ids = {}           # (file, line, func) -> id
        self.stacks = {}        # id -> [[file, line, func], ...]
        self.announced = set()
        self.seq = 0
        self.cost = _Cost()
        self.state = "waiting"  # then "on" or "off"
        self.why = ""           # why it is off
        self.next_sample = 0.0

    def site(self, key, frames):
        """The id of site key; frames() gives its stack the first time."""
        sid = self.ids.get(key)
        if sid is None:
            sid = len(self.ids) + 1
            self.ids[key] = sid
            self.stacks[sid] = frames()
        return sid

    def say(self, event, **fields):
        obj = {"v": VERSION, "event": event}
        obj.update(fields)
        self._record(self.kind, obj)

    def safe(self, fn, *args):
        """fn(*args); an exception turns attribution off (one record), and
        goes no further."""
        try:
            fn(*args)
        except Exception as exc:
            try:
                self.off("failed", "%s: %s" % (type(exc).__name__, exc))
            except Exception:
                self.state = "off"

    def off(self, reason, why):
        """Attribution stops for good, with one record saying why."""
        if self.state == "off":
            return
        self.state = "off"
        self.why = why[:500]
        self.say("off", reason=reason, why=self.why)

    def due(self, event):
        """Whether a sample for `event` is wanted now."""
        if self.state != "on":
            return False
        return event in ("exit", "oom") or time.monotonic() >= self.next_sample

    def write(self, event, agg, totals, t0):
        """One sample: agg maps site id -> [bytes, blocks]; totals has
        live_bytes, live_blocks, unattributed_bytes, unattributed_blocks.
        t0: perf_counter() when the sample began."""
        rows = sorted(((v[0], v[1], sid) for sid, v in agg.items() if v[1] > 0),
                      reverse=True)
        top, rest = rows[:MAX_SITES], rows[MAX_SITES:]
        new = [sid for _, _, sid in top if sid not in self.announced]
        self.seq += 1
        obj = {"v": VERSION, "event": event, "seq": self.seq,
               "stacks": [{"id": sid, "frames": self.stacks[sid]} for sid in new],
               "sites": [[sid, b, n] for b, n, sid in top],
               "sites_total": len(rows),
               "other_bytes": sum(r[0] for r in rest),
               "other_blocks": sum(r[1] for r in rest)}
        obj.update(totals)
        obj["collect_us"] = int((time.perf_counter() - t0) * 1e6)
        rc = self._record(self.kind, obj)
        if rc is not None and rc >= 0:
            self.announced.update(new)
        # The throttle counts the whole sample, writing it included.
        us = (time.perf_counter() - t0) * 1e6
        self.cost.add(us)
        self.next_sample = time.monotonic() + max(MIN_GAP_S, us / 1e6 / DUTY)


_MISSING = object()


class TorchAttrib:
    """PyTorch: the Python stacks PyTorch keeps per live block."""

    def __init__(self, cuda, record, guarded):
        self.cuda = cuda
        self.torch = sys.modules.get("torch")
        self.sites = Sites(record, "torch.attrib")
        self._guarded = guarded
        self.user = UserFiles()
        self.owner = None       # "companion" or "program"
        self.ooms = 0

    def _c(self, name):
        return getattr(getattr(self.torch, "_C", None), name, None)

    def attach(self):
        self.sites.safe(self._attach)

    def _attach(self):
        if self.cuda.is_initialized():
            self._start()
            return
        lazy_call = getattr(self.cuda, "_lazy_call", None)
        if lazy_call is not None:
            # Runs inside torch.cuda._lazy_init, where an exception would
            # become the program's DeferredCudaCallError: never raises.
            lazy_call(self._start_guarded)
        # Otherwise periodic() starts it once CUDA is initialised.

    def _start_guarded(self):
        self._guarded("torch.attrib", self.sites.safe, self._start)

    def _start(self):
        """At the program's CUDA initialisation: history on (or the
        program's own), and an OOM observer of our own."""
        s = self.sites
        if s.state != "waiting":
            return
        global _torch_history_ours
        try:
            backend = getattr(self.cuda, "get_allocator_backend", None)
            if backend is not None and str(backend()) == "cudaMallocAsync":
                s.off("backend", "backend:cudaMallocAsync keeps no allocation history; "
                                 "each tensor is a driver allocation with its own call site")
                return
            history = self._c("_cuda_isHistoryEnabled")
            memory = getattr(self.cuda, "memory", None)
            rec = getattr(memory, "_record_memory_history", None)
            if history is None or rec is None or getattr(memory, "_snapshot", None) is None:
                s.off("api", "this torch has no _record_memory_history")
                return
            if history():
                self.owner = "program"
            else:
                rec(enabled="state", context="state", stacks="python")
                self.owner = "companion"
                _torch_history_ours = True
            attach = self._c("_cuda_attach_out_of_memory_observer")
            if attach is not None:
                attach(self._observer)
        except Exception as exc:
            s.off("failed", "%s: %s" % (type(exc).__name__, exc))
            return
        s.state = "on"
        s.say("on", owner=self.owner, mode="state", stacks="python",
              **_LIMITS)

    def _observer(self, device, alloc, device_allocated, device_free):
        # The caching allocator calls it, GIL held, before it raises: never
        # raise from here.
        self.ooms += 1
        if self.ooms <= MAX_OOM_SAMPLES:
            self._guarded("torch.attrib", self.sites.safe, self._sample, "oom",
                          int(device), int(alloc))

    def _sample(self, event, device=None, request=None):
        s = self.sites
        if not s.due(event):
            return
        # The program's own history may hold a long ring, which _snapshot()
        # converts: read it only once, at an OOM or at exit.
        if self.owner == "program" and event not in ("exit", "oom"):
            return
        self.user.prepare()
        t0 = time.perf_counter()
        history = self._c("_cuda_isHistoryEnabled")
        if history is not None and not history():
            s.off("program", "the program turned PyTorch's memory history off")
            return
        try:
            snap = self.cuda.memory._snapshot()
        except Exception as exc:
            s.off("failed", "%s: %s" % (type(exc).__name__, exc))
            return
        agg, totals = self._aggregate(snap)
        if device is not None:
            totals.update(device=device, request_bytes=request)
        totals["owner"] = self.owner
        s.write(event, agg, totals, t0)

    def _site_of(self, frames):
        """The site id of an allocation's frames (innermost first), or None
        when no frame is the program's own."""
        user = self.user
        for i, f in enumerate(frames):
            filename = f.get("filename")
            if user(filename):
                key = (filename, int(f.get("line") or 0), str(f.get("name") or ""))

                def stack(i=i):
                    return [[str(g.get("filename")), int(g.get("line") or 0),
                             str(g.get("name") or "")] for g in frames[i:i + MAX_FRAMES]]
                return self.sites.site(key, stack)
        return None

    def _aggregate(self, snap):
        agg = {}
        seen = {}               # id(frames list) -> site id or None
        live_b = live_n = un_b = un_n = 0
        for seg in snap.get("segments", ()):
            for b in seg.get("blocks", ()):
                if b.get("state") == "inactive":
                    continue
                size = int(b.get("size") or 0)
                live_b += size
                live_n += 1
                frames = b.get("frames")
                sid = None
                if frames:
                    # PyTorch hands blocks of one traceback the same list.
                    sid = seen.get(id(frames), _MISSING)
                    if sid is _MISSING:
                        sid = seen[id(frames)] = self._site_of(frames)
                if sid is None:
                    un_b += size
                    un_n += 1
                    continue
                v = agg.get(sid)
                if v is None:
                    agg[sid] = [size, 1]
                else:
                    v[0] += size
                    v[1] += 1
        return agg, {"live_bytes": live_b, "live_blocks": live_n,
                     "unattributed_bytes": un_b, "unattributed_blocks": un_n}

    def _periodic(self):
        if self.sites.state == "waiting" and self.cuda.is_initialized():
            self._start()      # a torch without _lazy_call
        self._sample("periodic")

    def periodic(self):
        self.sites.safe(self._periodic)

    def segment(self):
        self.sites.safe(self._sample, "segment")

    def exit(self):
        self.sites.safe(self._exit)

    def _exit(self):
        global _torch_history_ours
        s = self.sites
        if s.state == "waiting" or (s.state == "off" and not s.cost.n):
            return
        self._sample("exit")
        if self.owner == "companion" and s.state == "on":
            # Restore what the program had: no history.  (Exit handlers
            # the program registered after importing torch ran already.)
            try:
                self.cuda.memory._record_memory_history(enabled=None)
            except Exception:
                pass
            _torch_history_ours = False
        s.say("end", **s.cost.fields())


class CupyAttrib:
    """CuPy: a memory hook counting live pool allocations by the program's
    line."""

    def __init__(self, cupy, record):
        self.cupy = cupy
        self.sites = Sites(record, "cupy.attrib")
        self.user = UserFiles()
        self.code_user = {}     # code object -> is it the program's own
        self.by_line = {}       # (code, line) -> [bytes, blocks, site id]
        self.live = {}          # pointer -> (entry of by_line, bytes)
        self.unattributed = [0, 0]
        self.hook = None
        self.thread = None
        self.mallocs = 0

    def attach(self):
        self.sites.safe(self._attach)

    def _attach(self):
        s = self.sites
        module = sys.modules.get("cupy.cuda.memory_hook")
        base = getattr(module, "MemoryHook", None) or \
            getattr(getattr(self.cupy, "cuda", None), "MemoryHook", None)
        if base is None:
            s.off("api", "this CuPy has no cupy.cuda.memory_hook.MemoryHook")
            return
        hook = _cupy_hook_class(base)(self)
        try:
            hook.__enter__()    # this thread's hooks
        except Exception as exc:
            s.off("failed", "%s: %s" % (type(exc).__name__, exc))
            return
        import threading

        self.hook = hook
        self.thread = threading.get_ident()
        s.state = "on"
        s.say("on", owner="companion", mode="memory_hook", thread=threading.current_thread().name,
              **_LIMITS)

    def _entry(self, frame):
        """by_line's entry for the first frame of the program's own code
        from frame outwards (created with its site), or the unattributed
        counter."""
        code_user, user = self.code_user, self.user
        f = frame
        while f is not None:
            code = f.f_code
            u = code_user.get(code)
            if u is None:
                u = code_user[code] = user(code.co_filename)
            if u:
                break
            f = f.f_back
        if f is None:
            return self.unattributed
        key = (f.f_code, f.f_lineno)
        e = self.by_line.get(key)
        if e is None:
            code = f.f_code
            site = (code.co_filename, f.f_lineno, code.co_name)

            def stack(f=f):
                out = []
                while f is not None and len(out) < MAX_FRAMES:
                    out.append([f.f_code.co_filename, f.f_lineno, f.f_code.co_name])
                    f = f.f_back
                return out
            e = self.by_line[key] = [0, 0, self.sites.site(site, stack)]
        return e

    def malloc(self, frame, ptr, size):
        if not ptr:
            return
        self.mallocs += 1
        e = self._entry(frame)
        old = self.live.get(ptr)
        if old is not None:
            # Freed on a thread the hook does not serve: a pointer is live
            # once.
            old[0][0] -= old[1]
            old[0][1] -= 1
        e[0] += size
        e[1] += 1
        self.live[ptr] = (e, size)

    def free(self, ptr):
        old = self.live.pop(ptr, None)
        if old is not None:
            old[0][0] -= old[1]
            old[0][1] -= 1

    def _sample(self, event):
        s = self.sites
        if not s.due(event) or not self.mallocs:
            return
        self.user.prepare()
        t0 = time.perf_counter()
        # A list of the values is taken at once under the GIL: the hook's
        # thread may add lines meanwhile.
        agg = {}
        live_b = live_n = 0
        for b, n, sid in list(self.by_line.values()):
            if n > 0:
                v = agg.setdefault(sid, [0, 0])
                v[0] += b
                v[1] += n
                live_b += b
                live_n += n
        ub, un = self.unattributed
        totals = {"live_bytes": live_b + ub, "live_blocks": live_n + un,
                  "unattributed_bytes": ub, "unattributed_blocks": un,
                  "owner": "companion"}
        s.write(event, agg, totals, t0)

    def periodic(self):
        self.sites.safe(self._sample, "periodic")

    def segment(self):
        self.sites.safe(self._sample, "segment")

    def exit(self):
        self.sites.safe(self._exit)

    def _exit(self):
        s = self.sites
        if s.state == "waiting" or (s.state == "off" and not s.cost.n):
            return
        self._sample("exit")
        import threading

        if self.hook is not None and self.thread == threading.get_ident():
            try:
                self.hook.__exit__(None, None, None)
            except Exception:
                pass
        s.say("end", **s.cost.fields())


def _cupy_hook_class(base):
    """A MemoryHook subclass feeding a CupyAttrib.  CuPy calls its methods
    with keyword arguments, inside the pool's malloc and free (in a finally
    block for malloc): they must never raise."""
    getframe = sys._getframe

    class CuprobeMemoryHook(base):
        name = "cuprobe"

        def __init__(self, attrib):
            self._attrib = attrib

        def malloc_postprocess(self, mem_size=0, mem_ptr=0, **_):
            try:
                self._attrib.malloc(getframe(1), mem_ptr, mem_size)
            except Exception:
                pass

        def free_postprocess(self, mem_ptr=0, **_):
            try:
                self._attrib.free(mem_ptr)
            except Exception:
                pass

    return CuprobeMemoryHook


def make(framework, module, record, guarded):
    """The attributor of a framework just imported (torch.cuda or cupy), or
    None when attribution is off or the framework has none.  record(kind,
    obj) and guarded(where, fn, *args) are the companion core's."""
    if not enabled():
        return None
    if framework == "torch":
        return TorchAttrib(module, record, guarded)
    if framework == "cupy":
        return CupyAttrib(module, record)
    return None
