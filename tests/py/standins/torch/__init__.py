"""Stand-in for PyTorch 2.11: only what cuprobe's companion calls (see
../README.md).  Like the real package, importing torch imports torch.cuda
part-way through, and more modules after it."""
__version__ = "2.11.0+standin"

from . import version  # noqa: E402,F401
from . import _C  # noqa: E402,F401
from . import cuda  # noqa: E402,F401
from . import _after_cuda  # noqa: E402,F401  (imports after torch.cuda)
from . import distributed  # noqa: E402,F401
from . import autograd  # noqa: E402,F401
from . import utils  # noqa: E402,F401
from .utils import data as _data  # noqa: E402,F401

OutOfMemoryError = cuda.OutOfMemoryError


class AcceleratorError(RuntimeError):
    """PyTorch 2.8+: what a failed CUDA runtime call raises."""


class Tensor:
    """A tensor that holds nothing: device, and what its backward pass does
    (_standin_engine, see torch.autograd)."""

    def __init__(self, device="cpu", engine=None):
        self.device = device
        self._standin_engine = engine

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        # torch/_tensor.py: Tensor.backward looks torch.autograd.backward up
        # at each call.
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def empty(*size, device=None):
    """A tensor; on a CUDA device, CUDA is initialised first (and refused in
    a child forked after the parent initialised it)."""
    if device is not None and str(device).startswith("cuda"):
        cuda._lazy_init()
    return Tensor(device=str(device or "cpu"))
