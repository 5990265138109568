"""Stand-in for PyTorch 2.11: only what cuprobe's companion calls (see
../README.md).  Like the real package, importing torch imports torch.cuda
part-way through, and more modules after it."""
__version__ = "2.11.0+standin"

from . import version  # noqa: E402,F401
from . import _C  # noqa: E402,F401
from . import cuda  # noqa: E402,F401
from . import _after_cuda  # noqa: E402,F401  (imports after torch.cuda)
from . import distributed  # noqa: E402,F401

OutOfMemoryError = cuda.OutOfMemoryError
