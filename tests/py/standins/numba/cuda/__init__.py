"""Stand-in numba.cuda: device arrays and a kernel launch, on the driver
through the bindings' function pointers (cudadrv/driver.py)."""
from .cudadrv import driver as _driver


class DeviceNDArray:
    def __init__(self, nbytes):
        self.nbytes = nbytes
        self.device_ctypes_pointer = _driver.get().alloc(nbytes)


def device_array(nbytes):
    return DeviceNDArray(nbytes)


def synchronize():
    _driver.get().synchronize()


def _standin_launch(n=1):
    """n launches of the fake driver's fake_noop kernel (a @cuda.jit
    function's launches)."""
    _driver.get().launch(n)
