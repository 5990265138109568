"""Stand-in for JAX 0.4.3x-0.7 (see ../README.md): backends initialised on
first use (jax.devices(), the first array), GPU devices answering
memory_stats() from a toy BFC pool (jax/_src/bfc.py), XLA's
RESOURCE_EXHAUSTED raised as jaxlib's XlaRuntimeError from JAX's own
calls, jax.numpy.zeros/ones and jax.jit."""
__version__ = "0.7.1+standin"

from ._src import xla_bridge  # noqa: E402
from ._src import dispatch  # noqa: E402
from . import errors  # noqa: E402,F401
from . import numpy  # noqa: E402,F401

jit = dispatch.jit
block_until_ready = dispatch.block_until_ready


def devices(backend=None):
    """The default backend's devices (the GPUs when there are any)."""
    return xla_bridge.get_backend(backend).local_devices()


def local_devices(backend=None):
    return devices(backend)


def default_backend():
    return xla_bridge.get_backend(None).platform
