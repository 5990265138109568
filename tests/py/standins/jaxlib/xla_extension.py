"""Stand-in jaxlib.xla_extension: the exception type XLA's C++ runtime
raises (jax.errors.JaxRuntimeError is the same class)."""


class XlaRuntimeError(RuntimeError):
    """An XLA status other than OK, its text "CODE: message"."""
