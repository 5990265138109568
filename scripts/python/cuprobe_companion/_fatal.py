"""The exception a run died of (kind "exception", docs/framework.md).

_hook.install_excepthooks() registers an atexit handler that reads the main
thread's uncaught exception where the interpreter left it, and watches the
point where threading hands a thread's to threading.excepthook; both call
record() here, which is imported only when an uncaught exception (or
KeyboardInterrupt) actually happens.

Rules kept here:
- only uncaught exceptions are recorded, each once;
- nothing is printed and nothing raised, and no hook of the program's is
  replaced: output, exit status and sys.excepthook do not change;
- nothing is imported that the program did not import (torch and
  threading are read from sys.modules only).
"""
import os
import sys

from ._frames import frames_of, library_dirs, type_name
from ._sink import VERSION
MAX_MESSAGE = 8000
MAX_CHAIN = 4

# Exceptions of the main thread recorded already, as (id, type, message):
# no reference is kept (it would keep the traceback's frames, and their
# tensors, alive), and an id alone may be reused once the object is gone.
_seen = set()


def _message(value):
    try:
        text = str(value)
    except Exception:
        text = "<str() failed>"
    return text[:MAX_MESSAGE]


def _chain(value):
    out = []
    seen = {id(value)}
    cur = value
    while len(out) < MAX_CHAIN:
        nxt = cur.__cause__ if cur.__cause__ is not None else (
            None if cur.__suppress_context__ else cur.__context__)
        if nxt is None or id(nxt) in seen:
            break
        seen.add(id(nxt))
        out.append({"type": type_name(type(nxt)), "message": _message(nxt)[:2000],
                    "cause": cur.__cause__ is not None})
        cur = nxt
    return out


def _torch_info():
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    version = sys.modules.get("torch.version")
    info = {"version": str(getattr(torch, "__version__", "")),
            "cuda": getattr(version, "cuda", None) if version is not None else None}
    cuda = sys.modules.get("torch.cuda")
    if cuda is not None:
        try:
            # Reads a flag: never initialises CUDA.
            info["cuda_initialized"] = bool(cuda.is_initialized())
        except Exception:
            pass
    if info["cuda"] is not None:
        info["cuda"] = str(info["cuda"])
    return info


def build(hook, etype, value, tb, thread_name=None):
    """The record for one uncaught exception (a dict)."""
    libdirs = library_dirs()
    frames = frames_of(tb, libdirs)
    user = -1
    for i in range(len(frames) - 1, -1, -1):
        if frames[i]["user"]:
            user = i
            break
    threading = sys.modules.get("threading")
    if threading is not None:
        current = threading.current_thread()
        main, name = current is threading.main_thread(), current.name
    else:
        main, name = True, "MainThread"   # no other thread can exist
    obj = {"v": VERSION, "hook": hook, "pid": os.getpid(),
           "thread": thread_name or name,
           "main_thread": main if hook != "threading.excepthook" else False,
           "type": type_name(etype), "message": _message(value),
           "frames": frames, "user_frame": user,
           "chain": _chain(value) if isinstance(value, BaseException) else [],
           "python": sys.version.split()[0], "argv": list(sys.argv)[:64]}
    torch = _torch_info()
    if torch is not None:
        obj["torch"] = torch
    return obj


def _shrink(obj, attempt):
    if attempt > 3:
        return None
    obj = dict(obj)
    obj["frames"] = obj["frames"][-(40 >> attempt):]
    obj["message"] = obj["message"][:2000 >> attempt]
    obj["argv"] = obj["argv"][:4]
    obj["user_frame"] = -1
    for i in range(len(obj["frames"]) - 1, -1, -1):
        if obj["frames"][i]["user"]:
            obj["user_frame"] = i
            break
    return obj


def record(hook, etype, value, tb, thread_name=None):
    """Record one uncaught exception, once.  Never raises."""
    try:
        key = (id(value), etype, _message(value))
        if key in _seen:
            return
        if etype is not None and issubclass(etype, SystemExit):
            return
        from . import _core, _sink

        if _core.disabled() and _core._failed:
            return
        obj = build(hook, etype, value, tb, thread_name)
        if hook != "threading.excepthook":
            _seen.add(key)
        state = _core._state
        sink = state.sink if state is not None and state.pid == os.getpid() else _sink.Sink.open()
        if sink is None:
            return
        data = _sink.encode(obj)
        attempt = 0
        while len(data) > _sink.MAX_JSON_BYTES:
            attempt += 1
            obj = _shrink(obj, attempt)
            if obj is None:
                return
            data = _sink.encode(obj)
        sink.record("exception", data)
    except Exception:
        pass


def at_exit():
    """The interpreter is ending: an uncaught exception in the main thread
    left sys.last_exc (3.12+) or sys.last_value behind when the interpreter
    handed it to sys.excepthook; record it under that hook's name.  (An
    interactive console leaves the exceptions it showed there too: the
    analyzer takes one for the cause of death only when the exit status
    says so.)"""
    value = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
    if value is None:
        return
    record("sys.excepthook", type(value), value, getattr(value, "__traceback__", None))
