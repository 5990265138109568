"""Stand-in torch.version (PyTorch 2.11 built for CUDA 13.0)."""
__version__ = "2.11.0+standin"
import os as _os

# STANDIN_TORCH_CUDA= (empty): a CPU-only build, torch.version.cuda is None.
cuda = _os.environ.get("STANDIN_TORCH_CUDA", "13.0") or None
hip = None
git_version = "standin"
