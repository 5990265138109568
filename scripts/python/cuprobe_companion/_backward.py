"""The line that called backward() (kind torch.backward, docs/framework.md).

PyTorch's autograd engine runs the backward pass on threads of its own (one
per device, named pt_autograd_N) that run no Python, so the memory they
allocate has no Python call site.  torch.autograd.backward, which
Tensor.backward calls, is wrapped: each call writes a record on the calling
thread when it starts (with the innermost frame of the program's own code)
and when it returns; the analyzer gives that line to the allocations
without a Python frame made on other threads in between.

Rules kept here:
- the wrapper calls the original with the same arguments and returns or
  raises exactly what it does; it looks like the original (functools.wraps)
  and is placed once;
- recording goes through the companion's guarded(): a failure disables the
  companion, never the backward pass;
- a frame's file is judged once (a dict by file name), so a call costs two
  small records and a walk up to the first frame of the program.
"""
import functools
import sys

from ._frames import is_user_frame, library_dirs
from ._sink import VERSION

# How far up the caller's frames the program's own code is looked for.
MAX_DEPTH = 64


class _Caller:
    """The innermost frame of the program's own code above backward()."""

    def __init__(self):
        self.user = {}          # file name -> is it the program's own code
        self.libdirs = None

    def _is_user(self, frame):
        code = frame.f_code
        user = self.user.get(code.co_filename)
        if user is None:
            if self.libdirs is None:
                self.libdirs = library_dirs()
            module = frame.f_globals.get("__name__")
            user = is_user_frame(code.co_filename,
                                        module if isinstance(module, str) else None,
                                        self.libdirs)
            self.user[code.co_filename] = user
        return user

    def find(self, frame):
        """(file, line, func) of the first frame of the program's own code
        from frame outwards, else of frame itself."""
        first = frame
        for _ in range(MAX_DEPTH):
            if frame is None:
                break
            if self._is_user(frame):
                first = frame
                break
            frame = frame.f_back
        if first is None:
            return None
        code = first.f_code
        return (code.co_filename, first.f_lineno, getattr(code, "co_qualname", code.co_name))


def install(torch, record, guarded):
    """Wrap torch.autograd.backward.  record(kind, obj) and guarded(where,
    fn, *args) are the companion core's.  @return : True when wrapped."""
    autograd = getattr(torch, "autograd", None)
    original = getattr(autograd, "backward", None)
    if original is None or getattr(original, "_cuprobe", False):
        return False
    caller = _Caller()

    def begin(frame):
        where = caller.find(frame)
        obj = {"v": VERSION, "event": "begin"}
        if where is not None:
            obj["file"], obj["line"], obj["func"] = where
        record("torch.backward", obj)
        return True

    def end():
        record("torch.backward", {"v": VERSION, "event": "end"})

    @functools.wraps(original)
    def backward(*args, **kwargs):
        began = guarded("torch.backward", begin, sys._getframe(1))
        try:
            return original(*args, **kwargs)
        finally:
            if began:
                guarded("torch.backward", end)

    backward._cuprobe = True
    autograd.backward = backward
    return True
