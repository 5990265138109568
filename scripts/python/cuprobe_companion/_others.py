"""CuPy and JAX: memory statistics recorded periodically and at exit (kinds
cupy.periodic, cupy.exit, jax.periodic, jax.exit; fields in
docs/framework.md).  CuPy offers no OOM hook we could attach without code
changes, so its records are summaries only; XLA's out-of-memory errors are
seen as they are raised (_jaxoom.py: kind jax.oom).

Neither collector may start CUDA in the process:
- CuPy's pool queries ask the runtime for the current device, so they run
  only once libcuda is already loaded in the process (it is loaded by the
  first CUDA runtime call, which the program made itself);
- JAX is queried only through backends it has already initialised
  (jax._src.xla_bridge._backends); jax.devices() would initialise them.
"""
import os
import sys
import threading
import time

from ._frames import LIBRARY_PACKAGES, is_user_frame, library_dirs, stack_from_user
from ._sink import VERSION

_JAX_KEYS = ("bytes_in_use", "peak_bytes_in_use", "largest_free_block_bytes",
             "bytes_limit", "bytes_reserved", "peak_bytes_reserved",
             "num_allocs", "largest_alloc_size", "pool_bytes", "peak_pool_bytes")
# What a quick sample is taken for: a change of memory (not of counters).
_JAX_MEMORY = ("bytes_in_use", "peak_bytes_in_use", "largest_free_block_bytes",
               "bytes_limit", "pool_bytes")
# XLA's allocator settings as the process sees them at an OOM (it may have set
# them in os.environ before importing jax).
_XLA_ENV = ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION",
            "XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR")


def _libcuda_loaded():
    import ctypes

    mode = getattr(os, "RTLD_NOLOAD", 4) | getattr(os, "RTLD_LAZY", 1)
    for name in ("libcuda.so.1", "libcuda.so"):
        try:
            ctypes.CDLL(name, mode=mode)
            return True
        except OSError:
            continue
    return False


class CupyCollector:
    def __init__(self, module, record):
        self._write = record                  # the core's record(), injected
        self.cupy = module
        self.cuda_seen = False
        self.ticks = 0

    def attach(self):
        pass

    def _sample(self):
        """The default pool's numbers, or None while CUDA is unused."""
        if not self.cuda_seen:
            if not _libcuda_loaded():
                return None
            self.cuda_seen = True
        pool = self.cupy.get_default_memory_pool()
        out = {"used_bytes": int(pool.used_bytes()),
               "total_bytes": int(pool.total_bytes())}
        for name in ("free_bytes", "n_free_blocks", "get_limit"):
            fn = getattr(pool, name, None)
            if fn is not None:
                out["limit" if name == "get_limit" else name] = int(fn())
        pinned = getattr(self.cupy, "get_default_pinned_memory_pool", None)
        if pinned is not None:
            p = pinned()
            fn = getattr(p, "n_free_blocks", None)
            if fn is not None:
                out["pinned_n_free_blocks"] = int(fn())
        return out

    def _record(self, kind, extra):
        t0 = time.perf_counter()
        sample = self._sample()
        if sample is None and kind == "cupy.periodic":
            return
        obj = {"v": VERSION, "cupy_version": str(getattr(self.cupy, "__version__", "")),
               "cuda_used": sample is not None}
        obj.update(extra)
        if sample is not None:
            obj.update(sample)
        obj["collect_us"] = round((time.perf_counter() - t0) * 1e6, 1)
        self._write(kind, obj)

    def periodic(self):
        self.ticks += 1
        self._record("cupy.periodic", {"tick": self.ticks})

    def exit(self):
        self._record("cupy.exit", {"periodic_count": self.ticks})


class JaxCollector:
    """XLA's pools: jax.periodic at every periodic summary and, between
    them, whenever a device's memory numbers changed (a preallocated pool
    never goes back to the driver, so these samples are the only view of
    what fills it); jax.oom at each out-of-memory error; jax.exit.

    How often the pool is looked at between summaries (quick_period()):
    - every QUICK_MIN_S while the samples written are fewer than
      QUICK_BUDGET, then less often as they add up (the square of their
      count over the budget, up to QUICK_S), so that a short training loop
      still gets enough samples for the growth rule (eight eighths, nearly
      all rising) and a long run writes a few thousand;
    - QUICK_GROW_DIV times as often while each sample finds more in use
      than any before (by QUICK_RISE): the pool is filling up;
    - never more often than the sample's own CPU time over QUICK_DUTY.
    Each jax.periodic sample names where the program is when taken (at):
    XLA keeps no allocation stacks, and the line a training loop stands at
    while its pool grows is the one whose arrays are kept."""

    QUICK_MIN_S = 0.02
    QUICK_S = 1.0
    QUICK_BUDGET = 1024
    QUICK_GROW_DIV = 4
    QUICK_RISE = 1 << 20
    QUICK_DUTY = 0.02
    AT_FRAMES = 8           # frames of a sample's place, from the program's line outwards

    def __init__(self, module, record, guarded):
        self._write = record                  # the core's record(), injected
        self.jax = module
        self.ticks = 0
        self.samples = 0
        self.ooms = 0
        self._last = None                     # the memory numbers of the last sample
        self._high = -1                       # the most bytes in use a sample saw
        self._rising = False                  # the last sample saw a new high
        self._cost_s = 0.0                    # CPU time of a quick look (running mean)
        self._looks = 0
        self._user = {}                       # file name -> the program's own code
        self._libdirs = None
        from ._jaxoom import OomWatch

        self.watch = OomWatch(self.oom, guarded)

    def attach(self):
        self.watch.install()

    def quick_period(self):
        """Seconds until the next quick look (see the class)."""
        over = max(1.0, self.samples / float(self.QUICK_BUDGET))
        gap = min(self.QUICK_S, self.QUICK_MIN_S * over * over)
        if self._rising:
            gap /= self.QUICK_GROW_DIV
        return max(gap, self._cost_s / self.QUICK_DUTY)

    def _is_user(self, frame):
        """Whether frame runs the program's own code: not a known
        framework's module, and a file judged once (is_user_frame)."""
        module = frame.f_globals.get("__name__")
        if isinstance(module, str) and module.split(".", 1)[0] in LIBRARY_PACKAGES:
            return False
        name = frame.f_code.co_filename
        user = self._user.get(name)
        if user is None:
            if self._libdirs is None:
                self._libdirs = library_dirs()
            user = self._user[name] = is_user_frame(name, None, self._libdirs)
        return user

    def _at(self):
        """Where the program is: {"thread", "frames"} of the main thread
        when it runs code of the program's own, else of the first other
        thread that does (not this one); None when none does."""
        me = threading.get_ident()
        main = threading.main_thread().ident
        frames = sys._current_frames()
        try:
            order = [main] + [t for t in frames if t not in (main, me)]
            for ident in order:
                stack = stack_from_user(frames.get(ident), self._is_user, self.AT_FRAMES)
                if stack:
                    names = {t.ident: t.name for t in threading.enumerate()}
                    return {"thread": str(names.get(ident, "")), "frames": stack}
            return None
        finally:
            # The dict holds this very frame: a cycle that would keep every
            # thread's frames, and the arrays their locals hold, alive until
            # the garbage collector runs.
            frames.clear()

    def _backends(self):
        bridge = sys.modules.get("jax._src.xla_bridge")
        backends = getattr(bridge, "_backends", None)
        return dict(backends) if isinstance(backends, dict) else {}

    def _devices(self, backends):
        out = []
        for name, backend in sorted(backends.items()):
            for dev in backend.local_devices():
                stats_fn = getattr(dev, "memory_stats", None)
                stats = stats_fn() if stats_fn is not None else None
                if not stats:
                    continue   # CPU devices, and the platform allocator, report none
                entry = {"backend": str(name), "id": int(getattr(dev, "id", -1)),
                         "platform": str(getattr(dev, "platform", "")),
                         "device_kind": str(getattr(dev, "device_kind", ""))}
                hw = getattr(dev, "local_hardware_id", None)
                if isinstance(hw, int):
                    entry["local_hardware_id"] = hw
                for key in _JAX_KEYS:
                    if key in stats:
                        entry[key] = int(stats[key])
                out.append(entry)
        return out

    def _record(self, kind, extra, quick=False):
        t0 = time.perf_counter()
        backends = self._backends()
        if not backends and kind == "jax.periodic":
            return
        devices = self._devices(backends) if backends else []
        numbers = [[d.get(k) for k in _JAX_MEMORY] for d in devices]
        if quick and numbers == self._last:
            self._rising = False
            return
        obj = {"v": VERSION, "jax_version": str(getattr(self.jax, "__version__", "")),
               "backends_initialized": bool(backends), "oom_hook": self.watch.how}
        obj.update(extra)
        if kind == "jax.periodic":
            self._last = numbers
            self.samples += 1
            in_use = sum(d.get("bytes_in_use", 0) for d in devices)
            self._rising = in_use > self._high + self.QUICK_RISE
            self._high = max(self._high, in_use)
            at = self._at()
            if at is not None:
                obj["at"] = at
        obj["devices"] = devices
        obj["collect_us"] = round((time.perf_counter() - t0) * 1e6, 1)
        self._write(kind, obj)

    def periodic(self):
        self.ticks += 1
        self._record("jax.periodic", {"tick": self.ticks})

    def quick(self):
        c0 = time.thread_time()
        self._record("jax.periodic", {"tick": self.ticks}, quick=True)
        cost = time.thread_time() - c0
        # A running mean from the second look on: the first one also finds
        # the library directories, and one slow look is no trend.
        self._looks += 1
        if self._looks == 2:
            self._cost_s = cost
        elif self._looks > 2:
            self._cost_s += (cost - self._cost_s) / 4

    def oom(self, hook, exc, msg, tb):
        """One XLA out-of-memory error (_jaxoom.OomWatch reports it)."""
        from ._frames import frames_of, library_dirs, type_name

        self.ooms += 1
        frames = frames_of(tb, library_dirs())[-24:]
        user = max([i for i, f in enumerate(frames) if f["user"]] or [-1])
        env = {k: os.environ[k] for k in _XLA_ENV if k in os.environ}
        self._record("jax.oom", {"hook": hook, "oom_index": self.ooms,
                                 "type": type_name(type(exc)), "message": msg[:4000],
                                 "frames": frames, "user_frame": user,
                                 "env": env})

    def exit(self):
        self.watch.at_exit()
        self._record("jax.exit", {"periodic_count": self.ticks, "samples": self.samples,
                                  "oom_count": self.ooms})
