"""JAX: XLA's out-of-memory errors (kind jax.oom, docs/framework.md), seen
without any change to the program.

XLA raises RESOURCE_EXHAUSTED as jaxlib's XlaRuntimeError (also named
jax.errors.JaxRuntimeError) from its C++ runtime.  JAX has no hook for that
moment and no callback on its allocator.  Two ways in see the error without
changing what the program sees:

- CPython 3.12+: a sys.monitoring RAISE callback (PEP 669), under a tool id
  no standard tool claims (3, else 4: the debugger's 0, coverage's 1, the
  profilers' 2 and the optimizer's 5 are left alone).  It runs where the
  error enters Python, before any handler, so the pool is read as XLA left
  it, whether the program then catches the error or not.  Its return value
  is ignored for this event and it never raises, so the exception's path
  is the same.  Every other exception costs one call and a look at its
  type's name.  The error is seen again in each frame it passes through
  and recorded once.
- every version: at exit, the main thread's uncaught exception where the
  interpreter left it (sys.last_exc / sys.last_value), unless seen already.

Limits: before 3.12, or with both tool ids taken, a caught OOM is not seen
(the periodic samples remain); an uncaught one in a thread is seen on 3.12+
only.
"""
import sys

# The exception's type name: jaxlib 0.4-0.7 (XlaRuntimeError) and later
# (JaxRuntimeError).
_TYPES = frozenset(("XlaRuntimeError", "JaxRuntimeError"))
_TOOL_IDS = (3, 4)
_TOOL_NAME = "cuprobe"
_SEEN_KEEP = 16


def oom_message(exc):
    """str(exc) when exc is XLA's out-of-memory error, else None."""
    if type(exc).__name__ not in _TYPES:
        return None
    try:
        msg = str(exc)
    except Exception:
        return None
    if "RESOURCE_EXHAUSTED" in msg and ("Out of memory" in msg or "allocate" in msg):
        return msg
    return None


def _traceback_of(frame):
    """A traceback over frame and its callers, outermost first, as an
    exception's would be once it reached the outermost one."""
    import types

    tb = None
    while frame is not None:
        tb = types.TracebackType(tb, frame, frame.f_lasti, frame.f_lineno)
        frame = frame.f_back
    return tb


class OomWatch:
    """Hands each XLA out-of-memory error to report(hook, exc, msg, tb)
    once; guarded(where, fn, *args) runs it (the companion's failure rule)."""

    def __init__(self, report, guarded):
        self._report = report
        self._guarded = guarded
        self._seen = []             # (id, message) of errors recorded
        self._busy = False
        self.tool = None            # the sys.monitoring tool id in use
        self.how = "exit"

    def install(self):
        """Register the RAISE callback where the interpreter has
        sys.monitoring and a tool id is free.  @return : self.how."""
        mon = getattr(sys, "monitoring", None)
        if mon is None:
            self.how = "exit (Python %d.%d has no sys.monitoring)" % sys.version_info[:2]
            return self.how
        for tool in _TOOL_IDS:
            try:
                mon.use_tool_id(tool, _TOOL_NAME)
            except ValueError:
                continue
            mon.register_callback(tool, mon.events.RAISE, self._on_raise)
            mon.set_events(tool, mon.get_events(tool) | mon.events.RAISE)
            self.tool = tool
            self.how = "sys.monitoring"
            return self.how
        self.how = "exit (sys.monitoring tool ids %s taken)" % "/".join(map(str, _TOOL_IDS))
        return self.how

    def _on_raise(self, code, offset, exc):
        # First and cheapest: nearly every exception is not XLA's.
        if type(exc).__name__ not in _TYPES or self._busy:
            return
        self._busy = True
        try:
            self._guarded("jax.oom", self._raised, exc, sys._getframe(1))
        except Exception:
            pass
        finally:
            self._busy = False

    def _first(self, exc, msg):
        key = (id(exc), msg)
        if key in self._seen:
            return False
        self._seen.append(key)
        del self._seen[:-_SEEN_KEEP]
        return True

    def _raised(self, exc, frame):
        msg = oom_message(exc)
        if msg is not None and self._first(exc, msg):
            self._report("sys.monitoring", exc, msg, _traceback_of(frame))

    def at_exit(self):
        """The main thread's uncaught exception, when it is XLA's OOM and
        was not recorded when raised."""
        value = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
        msg = oom_message(value) if value is not None else None
        if msg is not None and self._first(value, msg):
            self._report("exit", value, msg, value.__traceback__)
