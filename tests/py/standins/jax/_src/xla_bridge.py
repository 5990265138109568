"""Stand-in jax._src.xla_bridge: _backends fills on first use (jax.devices(),
the first array), as the real one does.

The GPU client reads XLA's allocator settings from the environment as
jaxlib 0.5-0.7 does (xla_client.generate_pjrt_gpu_plugin_options):
XLA_PYTHON_CLIENT_ALLOCATOR lower-cased, one of default, platform, bfc,
cuda_async (else ValueError); the memory fraction from
XLA_CLIENT_MEM_FRACTION or the deprecated XLA_PYTHON_CLIENT_MEM_FRACTION
(both set: ValueError), float(), default .75 of the device's total memory;
XLA_PYTHON_CLIENT_PREALLOCATE on unless 'false', 'False' or '0'.  A
preallocated pool is taken on every device when the client starts.

Test switches: STANDIN_JAX_DEVICES (GPUs, default 1; with the driver: the
driver's count), STANDIN_JAX_TOTAL (bytes per GPU without the driver,
default 1 GiB), STANDIN_JAX_DRIVER=1 (_driver.py).
"""
import os

from . import bfc

_backends = {}


class Device:
    platform = "gpu"
    device_kind = "NVIDIA H200 (stand-in)"

    def __init__(self, client, index, allocator):
        self.client = client
        self.id = index
        self.local_hardware_id = index
        self.allocator = allocator

    def memory_stats(self):
        return self.allocator.stats()

    def __repr__(self):
        return "CudaDevice(id=%d)" % self.id


class _CpuDevice:
    platform = "cpu"
    device_kind = "cpu"
    id = 0

    def memory_stats(self):
        return None


class _CpuClient:
    platform = "cpu"

    def local_devices(self):
        return [_CpuDevice()]


def _allocator_options():
    allocator = os.getenv("XLA_PYTHON_CLIENT_ALLOCATOR", "default").lower()
    fraction = os.getenv("XLA_CLIENT_MEM_FRACTION", "")
    deprecated = os.getenv("XLA_PYTHON_CLIENT_MEM_FRACTION", "")
    if deprecated:
        if fraction:
            raise ValueError("XLA_CLIENT_MEM_FRACTION is specified together with "
                             "XLA_PYTHON_CLIENT_MEM_FRACTION. Remove the latter one, "
                             "it is deprecated.")
        fraction = deprecated
    if allocator not in ("default", "platform", "bfc", "cuda_async"):
        raise ValueError('XLA_PYTHON_CLIENT_ALLOCATOR env var must be "default", '
                         '"platform", "bfc", or "cuda_async", got "%s"' % allocator)
    preallocate = os.getenv("XLA_PYTHON_CLIENT_PREALLOCATE", "")
    return (allocator, float(fraction) if fraction else 0.75,
            preallocate not in ("false", "False", "0"))


class _GpuClient:
    platform = "gpu"

    def __init__(self):
        allocator, fraction, preallocate = _allocator_options()
        self.driver = None
        n = int(os.environ.get("STANDIN_JAX_DEVICES", "1"))
        if os.environ.get("STANDIN_JAX_DRIVER") == "1":
            from . import _driver

            self.driver = _driver.get()
            n = self.driver.count()
        self.devices = []
        for i in range(n):
            if self.driver is not None:
                self.driver.use(i)
                total = self.driver.total(i)
            else:
                total = int(os.environ.get("STANDIN_JAX_TOTAL", str(1 << 30)))
            if allocator == "platform":
                alloc = bfc.Platform(i, total, self.driver)
            else:
                alloc = bfc.Pool(i, int(total * fraction), preallocate, self.driver)
            self.devices.append(Device(self, i, alloc))

    def local_devices(self):
        return list(self.devices)

    def launch(self, device, n=1):
        if self.driver is not None:
            self.driver.launch(device.id, n)


def backends():
    if not _backends:
        _backends["cpu"] = _CpuClient()
        _backends["cuda"] = _GpuClient()
    return _backends


def get_backend(platform=None):
    b = backends()
    return b[platform] if platform else b["cuda"]
