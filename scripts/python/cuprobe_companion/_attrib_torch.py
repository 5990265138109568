"""Attribution for PyTorch (kind torch.attrib, docs/framework.md; the rules
in _attrib.py): torch.cuda.memory._record_memory_history(enabled="state",
context="state", stacks="python") keeps the Python stack of every live block
and nothing else (no history ring, no free stacks); the live blocks of
torch.cuda.memory._snapshot() are summed by the first frame of the
program's own code.  Turned on from the program's own CUDA initialisation
(torch.cuda._lazy_call), never before; left alone when the program records
history itself (then read only at exit and at OOMs); turned off again at
exit when it was ours.  backend:cudaMallocAsync keeps no history, and needs
none: each tensor is a driver allocation of its own.
"""
import sys
import time

from ._attrib import (LIMITS, MAX_FRAMES, Sites, UserFiles, imports_running,
                      in_companion_thread)

# torch's _snapshot() symbolizes Python frames through torch._inductor,
# imported on first use (torch.__getattr__).
SNAPSHOT_IMPORTS = ("torch._inductor",)


def _importable(names):
    import importlib.util

    for m in names:
        try:
            if importlib.util.find_spec(m) is not None:
                return True
        except (ImportError, ValueError):
            pass
    return False


def _snapshot_imports(in_program):
    """Whether a snapshot can be taken without importing in this thread
    while another imports.  In a thread of the program (its CUDA
    initialisation, its OOM) the imports are made here, where the program
    would make them; the companion's own thread waits until they are."""
    missing = [m for m in SNAPSHOT_IMPORTS if m not in sys.modules]
    if imports_running():
        return False
    if not missing:
        return True
    if not in_program:
        # Not imported by the program's thread: a torch without them (the
        # snapshot cannot import what is not there), else wait for them.
        return not _importable(missing)
    import importlib

    for m in missing:
        try:
            importlib.import_module(m)
        except ImportError:
            pass        # a torch without it: its snapshot cannot import it either
    return True

# Samples taken at OOMs, the first ones of a process.
MAX_OOM_SAMPLES = 8

# Set once the companion turned PyTorch's history on: a snapshot then holds
# no history ring, and the torch collector may take its own.
_history_ours = False

_MISSING = object()


def history_ours():
    """True while the companion owns PyTorch's memory history ("state": live
    blocks only), so that a snapshot converts no history ring."""
    return _history_ours


def at_cuda_init(cuda, start, start_guarded):
    """start() now when torch.cuda (the module cuda) is initialised; else
    start_guarded() from inside torch.cuda._lazy_init, where an exception
    would become the program's DeferredCudaCallError, so it must never
    raise.  A torch without _lazy_call gets neither: the caller starts
    later, from its periodic tick.  Shared with _torch's OOM observer."""
    if cuda.is_initialized():
        start()
        return
    lazy_call = getattr(cuda, "_lazy_call", None)
    if lazy_call is not None:
        lazy_call(start_guarded)


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
        # Without torch.cuda._lazy_call, periodic() starts it once CUDA is
        # initialised.
        at_cuda_init(self.cuda, self._start, self._start_guarded)

    def _start_guarded(self):
        self._guarded("torch.attrib", self.sites.safe, self._start)

    def _start(self):
        """At the program's CUDA initialisation: history on (or the
        program's own), and an OOM observer of our own."""
        s = self.sites
        if s.state != "waiting":
            return
        global _history_ours
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
            # The snapshot's imports and the library paths (sysconfig), here
            # in the program's thread when this is one, not later in ours.
            if not in_companion_thread():
                _snapshot_imports(True)
                self.user.prepare()
            if history():
                self.owner = "program"
            else:
                rec(enabled="state", context="state", stacks="python")
                self.owner = "companion"
                _history_ours = True
            attach = self._c("_cuda_attach_out_of_memory_observer")
            if attach is not None:
                attach(self._observer)
        except Exception as exc:
            s.off("failed", "%s: %s" % (type(exc).__name__, exc))
            return
        s.state = "on"
        s.say("on", owner=self.owner, mode="state", stacks="python",
              **LIMITS)

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
        if not _snapshot_imports(not in_companion_thread()):
            return          # a later tick, once the program's imports are done
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
        global _history_ours
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
            _history_ours = False
        s.say("end", **s.cost.fields())
