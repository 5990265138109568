"""Attribution for CuPy (kind cupy.attrib, docs/framework.md; the rules in
_attrib.py): a cupy.cuda.memory_hook.MemoryHook counts each pool allocation
under the first frame of the program's own code (a walk up sys._getframe(),
the verdict cached per code object) and forgets it when it is freed.  CuPy
keeps memory hooks per thread: the hook serves the thread that imported
cupy.
"""
import sys
import time

from ._attrib import LIMITS, MAX_FRAMES, Sites, UserFiles


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
              **LIMITS)

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
