"""Stand-in for numba 0.61 with numba-cuda 0.15 on NVIDIA's CUDA Python
bindings (cuda-bindings 13.x): see ../README.md."""
__version__ = "0.61.0+standin"
