"""torch_site.py - a manual check on a GPU machine with PyTorch: run under
the shim with the real driver, e.g.
    LD_PRELOAD=build/libcuprobe.so CUPROBE_OUTPUT=t.trace python3 tests/py/torch_site.py
and compare the lines it prints ("SITE kind line") with the innermost Python
frame of the trace's matching ALLOC / COPY records (cuprobe-analyze dump).
PyTorch releases the GIL before it allocates or copies, so these frames can
only come from the GIL-free walker.
"""
import sys

import torch


def make(n):
    x, line = torch.empty(n, dtype=torch.uint8, device="cuda"), sys._getframe().f_lineno
    print("SITE alloc %d %s" % (line, sys._getframe().f_code.co_qualname))
    return x


def upload():
    h = torch.ones(1 << 22, dtype=torch.float32)
    d, line = h.to("cuda"), sys._getframe().f_lineno
    print("SITE copy %d %s" % (line, sys._getframe().f_code.co_qualname))
    return d


a = make(3 << 28)
b = upload()
torch.cuda.synchronize()
print("torch", torch.__version__, "python", sys.version.split()[0])
