"""Stand-in jaxlib (see ../README.md): the package of XLA's runtime."""
__version__ = "0.7.1+standin"
