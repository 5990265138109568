"""What the stand-in frameworks share: memory taken from the driver as the
real ones take it (cuMemAlloc on the current context), so that its address
is one the trace has."""
import ctypes


def alloc(size, what, stream_ordered=False):
    """size bytes from libcuda's cuMemAlloc_v2, or cuMemAllocAsync on the
    null stream when stream_ordered.  @return : the address; raises
    RuntimeError naming `what` when the driver refuses."""
    p = ctypes.c_uint64()
    cuda = ctypes.CDLL("libcuda.so.1")
    if stream_ordered:
        rc = cuda.cuMemAllocAsync(ctypes.byref(p), ctypes.c_size_t(size), None)
    else:
        rc = cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(size))
    if rc != 0:
        raise RuntimeError("stand-in: cuMemAlloc of a %s failed: %d" % (what, rc))
    return p.value


def free(address):
    """cuMemFree_v2 of address."""
    ctypes.CDLL("libcuda.so.1").cuMemFree_v2(ctypes.c_uint64(address))


def free_async(address):
    """cuMemFreeAsync of address on the null stream."""
    ctypes.CDLL("libcuda.so.1").cuMemFreeAsync(ctypes.c_uint64(address), None)
