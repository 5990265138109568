"""Stand-in of JAX's dispatch: an execution allocates its output buffer in
its device's allocator (bfc.py), launches its kernel, and fails with XLA's
RESOURCE_EXHAUSTED, raised as jaxlib's XlaRuntimeError from the call into
the runtime, when the allocator cannot serve it.

jax.jit, as XLA's: the first call with given arguments (arrays by shape and
dtype, anything else by value) runs the Python function, recording the
executions it makes; later calls run no Python of the program's and replay
them (the temporaries allocated and freed, the outputs returned as new
arrays), as XLA's compiled executable does."""
import functools
import os
import time

from jaxlib.xla_extension import XlaRuntimeError

from . import traceback_util, xla_bridge


class Array:
    def __init__(self, shape, dtype, device, buf):
        self.shape, self.dtype, self._device, self._buf = shape, dtype, device, buf

    @property
    def nbytes(self):
        return self._buf.size if self._buf is not None else 0

    def devices(self):
        return {self._device}

    def is_deleted(self):
        return self._buf is None

    def delete(self):
        buf, self._buf = self._buf, None
        if buf is not None:
            self._device.allocator.free(buf)

    def block_until_ready(self):
        return self

    def __del__(self):
        try:
            self.delete()
        except Exception:
            pass


def _nbytes(shape, dtype):
    n = dtype.itemsize
    for d in (shape if isinstance(shape, (tuple, list)) else (shape,)):
        n *= int(d)
    return n


_tracing = []    # the plans of the jit calls being traced, innermost last


def _execute(device, nbytes):
    """The runtime's Execute(): where XLA's status becomes an exception.
    Each takes STANDIN_JAX_EXEC_S seconds of device time (default 0), the
    GIL released, as a kernel the host waits for."""
    exec_s = float(os.environ.get("STANDIN_JAX_EXEC_S", "0"))
    if exec_s > 0:
        time.sleep(exec_s)
    buf = device.allocator.alloc(nbytes)
    if buf is None:
        if isinstance(device.allocator, xla_bridge.bfc.Platform):
            raise XlaRuntimeError(
                "RESOURCE_EXHAUSTED: Failed to allocate request for %.2fMiB (%dB) on "
                "device ordinal %d" % (nbytes / 1048576.0, nbytes, device.id))
        raise XlaRuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to "
                              "allocate %d bytes." % nbytes)
    device.client.launch(device)
    return buf


@traceback_util.api_boundary
def execute_new(shape, dtype, primitive):
    device = xla_bridge.get_backend().local_devices()[0]
    buf = _execute(device, _nbytes(shape, dtype))
    out = Array(shape, dtype, device, buf)
    if _tracing:
        # The innermost traced call's execution; no reference is kept,
        # so its temporaries are freed as the Python function drops them.
        plan = _tracing[-1]
        out._trace = (id(plan), len(plan))
        plan.append((shape, dtype))
    return out


def _key(args, kwargs):
    def one(x):
        return ("array", x.shape, str(x.dtype)) if isinstance(x, Array) else ("value", repr(x))
    return tuple(one(a) for a in args) + tuple((k, one(v)) for k, v in sorted(kwargs.items()))


def _replay(plan, outputs):
    """The executions of a traced call again: temporaries allocated and
    freed in order, the outputs (indices into plan) as new arrays."""
    made = {}
    for i, (shape, dtype) in enumerate(plan):
        a = execute_new(shape, dtype, None)
        if i in outputs:
            made[i] = a
        else:
            a.delete()
    return made


def _template(result, plan):
    """What a traced call returned, its arrays made by the call as their
    indices in plan (no array is kept): (kind, items), items ("out", i) or
    ("value", x)."""
    multi = isinstance(result, (tuple, list))
    items = []
    for x in (result if multi else [result]):
        t = getattr(x, "_trace", None) if isinstance(x, Array) else None
        items.append(("out", t[1]) if t is not None and t[0] == id(plan) else ("value", x))
    return (type(result) if multi else None), items


def jit(fun):
    cache = {}

    @functools.wraps(fun)
    @traceback_util.api_boundary
    def cache_miss(*args, **kwargs):
        key = _key(args, kwargs)
        hit = cache.get(key)
        if hit is not None:
            plan, (kind, items) = hit
            made = _replay(plan, {x for tag, x in items if tag == "out"})
            out = [made[x] if tag == "out" else x for tag, x in items]
            return kind(out) if kind is not None else out[0]
        plan = []
        _tracing.append(plan)
        try:
            result = fun(*args, **kwargs)
        finally:
            _tracing.remove(plan)
        cache[key] = (plan, _template(result, plan))
        return result
    return cache_miss


def block_until_ready(x):
    return x
