"""selftime_check.py N - run under a -DCP_SELFTIME shim (make selftime) on the
fake driver: N stream-ordered allocation+free pairs recording, then N paused,
and check what cuprobe_bench_selftime() counted (tests/sh/bench_selftime.sh)."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import pmu  # noqa: E402

n = int(sys.argv[1])
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
dev = ctypes.c_int()
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
ctx = ctypes.c_void_p()
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0
st = pmu.SelfTime()
pause = ctypes.CDLL(None).cuprobe_bench_pause
rows = {}
for state in (0, 1):
    assert pause(state) == 0
    a = st.read()
    for _ in range(n):
        p = ctypes.c_uint64()
        assert cu.cuMemAllocAsync(ctypes.byref(p), ctypes.c_size_t(4096), None) == 0
        assert cu.cuMemFreeAsync(p, None) == 0
    b = st.read()
    for i, d in enumerate(pmu.selftime_delta(a, b)):
        if d[0]:
            rows[(state, st.api(i))] = d
pause(0)
for (state, name), d in sorted(rows.items()):
    print("%s %s %d %d %d" % ("paused" if state else "recording", name, d[0], d[1], d[2]))
