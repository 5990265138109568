"""pystack_common.py - what the Python call-site cases share
(tests/py/pystack_cases.py, tests/py/pystack_fork.py): CPython's own view
of a chain of frames, and the driver set-up they allocate under.
"""
import ctypes


def frames_of(f):
    """[file, qualname, line] of f and every frame that called it."""
    out = []
    while f is not None:
        out.append([f.f_code.co_filename, f.f_code.co_qualname, f.f_lineno])
        f = f.f_back
    return out


def setup(cuda):
    """cuInit and a context on device 0 through the ctypes library cuda."""
    dev = ctypes.c_int()
    ctx = ctypes.c_void_p()
    assert cuda.cuInit(0) == 0
    assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0
    return ctx
