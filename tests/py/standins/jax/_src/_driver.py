"""STANDIN_JAX_DRIVER=1: the stand-in's device work goes through the driver
(libcuda.so.1, the fake one in tests), as XLA's GPU client does: a primary
context per device, the pool's memory taken with cuMemAlloc on it, and one
kernel launch per execution."""
import ctypes

CUDA_ERROR_OUT_OF_MEMORY = 2

_driver = None


class _Driver:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self._check(self.lib.cuInit(0), "cuInit")
        self.ctx = {}
        self.current = None
        self.kernel = None

    @staticmethod
    def _check(rc, what):
        if rc != 0:
            raise RuntimeError("stand-in jax: %s failed: %d" % (what, rc))

    def use(self, ordinal):
        """Make device ordinal's primary context current (retained once)."""
        if self.current == ordinal:
            return
        ctx = self.ctx.get(ordinal)
        if ctx is None:
            dev, ctx = ctypes.c_int(), ctypes.c_void_p()
            self._check(self.lib.cuDeviceGet(ctypes.byref(dev), ordinal), "cuDeviceGet")
            self._check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev),
                        "cuDevicePrimaryCtxRetain")
            self.ctx[ordinal] = ctx
        self._check(self.lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        self.current = ordinal

    def count(self):
        n = ctypes.c_int()
        self._check(self.lib.cuDeviceGetCount(ctypes.byref(n)), "cuDeviceGetCount")
        return n.value

    def total(self, ordinal):
        dev, total = ctypes.c_int(), ctypes.c_size_t()
        self._check(self.lib.cuDeviceGet(ctypes.byref(dev), ordinal), "cuDeviceGet")
        self._check(self.lib.cuDeviceTotalMem_v2(ctypes.byref(total), dev), "cuDeviceTotalMem")
        return total.value

    def alloc(self, ordinal, size):
        """@return : the device address, or None when the device is full."""
        self.use(ordinal)
        p = ctypes.c_uint64()
        rc = self.lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(size))
        if rc == CUDA_ERROR_OUT_OF_MEMORY:
            return None
        self._check(rc, "cuMemAlloc")
        return p.value

    def free(self, ordinal, ptr):
        self.use(ordinal)
        self._check(self.lib.cuMemFree_v2(ctypes.c_uint64(ptr)), "cuMemFree")

    def launch(self, ordinal, n=1):
        self.use(ordinal)
        if self.kernel is None:
            mod, f = ctypes.c_void_p(), ctypes.c_void_p()
            self._check(self.lib.cuModuleLoadData(ctypes.byref(mod), b"fake"), "cuModuleLoadData")
            self._check(self.lib.cuModuleGetFunction(ctypes.byref(f), mod, b"fake_noop"),
                        "cuModuleGetFunction")
            self.kernel = f
        for _ in range(n):
            self._check(self.lib.cuLaunchKernel(self.kernel, 1, 1, 1, 128, 1, 1, 0, None,
                                                None, None), "cuLaunchKernel")


def get():
    global _driver
    if _driver is None:
        _driver = _Driver()
    return _driver
