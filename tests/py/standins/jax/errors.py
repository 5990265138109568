"""Stand-in jax.errors: JaxRuntimeError is jaxlib's XlaRuntimeError."""
from jaxlib.xla_extension import XlaRuntimeError as JaxRuntimeError  # noqa: F401
