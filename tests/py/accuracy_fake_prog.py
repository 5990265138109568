"""accuracy_fake_prog.py clean|bug - a workload for the accuracy suite's own
test (tests/py/accuracy_table.py), on the fake driver through ctypes: 20
"asynchronous" copies of 4 MiB, from pinned memory (clean) or from pageable
memory (bug: pageable-async-copy at the copy line)."""
import ctypes
import sys

BUG = sys.argv[1:] == ["bug"]
cu = ctypes.CDLL("libcuda.so.1")
u64, vp = ctypes.c_uint64, ctypes.c_void_p
cu.cuMemcpyHtoDAsync_v2.argtypes = [u64, vp, ctypes.c_size_t, vp]
cu.cuMemFree_v2.argtypes = [u64]
cu.cuMemFreeHost.argtypes = [vp]
cu.cuCtxDestroy_v2.argtypes = [vp]
cu.cuStreamSynchronize.argtypes = [vp]
dev, ctx, stream, d = ctypes.c_int(), vp(), vp(), u64()
assert cu.cuInit(0) == 0 and cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0
assert cu.cuStreamCreate(ctypes.byref(stream), 0) == 0
n = 4 << 20
assert cu.cuMemAlloc_v2(ctypes.byref(d), ctypes.c_size_t(n)) == 0
if BUG:
    buf = ctypes.create_string_buffer(n)
    host = ctypes.addressof(buf)
else:
    pinned = vp()
    assert cu.cuMemAllocHost_v2(ctypes.byref(pinned), ctypes.c_size_t(n)) == 0
    host = pinned.value
for i in range(20):
    cu.cuMemcpyHtoDAsync_v2(d.value, host, n, stream)   # EXPECT: pageable-async-copy
cu.cuStreamSynchronize(stream)
cu.cuMemFree_v2(d.value)
if not BUG:
    cu.cuMemFreeHost(host)
cu.cuCtxDestroy_v2(ctx)
print("done")
