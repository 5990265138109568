"""Stand-in cupy.cuda: what the companion reaches of it (see ../../README.md)."""
from . import memory_hook  # noqa: F401
from .memory_hook import MemoryHook  # noqa: F401
