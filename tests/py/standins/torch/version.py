"""Stand-in torch.version (PyTorch 2.11 built for CUDA 13.0)."""
__version__ = "2.11.0+standin"
cuda = "13.0"
hip = None
git_version = "standin"
