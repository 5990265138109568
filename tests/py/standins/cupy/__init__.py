"""Stand-in for CuPy 13/14's default memory pool (see ../README.md)."""
import os

__version__ = "14.0.0+standin"

_cuda_loaded = False


def _use_cuda():
    global _cuda_loaded
    if not _cuda_loaded:
        lib = os.environ.get("STANDIN_LIBCUDA")
        if lib:
            import ctypes

            ctypes.CDLL(lib)
        _cuda_loaded = True


class MemoryPool:
    def __init__(self):
        self._used = {}
        self._free = []
        self._limit = 0

    def malloc(self, nbytes):
        _use_cuda()
        size = (nbytes + 511) // 512 * 512
        for i, s in enumerate(self._free):
            if s >= size:
                self._free.pop(i)
                size = s
                break
        ptr = 0x7E0000000000 + sum(self._used.values()) + sum(self._free) + len(self._used)
        self._used[ptr] = size
        return ptr

    def free(self, ptr):
        self._free.append(self._used.pop(ptr))

    def used_bytes(self):
        return sum(self._used.values())

    def free_bytes(self):
        return sum(self._free)

    def total_bytes(self):
        return self.used_bytes() + self.free_bytes()

    def n_free_blocks(self):
        return len(self._free)

    def get_limit(self):
        return self._limit


class PinnedMemoryPool:
    def n_free_blocks(self):
        return 0


_default_pool = MemoryPool()
_default_pinned_pool = PinnedMemoryPool()


def get_default_memory_pool():
    return _default_pool


def get_default_pinned_memory_pool():
    return _default_pinned_pool
