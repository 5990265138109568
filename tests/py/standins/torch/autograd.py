"""Stand-in torch.autograd (PyTorch 2.11): backward() runs the graph of the
tensors given.  Like PyTorch's engine, the work of a CUDA graph runs on a
thread of the engine's own, never on the caller's: a stand-in tensor's
_standin_engine callable stands for it (the test programs start a C thread
named pt_autograd_0 there)."""


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    if not isinstance(tensors, (list, tuple)):
        tensors = (tensors,)
    for t in tensors:
        engine = getattr(t, "_standin_engine", None)
        if engine is not None:
            engine()
