"""What the stand-in frameworks share: memory taken from the driver as the
real ones take it (cuMemAlloc on the current context), so that its address
is one the trace has."""
import ctypes


def alloc(size, what):
    """size bytes from libcuda's cuMemAlloc_v2.  @return : the address;
    raises RuntimeError naming `what` when the driver refuses."""
    p = ctypes.c_uint64()
    rc = ctypes.CDLL("libcuda.so.1").cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(size))
    if rc != 0:
        raise RuntimeError("stand-in: cuMemAlloc of a %s failed: %d" % (what, rc))
    return p.value
