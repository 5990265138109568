"""Stand-in numba.cuda.cudadrv.driver on NVIDIA's CUDA Python bindings.

Like cuda-bindings 13.x, the first use looks up every driver function the
bindings know through cuGetProcAddress_v2 at the bindings' own CUDA
version (STANDIN_BINDINGS_VERSION, default 13030: newer than the fake
driver's 13000), takes the pointers it is given, and never asks again for
one it was refused; a call of a refused function raises 'Function "cuX"
not found' without reaching the driver.  Then numba makes the primary
context of device 0 current.  Its kernels are PTX at the ISA of the NVVM
it ships (STANDIN_NUMBA_PTX, e.g. "9.1"; unset: an image any driver
loads), JIT-compiled by the driver when first launched.
"""
import ctypes
import os

# What the stand-in calls, with its ctypes prototype, and functions newer
# than the fake driver (not found there) that the bindings also look up.
_PROTOS = {
    "cuInit": (ctypes.c_uint,),
    "cuDeviceGet": (ctypes.POINTER(ctypes.c_int), ctypes.c_int),
    "cuDevicePrimaryCtxRetain": (ctypes.POINTER(ctypes.c_void_p), ctypes.c_int),
    "cuCtxSetCurrent": (ctypes.c_void_p,),
    "cuCtxSynchronize": (ctypes.c_void_p,),     # CUDA 13's cuCtxSynchronize_v2(ctx)
    "cuMemAlloc": (ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t),
    "cuModuleLoadData": (ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p),
    "cuModuleGetFunction": (ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p),
    "cuLaunchKernel": (ctypes.c_void_p,) + (ctypes.c_uint,) * 7 + (ctypes.c_void_p,) * 3,
    "cuMemHostAlloc": (ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_uint),
    "cuStreamCreate": (ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint),
    "cuStreamSynchronize": (ctypes.c_void_p,),
    "cuMemcpyHtoD": (ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t),
    "cuMemcpyDtoH": (ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t),
    "cuMemcpyHtoDAsync": (ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p),
    "cuMemcpyDtoHAsync": (ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p),
}
_NEWER = ("cuStreamBeginRecaptureToGraph", "cuGraphNodeGetContainingGraph",
          "cuDeviceGetHostAtomicCapabilities")

# The few CUresult names the stand-in's failures need (the bindings' enum).
_NAMES = {101: "CUDA_ERROR_INVALID_DEVICE", 222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"}

_driver = None


class CudaAPIError(Exception):
    """numba.cuda.cudadrv.driver.CudaAPIError: str() is "[code] message"."""

    def __init__(self, code, msg):
        super().__init__(code, msg)
        self.code, self.msg = code, msg

    def __str__(self):
        return "[%s] %s" % (self.code, self.msg)


class _Driver:
    def __init__(self):
        lib = ctypes.CDLL("libcuda.so.1")
        gpa = lib.cuGetProcAddress_v2
        gpa.argtypes = (ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                        ctypes.c_uint64, ctypes.POINTER(ctypes.c_int))
        version = int(os.environ.get("STANDIN_BINDINGS_VERSION", "13030"))
        self.fn = {}
        for name in tuple(_PROTOS) + _NEWER:
            p, status = ctypes.c_void_p(), ctypes.c_int()
            if gpa(name.encode(), ctypes.byref(p), version, 0, ctypes.byref(status)) == 0 \
                    and p.value:
                proto = ctypes.CFUNCTYPE(ctypes.c_int, *_PROTOS.get(name, ()))
                self.fn[name] = proto(p.value)
        self.call("cuInit", 0)
        dev, ctx = ctypes.c_int(), ctypes.c_void_p()
        self.call("cuDeviceGet", ctypes.byref(dev), 0)
        self.call("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
        self.call("cuCtxSetCurrent", ctx)
        self.kernel = None

    def call(self, name, *args):
        fn = self.fn.get(name)
        if fn is None:
            raise RuntimeError('Function "%s" not found' % name)
        rc = fn(*args)
        if rc != 0:
            raise CudaAPIError(rc, "Call to %s results in %s"
                               % (name, _NAMES.get(rc, "CUDA_ERROR_%d" % rc)))

    def alloc(self, nbytes):
        p = ctypes.c_uint64()
        self.call("cuMemAlloc", ctypes.byref(p), nbytes)
        return p.value

    def host_alloc(self, nbytes):
        """Pinned host memory (numba's cuda.pinned_array: cuMemHostAlloc)."""
        p = ctypes.c_void_p()
        self.call("cuMemHostAlloc", ctypes.byref(p), nbytes, 0)
        return p.value

    def stream(self):
        s = ctypes.c_void_p()
        self.call("cuStreamCreate", ctypes.byref(s), 0)
        return s.value

    def stream_synchronize(self, handle):
        self.call("cuStreamSynchronize", handle)

    def host_to_device(self, dst, src, nbytes, stream=None):
        """As numba-cuda's driver.host_to_device: the Async call with a stream."""
        if stream:
            self.call("cuMemcpyHtoDAsync", dst, src, nbytes, stream)
        else:
            self.call("cuMemcpyHtoD", dst, src, nbytes)

    def device_to_host(self, dst, src, nbytes, stream=None):
        """As numba-cuda's driver.device_to_host: the Async call with a stream."""
        if stream:
            self.call("cuMemcpyDtoHAsync", dst, src, nbytes, stream)
        else:
            self.call("cuMemcpyDtoH", dst, src, nbytes)

    def launch(self, n, grid=1, block=128, stream=None):
        if self.kernel is None:
            mod, f = ctypes.c_void_p(), ctypes.c_void_p()
            isa = os.environ.get("STANDIN_NUMBA_PTX")
            image = ("//\n// Generated by NVIDIA NVVM Compiler\n.version %s\n.target sm_90\n"
                     % isa).encode() if isa else b"fake"
            self.call("cuModuleLoadData", ctypes.byref(mod), image)
            self.call("cuModuleGetFunction", ctypes.byref(f), mod, b"fake_noop")
            self.kernel = f
        for _ in range(n):
            self.call("cuLaunchKernel", self.kernel, grid, 1, 1, block, 1, 1, 0, stream, None,
                      None)

    def synchronize(self):
        self.call("cuCtxSynchronize", None)


def get():
    global _driver
    if _driver is None:
        _driver = _Driver()
    return _driver
