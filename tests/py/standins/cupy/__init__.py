"""Stand-in for CuPy 13/14's default memory pool (see ../README.md): whole
chunks reused first-fit (no splitting), memory hooks called as CuPy's
SingleDeviceMemoryPool calls them (cupy.cuda.memory_hook)."""
import os

from . import cuda
from .cuda import memory_hook

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


def _driver_chunk(size):
    """STANDIN_CUPY_DRIVER=1: a new chunk taken from the driver (cuMemAlloc
    on the current context), as CuPy's pool takes it; else None."""
    if os.environ.get("STANDIN_CUPY_DRIVER") != "1":
        return None
    import _standin_driver

    return _standin_driver.alloc(size, "chunk")


def _hooks():
    return memory_hook.get_memory_hooks().values() if memory_hook._has_memory_hooks() else ()


class MemoryPool:
    def __init__(self):
        self._used = {}
        self._free = []          # (size, ptr) of free chunks
        self._limit = 0
        self._next = 0x7E0000000000

    def _alloc(self, size):
        for hook in _hooks():
            hook.alloc_preprocess(device_id=0, mem_size=size)
        ptr = _driver_chunk(size)
        if ptr is None:
            ptr = self._next
            self._next += size
        for hook in _hooks():
            hook.alloc_postprocess(device_id=0, mem_size=size, mem_ptr=ptr)
        return ptr

    def malloc(self, nbytes):
        _use_cuda()
        size = (nbytes + 511) // 512 * 512
        hooks = list(_hooks())
        for hook in hooks:
            hook.malloc_preprocess(device_id=0, size=nbytes, mem_size=size)
        ptr = 0
        try:
            for i, (s, p) in enumerate(self._free):
                if s >= size:
                    self._free.pop(i)
                    size, ptr = s, p
                    break
            else:
                ptr = self._alloc(size)
            self._used[ptr] = size
        finally:
            for hook in hooks:
                hook.malloc_postprocess(device_id=0, size=nbytes, mem_size=size, mem_ptr=ptr,
                                        pmem_id=ptr)
        return ptr

    def free(self, ptr):
        size = self._used[ptr]
        hooks = list(_hooks())
        for hook in hooks:
            hook.free_preprocess(device_id=0, mem_size=size, mem_ptr=ptr, pmem_id=ptr)
        try:
            self._free.append((self._used.pop(ptr), ptr))
        finally:
            for hook in hooks:
                hook.free_postprocess(device_id=0, mem_size=size, mem_ptr=ptr, pmem_id=ptr)

    def used_bytes(self):
        return sum(self._used.values())

    def free_bytes(self):
        return sum(s for s, _ in self._free)

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
