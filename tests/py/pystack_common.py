"""pystack_common.py - what the Python call-site cases share
(tests/py/pystack_cases.py, tests/py/pystack_fork.py,
tests/gpu/code_watcher_prog.py): CPython's own view of a chain of frames,
the manifest of expected call sites, the driver set-up they allocate under,
and code objects freed and made again at the same addresses.
"""
import ctypes
import os
import sys

MANIFEST = []


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


def note(case, size, rc, line):
    """The caller called the driver on `line`; note its frames (for
    tests/py/check_pystack.py)."""
    assert rc == 0, (case, rc)
    me = sys._getframe(1)
    frames = [[me.f_code.co_filename, me.f_code.co_qualname, line]] + frames_of(me.f_back)
    MANIFEST.append({"case": case, "size": size, "frames": frames})


CHURN_SRC = """def churn_{i}():
    rc, line = CUDA.cuMemAlloc_v2(ctypes.byref(P), size), sys._getframe().f_lineno
    note("churn {i}", size, rc, line)
    CUDA.cuMemFree_v2(P)
churn_{i}()
del churn_{i}
"""


def churn(cuda, sizes, where):
    """A new module and function an iteration, freed at its end (no cycle
    keeps them): the next iteration's code objects take the same addresses,
    with other names, at the same instruction.  Iteration i allocates sizes[i]
    once (noted); its source is written to where/churn_K.py, where the
    checker reads the driver call's line."""
    ptr = ctypes.c_uint64()
    for i, size in enumerate(sizes):
        src, path = CHURN_SRC.format(i=i), os.path.join(where, "churn_%d.py" % (i % 3))
        with open(path, "w") as f:
            f.write(src)
        env = {"CUDA": cuda, "ctypes": ctypes, "P": ptr, "sys": sys, "note": note, "size": size}
        exec(compile(src, path, "exec"), env)
