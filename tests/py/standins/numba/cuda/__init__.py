"""Stand-in numba.cuda: device arrays, pinned host arrays, streams, copies
and kernel launches, on the driver through the bindings' function pointers
(cudadrv/driver.py), with numba-cuda's semantics where cuprobe sees them:
a device array made on a stream copies on that stream when no other is
given (DeviceNDArrayBase._default_stream), asynchronously, and a copy to
the host with no array given lands in a new NumPy array (pageable memory).
Host arrays are NumPy's (the stand-in numpy where the real one is absent)."""
import ctypes

from .cudadrv import driver as _driver


def _np():
    import numpy
    return numpy


def _nbytes(shape, dtype):
    n = _np().dtype(dtype).itemsize
    for d in (shape if isinstance(shape, tuple) else (shape,)):
        n *= d
    return n


def _host_address(ary):
    """The address of a NumPy array's data (numba's host_pointer())."""
    return ary.ctypes.data


class Stream:
    def __init__(self):
        self.handle = _driver.get().stream()

    def synchronize(self):
        _driver.get().stream_synchronize(self.handle)


class DeviceNDArray:
    """nbytes of device memory; shape and dtype when made by
    device_array(shape, dtype)."""

    def __init__(self, nbytes, shape=None, dtype=None, stream=0):
        self.nbytes = nbytes
        self.shape = shape if shape is not None else (nbytes,)
        self.dtype = dtype
        self.stream = stream
        self.device_ctypes_pointer = _driver.get().alloc(nbytes)

    def _default_stream(self, stream):
        return stream if stream else self.stream

    def copy_to_device(self, ary, stream=0):
        stream = self._default_stream(stream)
        _driver.get().host_to_device(self.device_ctypes_pointer, _host_address(ary),
                                     self.nbytes, stream.handle if stream else None)

    def copy_to_host(self, ary=None, stream=0):
        stream = self._default_stream(stream)
        np = _np()
        host = ary if ary is not None else np.empty(self.shape, dtype=self.dtype or np.byte)
        _driver.get().device_to_host(_host_address(host), self.device_ctypes_pointer,
                                     self.nbytes, stream.handle if stream else None)
        return host


def device_array(shape, dtype=None, stream=0):
    """numba's device_array(shape, dtype, stream); without a dtype (the
    older stand-in's form) shape is the size in bytes."""
    if dtype is None:
        return DeviceNDArray(shape)
    return DeviceNDArray(_nbytes(shape, dtype), shape, dtype, stream)


def pinned_array(shape, dtype):
    """A NumPy array in page-locked memory (cuMemHostAlloc), as numba's."""
    nbytes = _nbytes(shape, dtype)
    buf = (ctypes.c_byte * nbytes).from_address(_driver.get().host_alloc(nbytes))
    return _np().ndarray(shape, dtype=dtype, buffer=buf)


def stream():
    return Stream()


def synchronize():
    _driver.get().synchronize()


class _Kernel:
    """A @cuda.jit function: kernel[griddim, blockdim, stream](args)
    launches the fake driver's fake_noop on that stream; the Python body
    never runs."""

    def __init__(self, fn):
        self.fn = fn

    def __getitem__(self, config):
        grid, block = config[0], config[1]
        s = config[2] if len(config) > 2 else 0

        def launch(*args):
            _driver.get().launch(1, grid, block, s.handle if s else None)
        return launch


def jit(fn):
    return _Kernel(fn)


def grid(ndim):
    raise NotImplementedError("stand-in: kernels do not run on the host")


gridsize = grid


def _standin_launch(n=1):
    """n launches of the fake driver's fake_noop kernel (a @cuda.jit
    function's launches)."""
    _driver.get().launch(n)
