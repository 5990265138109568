"""The companion's state: activation, the periodic timer thread, the exit
hook and failure handling.

Rules kept here:
- it never changes the program's behaviour: every entry point from the
  program's threads (import hook, OOM observer, atexit, the timer) catches
  its own exceptions;
- the first failure disables the companion for good and leaves exactly one
  log line in the trace;
- nothing happens until a watched framework is imported, and nothing at all
  when there is nowhere to write (no shim loaded, no test sink);
- in a forked child it stays quiet (the child has no timer thread, and
  CUDA state is not usable there).
"""
import os
import sys
import threading
import time

from ._sink import VERSION
DEFAULT_INTERVAL = 10.0
MIN_INTERVAL = 0.01
# CUPROBE_FRAMEWORK_WATCH: the least time between two samples taken because
# the allocator grew (a new segment), so an allocator taking thousands of
# segments costs at most one sample per gap.
DEFAULT_WATCH_GAP = 0.05
# The sampler thread wakes at least this often to notice a stop.
WAIT_SLICE_S = 1.0

_state = None   # the _Companion once activated
_failed = False  # set by fail() even before activation
# Serialises activation and collector creation: two threads may import
# frameworks at the same time.  Re-entrant, to be safe against a framework
# import nested in our own work.
_lock = threading.RLock()


def parse_interval(text, default=DEFAULT_INTERVAL):
    """CUPROBE_FRAMEWORK_INTERVAL: seconds (float).  Unset, empty, garbage,
    negative, infinite or NaN give the default; 0 turns the periodic summary
    off; tiny values are raised to MIN_INTERVAL."""
    if text is None:
        return default
    try:
        value = float(str(text).strip().rstrip("sS"))
    except ValueError:
        return default
    if value != value or value in (float("inf"), float("-inf")) or value < 0:
        return default
    if value == 0:
        return 0.0
    return max(value, MIN_INTERVAL)


def fail(where, exc):
    """Disable the companion for good, with one log line in the trace."""
    global _failed
    if _failed:
        return
    _failed = True
    state = _state
    if state is not None:
        state.stop_timer()
        sink = state.sink
    else:
        sink = None
    try:
        text = "companion disabled: %s: %s: %s" % (where, type(exc).__name__, exc)
        if sink is None:
            from . import _sink

            sink = _sink.Sink.open()
        if sink is not None:
            sink.log(text[:1000])
    except Exception:
        pass


def disabled():
    return _failed or _state is None or _state.pid != os.getpid()


def guarded(where, fn, *args):
    """Run fn(*args) unless disabled; a failure disables the companion.
    @return : fn's value, or None."""
    if disabled():
        return None
    try:
        return fn(*args)
    except Exception as exc:
        fail(where, exc)
        return None


def record(kind, obj, shrink=None):
    """Encode and write one record.  When the JSON is over what the shim
    accepts, shrink(obj, attempt) returns a smaller object to try (attempt
    counts from 1), or None to give up.
    @return : the sink's result, or None when nothing was written."""
    state = _state
    if state is None:
        return None
    from . import _sink

    data = _sink.encode(obj)
    attempt = 0
    while len(data) > _sink.MAX_JSON_BYTES:
        attempt += 1
        obj = shrink(obj, attempt) if shrink is not None else None
        if obj is None:
            return None
        data = _sink.encode(obj)
    return state.sink.record(kind, data)


class _Cost:
    """What one kind of collection cost: count, CPU microseconds (total,
    max) and the longest wall time."""

    def __init__(self):
        self.n = 0
        self.us_total = 0.0
        self.us_max = 0.0
        self.wall_us_max = 0.0

    def add(self, us, wall_us):
        self.n += 1
        self.us_total += us
        self.us_max = max(self.us_max, us)
        self.wall_us_max = max(self.wall_us_max, wall_us)

    def mean(self):
        return round(self.us_total / self.n, 1) if self.n else 0.0


class _Companion:
    def __init__(self, sink):
        self.sink = sink
        self.pid = os.getpid()
        self.interval = parse_interval(os.environ.get("CUPROBE_FRAMEWORK_INTERVAL"))
        self.watch_gap = parse_interval(os.environ.get("CUPROBE_FRAMEWORK_WATCH"),
                                        DEFAULT_WATCH_GAP)
        if sink.wait is None:
            self.watch_gap = 0.0
        self.sample_cost = _Cost()
        self.collectors = {}   # framework name -> collector
        # framework name -> its attribution (_attrib.py), sampled with it
        self.attributors = {}
        self.thread = None
        self.stop = None
        self.tick_cost = _Cost()
        self.quick_cost = _Cost()
        self.exited = False

    def info(self, event, **extra):
        obj = {"v": VERSION, "event": event, "pid": self.pid,
               "python": sys.version.split()[0], "interval_s": self.interval,
               "watch_gap_s": self.watch_gap,
               "sink": self.sink.where, "frameworks": sorted(self.collectors)}
        obj.update(extra)
        record("companion.info", obj)

    def start_timer(self):
        if self.thread is not None or (self.interval <= 0 and self.watch_gap <= 0):
            return
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="cuprobe-companion",
                                       daemon=True)
        self.thread.start()

    def stop_timer(self):
        if self.stop is not None:
            self.stop.set()

    def _quick_period(self):
        """Seconds until the next quick sample: the shortest quick_period()
        of a collector that has quick(), when shorter than the interval (and
        the periodic summaries are on); else inf."""
        periods = [c.quick_period() for c in list(self.collectors.values())
                   if hasattr(c, "quick")]
        best = min(periods) if periods else float("inf")
        return best if 0 < self.interval and best < self.interval else float("inf")

    def _run(self):
        """The periodic summary every `interval`, quick samples in between
        for collectors that want them (quick()), and a sample right after
        the allocator grows (at most one per `watch_gap`): the thread sleeps
        in the shim's cuprobe_framework_wait() between them."""
        _block_signals()
        inf = float("inf")
        next_tick = time.monotonic() + self.interval if self.interval > 0 else inf
        next_quick = inf
        while not self.stop.is_set():
            if disabled():
                return
            now = time.monotonic()
            if now >= next_tick:
                self.tick()
                next_tick = time.monotonic() + self.interval
                next_quick = time.monotonic() + self._quick_period()
                continue
            if now >= next_quick:
                self._each("quick", self.quick_cost)
                next_quick = time.monotonic() + self._quick_period()
                continue
            if next_quick == inf:
                # A collector attached since: its first quick sample.
                next_quick = now + self._quick_period()
            timeout = min(next_tick - now, next_quick - now, WAIT_SLICE_S)
            if self.watch_gap <= 0:
                self.stop.wait(timeout)
                continue
            rc = self.sink.wait(max(1, int(timeout * 1000)))
            if rc < 0:
                self.watch_gap = 0.0      # tracing is off: the timer only
            elif rc > 0 and not self.stop.is_set() and not disabled():
                self.sample()
                self.stop.wait(self.watch_gap)

    def _each(self, method, cost):
        """Run `method` of every collector that has one, and add this
        thread's CPU time to `cost`: wall time would also count the waits
        for the GIL while the program's threads run."""
        c0, w0 = time.thread_time(), time.perf_counter()
        for name, collector in self._all():
            fn = getattr(collector, method, None)
            if fn is not None:
                guarded(name + "." + method, fn)
                if disabled():
                    return
        cost.add((time.thread_time() - c0) * 1e6, (time.perf_counter() - w0) * 1e6)

    def _all(self):
        """(name, collector) of every collector, then every attributor."""
        return list(self.collectors.items()) + \
            [(name + ".attrib", a) for name, a in self.attributors.items()]

    def sample(self):
        """One sample of every collector that has one, after a new segment."""
        self._each("segment", self.sample_cost)

    def tick(self):
        """One periodic summary of every collector."""
        self._each("periodic", self.tick_cost)

    def at_exit(self):
        if self.exited:
            return
        self.exited = True
        self.stop_timer()
        for name, collector in self._all():
            guarded(name + ".exit", collector.exit)
        if not disabled():
            t, g = self.tick_cost, self.sample_cost
            self.info("exit", periodic_ticks=t.n, quick_samples=self.quick_cost.n,
                      segment_samples=g.n,
                      segment_us_mean=g.mean(),
                      segment_us_max=round(g.us_max, 1),
                      periodic_us_mean=t.mean(),
                      periodic_us_max=round(t.us_max, 1),
                      periodic_wall_us_max=round(t.wall_us_max, 1),
                      records=self.sink.records, record_failures=self.sink.failures)


def _block_signals():
    """Keep process-directed signals off the timer thread: hosts expect them
    on their own threads.  Faults stay deliverable."""
    try:
        import signal

        keep = {signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL,
                signal.SIGABRT}
        signal.pthread_sigmask(signal.SIG_BLOCK, set(signal.valid_signals()) - keep)
    except Exception:
        pass


def _activate():
    """Create the companion on the first framework import.  @return : the
    companion, or None when there is nowhere to write (nothing is done)."""
    global _state
    if _state is not None:
        return _state
    from . import _sink

    sink = _sink.Sink.open()
    if sink is None:
        return None
    import atexit

    _state = _Companion(sink)
    atexit.register(_at_exit)
    return _state


def _at_exit():
    state = _state
    if state is None or disabled():
        return
    try:
        state.at_exit()
    except Exception as exc:
        fail("exit", exc)


def _make_collector(framework, module):
    if framework == "torch":
        from . import _torch

        return _torch.TorchCollector(module, record, guarded)
    from . import _others

    if framework == "cupy":
        return _others.CupyCollector(module, record)
    return _others.JaxCollector(module, record, guarded)


def _make_attributor(framework, module):
    """The attribution of a framework just imported (torch.cuda or cupy), or
    None when CUPROBE_ATTRIBUTE leaves it off or the framework has none."""
    from . import _attrib

    if not _attrib.enabled():
        return None
    if framework == "torch":
        from . import _attrib_torch

        return _attrib_torch.TorchAttrib(module, record, guarded)
    if framework == "cupy":
        from . import _attrib_cupy

        return _attrib_cupy.CupyAttrib(module, record)
    return None


def on_framework(framework, module):
    """Called by the import hook when torch.cuda, cupy or jax has just been
    imported by the program."""
    with _lock:
        _start_code_watch()
        _on_framework_locked(framework, module)


def _start_code_watch():
    """The shim's code watcher (Python call sites), independent of the
    companion's own state: its failure or success changes nothing here."""
    try:
        from . import _codewatch

        _codewatch.start()
    except Exception:
        pass


def _on_framework_locked(framework, module):
    if _failed:
        return
    state = _activate()
    if state is None or disabled() or framework in state.collectors:
        return
    collector = _make_collector(framework, module)
    state.collectors[framework] = collector
    # atexit runs handlers last-registered first: moving ours to the end
    # makes it run before the exit handlers of the framework just imported,
    # which may tear down what we want to read.
    import atexit

    atexit.unregister(_at_exit)
    atexit.register(_at_exit)
    state.info("attached", framework=framework)
    guarded(framework + ".attach", collector.attach)
    attributor = _make_attributor(framework, module)
    if attributor is not None and not disabled():
        state.attributors[framework] = attributor
        guarded(framework + ".attrib", attributor.attach)
    if not disabled():
        state.start_timer()
