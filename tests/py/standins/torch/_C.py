"""Stand-in torch._C: the CUDA allocator bindings the companion calls."""
import os

_oom_observers = []
_history_enabled = os.environ.get("STANDIN_TORCH_HISTORY") == "1"


def _cuda_attach_out_of_memory_observer(observer):
    # PyTorch 2.11 calls at::globalContext().lazyInitDevice(CUDA) here:
    # attaching initialises CUDA when nobody did yet.
    import torch.cuda

    torch.cuda._lazy_init(_source="oom_observer")
    _oom_observers.append(observer)


def _cuda_isHistoryEnabled():
    return _history_enabled


def _cuda_getArchFlags():
    return "sm_80 sm_86 sm_90 sm_100 sm_120"


def _cuda_getAllocatorBackend():
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    return "cudaMallocAsync" if "backend:cudaMallocAsync" in conf else "native"
