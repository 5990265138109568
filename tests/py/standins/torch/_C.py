"""Stand-in torch._C: the CUDA allocator bindings the companion calls."""
import os

_oom_observers = []
_history_enabled = os.environ.get("STANDIN_TORCH_HISTORY") == "1"


def _cuda_attach_out_of_memory_observer(observer):
    # PyTorch 2.11 calls at::globalContext().lazyInitDevice(CUDA) here:
    # attaching initialises CUDA when nobody did yet.
    import torch.cuda

    torch.cuda._lazy_init(_source="oom_observer")
    if _cuda_getAllocatorBackend() == "cudaMallocAsync":
        raise RuntimeError("cudaMallocAsync does not yet support attachOutOfMemoryObserver. If "
                           "you need it, please file an issue describing your use case.")
    _oom_observers.append(observer)


def _cuda_isHistoryEnabled():
    return _history_enabled


def _cuda_record_memory_history(enabled, context, stacks, max_entries, clear_history=False,
                                compile_context=False, global_record_annotations=False,
                                skip_actions=()):
    """PyTorch 2.11's torch/csrc/cuda/memory_snapshot.cpp: the options are
    checked, CUDA is initialised, and the allocator records (or stops
    recording) the Python stack of each allocation; the cudaMallocAsync
    backend refuses."""
    global _history_enabled
    import torch.cuda
    from torch.cuda import memory

    if enabled is not None and enabled not in ("state", "all"):
        raise RuntimeError("expected state to be 'state', 'all', or None")
    if context is not None and context not in ("state", "alloc", "all"):
        raise RuntimeError("expected context to be 'state', 'alloc', 'all', or None")
    if stacks not in ("python", "all"):
        raise RuntimeError("expected stacks to be 'python', or 'all'")
    torch.cuda._lazy_init(_source="record_memory_history")
    if os.environ.get("STANDIN_TORCH_FAIL") == "history":
        raise RuntimeError("stand-in history failure")
    if _cuda_getAllocatorBackend() == "cudaMallocAsync":
        raise RuntimeError("cudaMallocAsync does not yet support recordHistory. If you need "
                           "it, please file an issue describing your use case.")
    _history_enabled = enabled is not None
    memory._standin_record_stacks = enabled is not None and context is not None


def _cuda_getArchFlags():
    return "sm_80 sm_86 sm_90 sm_100 sm_120"


def _cuda_getAllocatorBackend():
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    return "cudaMallocAsync" if "backend:cudaMallocAsync" in conf else "native"
