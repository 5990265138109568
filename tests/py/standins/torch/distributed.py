"""Stand-in torch.distributed: only the exception types a failed collective
raises (PyTorch 2.11: torch.distributed.DistBackendError, a RuntimeError)."""


class DistError(RuntimeError):
    pass


class DistBackendError(DistError):
    pass
