"""Stand-in torch.cuda, mirroring PyTorch 2.11's lazy initialisation:
_lazy_call() queues callables until _lazy_init() runs them (with
_tls.is_initializing set, so re-entrant _lazy_init() calls return), and
is_initialized() stays False until every queued call returned."""
import os
import threading
import traceback

import torch

_initialized = False
_in_bad_fork = False
_tls = threading.local()
_initialization_lock = threading.Lock()
_queued_calls = []
# Who initialised "CUDA": "program" or "oom_observer" (a companion bug).
_standin_init_source = None


class OutOfMemoryError(RuntimeError):
    pass


class DeferredCudaCallError(Exception):
    pass


def is_available():
    return torch.version.cuda is not None


def is_initialized():
    return _initialized and not _in_bad_fork


def _after_fork():
    # PyTorch 2.11 (torch/cuda/__init__.py): a child forked after CUDA was
    # initialised may not initialise it again.
    global _initialized, _in_bad_fork
    if _initialized:
        _initialized = False
        _in_bad_fork = True


os.register_at_fork(after_in_child=_after_fork)


def _lazy_call(callable, **kwargs):
    with _initialization_lock:
        if is_initialized():
            callable()
        else:
            _queued_calls.append((callable, traceback.format_stack()))


def _lazy_init(_source="program"):
    global _initialized, _standin_init_source
    if is_initialized() or hasattr(_tls, "is_initializing"):
        return
    if torch.version.cuda is None:
        # PyTorch's own check in torch/cuda/__init__.py:_lazy_init.
        raise AssertionError("Torch not compiled with CUDA enabled")
    with _initialization_lock:
        if is_initialized():
            return
        if _in_bad_fork:
            raise RuntimeError(
                "Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
                "multiprocessing, you must use the 'spawn' start method")
        _standin_init_source = _source
        lib = os.environ.get("STANDIN_LIBCUDA")
        if lib:
            import ctypes

            ctypes.CDLL(lib)
        _tls.is_initializing = True
        try:
            for queued_call, orig_traceback in _queued_calls:
                try:
                    queued_call()
                except Exception as e:
                    raise DeferredCudaCallError(
                        "CUDA call failed lazily at initialization with error: %s\n%s"
                        % (e, "".join(orig_traceback))) from e
        finally:
            delattr(_tls, "is_initializing")
        _initialized = True


def init():
    _lazy_init()


def device_count():
    return int(os.environ.get("STANDIN_TORCH_DEVICES", "1"))


def current_device():
    _lazy_init()
    return 0


def set_device(device):
    """PyTorch 2.11: cudaSetDevice through c10::cuda::SetDevice; an ordinal
    that is not visible raises the runtime's error with C10_CUDA_CHECK's
    text."""
    _lazy_init()
    device = int(str(device).split(":")[-1])
    if not 0 <= device < device_count():
        raise torch.AcceleratorError(
            "CUDA error: invalid device ordinal\n"
            "CUDA kernel errors might be asynchronously reported at some other API call, so "
            "the stacktrace below might be incorrect.\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
            "Search for `cudaErrorInvalidDevice' in "
            "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more "
            "information.\n")


def get_arch_list():
    if not is_available():
        return []
    return torch._C._cuda_getArchFlags().split()


def get_allocator_backend():
    return torch._C._cuda_getAllocatorBackend()


from . import memory  # noqa: E402
from .memory import (  # noqa: E402,F401
    empty_cache, memory_stats, memory_stats_as_nested_dict, _standin_alloc, _standin_free,
)

if os.environ.get("STANDIN_TORCH_NO_LAZY_CALL") == "1":
    # An older or unusual torch without _lazy_call.
    del _lazy_call
