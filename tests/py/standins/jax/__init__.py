"""Stand-in for JAX's backend bookkeeping (see ../README.md): devices()
initialises jax._src.xla_bridge._backends, as the real one does."""
__version__ = "0.11.2+standin"

from ._src import xla_bridge  # noqa: E402


def devices():
    return xla_bridge.backends()["cuda"].local_devices()
