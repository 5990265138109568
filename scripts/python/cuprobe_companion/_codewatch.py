"""The code watcher: lets the shim's Python call-site cache trust its hits.

The shim caches each Python call site by (code object address, instruction)
and, holding no reference, re-validates every hit against the live code
object.  On CPython 3.12+ a code watcher (PyCode_AddWatcher) tells it
whenever a code object dies; between two deaths no address can have been
reused, so a hit needs no validation (interpose/callsite/cp_pysite.c says
why that is safe).  Here we register the shim's own C callback,
cuprobe_py_code_event() (no Python runs per event), then tell the shim with
cuprobe_py_code_watch(1); at exit cuprobe_py_code_watch(0) turns it off
before finalisation drops the watchers.

Started when the program imports a framework (ctypes is loaded by then);
never raises, and any failure leaves the shim validating every hit, as
without us.  Only the main interpreter registers: watchers are per
interpreter, and the shim turns the memo off for good once it sees a second
one.
"""
import sys

_started = False


def _log(log, text):
    if log is None:
        return
    try:
        log(text.encode("utf-8", "replace"))
    except Exception:
        pass


def start():
    """Register the shim's code watcher once per process.  Never raises.
    @return : True when the shim's memo is on."""
    global _started
    if _started:
        return False
    _started = True
    if sys.version_info < (3, 12) or sys.implementation.name != "cpython":
        return False
    try:
        from . import _sink

        found = _sink.find_code_watch()
        if found is None:
            return False
        return register(*found)
    except Exception:
        return False


def register(event_addr, watch, log=None):
    """Register the C callback at event_addr with PyCode_AddWatcher, then
    call watch(1) (cuprobe_py_code_watch).  log(bytes) gets one line when no
    watcher slot is free.  Raises nothing CPython raises here.
    @return : True when the watcher is registered and the shim took it."""
    import atexit
    import ctypes

    api = ctypes.pythonapi
    # Our own function objects (PYFUNCTYPE: GIL held, exceptions checked),
    # so that ctypes.pythonapi's shared attributes keep the program's
    # argtypes, if it set any.
    interp_get = ctypes.PYFUNCTYPE(ctypes.c_void_p)(("PyInterpreterState_Get", api))
    interp_main = ctypes.PYFUNCTYPE(ctypes.c_void_p)(("PyInterpreterState_Main", api))
    if interp_get() != interp_main():
        return False
    add = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(("PyCode_AddWatcher", api))
    clear = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int)(("PyCode_ClearWatcher", api))
    try:
        wid = add(event_addr)
    except Exception as exc:
        # All 8 code watcher slots are taken (ValueError), or the like.
        _log(log, "python sites: no code watcher (%s: %s); every call-site "
                  "cache hit is validated" % (type(exc).__name__, exc))
        return False
    if wid < 0:
        return False
    if watch(1) != 0:
        try:
            clear(wid)
        except Exception:
            pass
        return False
    atexit.register(watch, 0)
    return True
