"""Where the companion's records go.

In a traced process: libcuprobe.so's exported entry points
cuprobe_framework_record() and cuprobe_framework_log() (interpose/
cp_framework.c), reached through ctypes.  The shim is found in the global
symbol scope (it is LD_PRELOADed) or, failing that, among the libraries
already mapped in /proc/self/maps; it is never loaded by us.

For tests, CUPROBE_FRAMEWORK_SINK=path also appends each record as one JSON
line {"kind": ..., "pid": ..., "data": {...}} (a log line has kind "log" and
data {"text": ...}).
"""
import json
import os

# "v" of every record the companion writes (docs/framework.md): here only.
VERSION = 1
SHIM_NAME = "libcuprobe.so"
# What cuprobe_framework_record() accepts (CP_FW_MAX_BYTES), less a margin.
MAX_JSON_BYTES = (16 << 20) - 4096


def _json_default(obj):
    """Ints from framework types (numpy, torch.Size members), else str."""
    if hasattr(obj, "__index__"):
        return obj.__index__()
    if isinstance(obj, (tuple, set, frozenset)):
        return list(obj)
    return str(obj)


def encode(obj):
    return json.dumps(obj, separators=(",", ":"), default=_json_default,
                      allow_nan=False).encode("utf-8")


def _shim_paths():
    try:
        with open("/proc/self/maps", "r") as f:
            for line in f:
                path = line.rstrip("\n").split(None, 5)[-1]
                if path.endswith("/" + SHIM_NAME):
                    yield path
    except OSError:
        return


def _shim_libs():
    """ctypes handles where the loaded shim's exports may be found: the
    global scope, then the shim itself if it is mapped (never loaded)."""
    import ctypes

    try:
        yield ctypes.CDLL(None)
    except OSError:
        pass
    noload = getattr(os, "RTLD_NOLOAD", 4) | getattr(os, "RTLD_LAZY", 1)
    for path in _shim_paths():
        try:
            # RTLD_NOLOAD: only a library already in the process; loading a
            # second copy would start tracing where nobody asked for it.
            yield ctypes.CDLL(path, mode=noload)
        except OSError:
            pass
        break


def _typed(fn, restype, *argtypes):
    """fn (a ctypes function of the shim, or None) with its C types set."""
    if fn is not None:
        fn.argtypes = argtypes
        fn.restype = restype
    return fn


def _find_entry_points():
    """(record, log, wait) ctypes functions of the loaded shim, or
    (None, None, None); wait is None with a shim that predates it."""
    import ctypes

    for lib in _shim_libs():
        try:
            record = lib.cuprobe_framework_record
            log = lib.cuprobe_framework_log
        except AttributeError:
            continue
        _typed(record, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t)
        _typed(log, ctypes.c_int, ctypes.c_char_p)
        # ctypes releases the GIL for the call: the program runs while the
        # sampler thread sleeps in the shim.
        wait = _typed(getattr(lib, "cuprobe_framework_wait", None), ctypes.c_int, ctypes.c_int)
        return record, log, wait
    return None, None, None


def find_code_watch():
    """(event address, watch, log) of the loaded shim's code watcher
    (interpose/callsite/cp_pysite.h, cp_pystack.h): the address of
    cuprobe_py_code_event() for PyCode_AddWatcher, and ctypes functions
    cuprobe_py_code_watch(int) and cuprobe_framework_log(text); or None
    with a shim that has no code watcher, or none loaded."""
    import ctypes

    for lib in _shim_libs():
        try:
            event = lib.cuprobe_py_code_event
            watch = lib.cuprobe_py_code_watch
        except AttributeError:
            continue
        _typed(watch, ctypes.c_int, ctypes.c_int)
        log = _typed(getattr(lib, "cuprobe_framework_log", None), ctypes.c_int, ctypes.c_char_p)
        return ctypes.cast(event, ctypes.c_void_p).value, watch, log
    return None


class Sink:
    """Writes records; open() returns None when there is nowhere to write."""

    def __init__(self, record_fn, log_fn, path, wait_fn=None):
        self._record = record_fn
        self._log = log_fn
        self._path = path
        # wait_fn(timeout_ms) -> 1 when device memory was taken, 0 on
        # timeout, < 0 when it cannot wait (cuprobe_framework_wait).
        self.wait = wait_fn
        self.records = 0
        self.failures = 0
        self.last_rc = 0

    @classmethod
    def open(cls):
        path = os.environ.get("CUPROBE_FRAMEWORK_SINK") or None
        record, log, wait = _find_entry_points()
        if record is None and path is None:
            return None
        return cls(record, log, path, wait)

    @property
    def where(self):
        parts = []
        if self._record is not None:
            parts.append("trace")
        if self._path is not None:
            parts.append("file")
        return "+".join(parts)

    def _append(self, kind, data_json):
        line = b'{"kind":' + encode(kind) + b',"pid":' + str(os.getpid()).encode() \
            + b',"data":' + data_json + b"}\n"
        fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    def record(self, kind, data_json):
        """Write one record of `kind` whose JSON text is data_json (bytes).
        @return : 0, or the shim's negative errno (tracing off: -ENOTCONN)."""
        rc = 0
        if self._record is not None:
            rc = self._record(kind.encode(), data_json, len(data_json))
            self.last_rc = rc
            if rc < 0:
                self.failures += 1
        if self._path is not None:
            self._append(kind, data_json)
        self.records += 1
        return rc

    def log(self, text):
        if self._log is not None:
            self._log(text.encode("utf-8", "replace"))
        if self._path is not None:
            self._append("log", encode({"text": text}))
