"""pystack_fork.py - run under the shim by tests/sh/pystack_e2e.sh: the
parent allocates, forks, and the child allocates through the same function.
The child's trace is a new file: it must define again every string, Python
frame, stack and module it uses.  Each process writes its manifest (as in
pystack_cases.py) to $CP_MANIFEST.<role>.
"""
import ctypes
import json
import os
import sys

from pystack_common import frames_of, setup

CUDA = ctypes.CDLL("libcuda.so.1")
P = ctypes.c_uint64()
MANIFEST = []


def alloc(case, size):
    rc, line = CUDA.cuMemAlloc_v2(ctypes.byref(P), size), sys._getframe().f_lineno
    assert rc == 0
    frames = [[__file__, "alloc", line]] + frames_of(sys._getframe(1))
    MANIFEST.append({"case": case, "size": size, "frames": frames})


def done(role):
    with open(os.environ["CP_MANIFEST"] + "." + role, "w") as f:
        json.dump(MANIFEST, f)


setup(CUDA)
alloc("parent", 11 * 4096)
pid = os.fork()
if pid == 0:
    del MANIFEST[:]
    setup(CUDA)
    alloc("child", 12 * 4096)
    done("child")
    os._exit(0)
os.waitpid(pid, 0)
done("parent")
