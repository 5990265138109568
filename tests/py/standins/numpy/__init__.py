"""Stand-in numpy: the little of NumPy 2 that the accuracy suite's numba
workload (tests/gpu/accuracy/numba_unpinned.py) and the stand-in numba
use: float32 and byte, dtype(x).itemsize, empty(), ndarray(shape, dtype,
buffer=), random.default_rng(seed).random(shape, dtype) (zeros: the
values do not matter on the fake driver), and arrays with shape, dtype,
nbytes, size, ctypes.data, a row or a slice as a view, `a[...] = b` and
sum().  An array's memory is an ordinary (pageable) ctypes buffer unless
it was given one (numba's pinned_array)."""
import ctypes

__version__ = "2.0.0+standin"


class float32(float):
    itemsize = 4
    _ctype = ctypes.c_float


class byte(int):
    itemsize = 1
    _ctype = ctypes.c_byte


class dtype:
    def __init__(self, t):
        self.type = t.type if isinstance(t, dtype) else t
        self.itemsize = self.type.itemsize


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class _Ctypes:
    def __init__(self, address):
        self.data = address


class ndarray:
    def __init__(self, shape, dtype=float32, buffer=None, _base=None, _offset=0):
        self.shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        self.dtype = globals()["dtype"](dtype).type
        self.size = _prod(self.shape)
        self.nbytes = self.size * self.dtype.itemsize
        if _base is None:
            _base = buffer if buffer is not None else ctypes.create_string_buffer(self.nbytes)
        self._base = _base              # keeps the memory alive
        self.ctypes = _Ctypes(ctypes.addressof(_base) + _offset)

    def _view(self, shape, offset):
        return ndarray(shape, self.dtype, _base=self._base,
                       _offset=self.ctypes.data - ctypes.addressof(self._base) + offset)

    def __getitem__(self, key):
        if key is Ellipsis:
            return self
        if isinstance(key, int) and len(self.shape) > 1:
            row = self.nbytes // self.shape[0]
            return self._view(self.shape[1:], (key % self.shape[0]) * row)
        if isinstance(key, slice) and len(self.shape) == 1:
            start, stop, step = key.indices(self.shape[0])
            if step == 1:
                return self._view((max(stop - start, 0),), start * self.dtype.itemsize)
        raise NotImplementedError("stand-in numpy: index %r" % (key,))

    def __setitem__(self, key, value):
        if key is not Ellipsis or not isinstance(value, ndarray) or value.nbytes != self.nbytes:
            raise NotImplementedError("stand-in numpy: a[%r] = %r" % (key, value))
        ctypes.memmove(self.ctypes.data, value.ctypes.data, self.nbytes)

    def sum(self):
        return float(sum((self.dtype._ctype * self.size).from_address(self.ctypes.data)))


def empty(shape, dtype=float32):
    return ndarray(shape, dtype)


def vstack(arrays):
    raise NotImplementedError("stand-in numpy: vstack")


class _Generator:
    def random(self, shape, dtype=float32):
        return ndarray(shape, dtype)


class random:
    @staticmethod
    def default_rng(seed=None):
        return _Generator()
