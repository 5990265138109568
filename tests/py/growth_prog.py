"""growth_prog.py SCENARIO LIB - memory growth inside PyTorch's caching
allocator the way real training loops show it to the driver, for
tests/sh/framework_growth.sh.

Runs under the shim on the fake driver with the stand-in torch of
tests/py/standins (STANDIN_TORCH_DRIVER=1: its segments come from
cuMemAlloc), installed by the test under a site-packages directory as pip
would.  LIB is tests/py/cthread.c built as a library: its pt_autograd_0
thread stands for the autograd engine's thread, which runs every backward
pass's kernels and never runs Python.  No step reads anything back: the
kernels of a thread that records no driver event reach the trace only as
launch counts, every 4096 launches and at exit.  Lines the test looks up
end with "# MARK".

Scenarios (the planted ones keep memory at a line marked KEEP):
  evalloss    the backward pass only launches (its thread is silent); the
              main thread refills the pool at the optimizer step and keeps
              an evaluation's output every other step (a validation loss
              summed as a tensor, which keeps its graph);
  evalclean   the same, nothing kept: the pool is filled in the first
              step and the rest of the run takes nothing from the driver;
  backward    the main thread only launches; the backward pass allocates
              what the run keeps, on the autograd thread, from the driver
              (not through the stand-in allocator: PyTorch's pool does not
              grow);
  graphs      a new graph per step: its activations take a new, larger
              block each step, which stays in the pool's cache (a graph's
              private pool), and its static output is kept: the cache grows
              far more than the live tensors;
  concat      every step's output concatenated into a new, larger tensor
              (the previous one freed), moved to the host at the end: the
              cache grows, the live tensor too, and none is left at exit;
  teardown    an output kept every step; at the end the epoch's accuracy
              is read back, the list cleared and the cache emptied
              (torch.cuda.empty_cache()), as Lightning's teardown does;
  predict     predictions concatenated into one tensor 4 MiB larger each
              step (up to 80 MiB; the cache keeps every smaller one), moved
              to the host before the program returns: the exit's sample
              sees no live tensor, the last one before it sees 80 MiB;
  slowexit    backward, then an interpreter teardown of a second after the
              companion's exit record (the launch counts written at exit
              come that much after the program's last step).
"""
import atexit
import ctypes
import sys
import time


def _slow_teardown():
    """Registered before torch's import, so that it runs after the
    companion's exit handler (atexit runs the last registered first)."""
    if sys.argv[1:2] == ["slowexit"]:
        time.sleep(1.0)


atexit.register(_slow_teardown)
import torch  # noqa: E402  (after the handler above)

CUDA = ctypes.CDLL("libcuda.so.1")
MiB = 1 << 20
STEPS = 60
alloc = torch.cuda._standin_alloc
free = torch.cuda._standin_free


class Run:
    """The context, the fake driver's no-op kernel and the engine thread."""

    def __init__(self, lib):
        dev, self.ctx = ctypes.c_int(), ctypes.c_void_p()
        mod, self.fn = ctypes.c_void_p(), ctypes.c_void_p()
        assert CUDA.cuInit(0) == 0
        assert CUDA.cuDeviceGet(ctypes.byref(dev), 0) == 0
        assert CUDA.cuCtxCreate_v2(ctypes.byref(self.ctx), 0, dev) == 0
        assert CUDA.cuModuleLoadData(ctypes.byref(mod), b"fake") == 0
        assert CUDA.cuModuleGetFunction(ctypes.byref(self.fn), mod, b"fake_noop") == 0
        self.engine = ctypes.CDLL(lib)
        self.engine.cpt_autograd_step.argtypes = (ctypes.c_void_p, ctypes.c_void_p,
                                                  ctypes.c_int, ctypes.c_size_t)
        torch.cuda.init()

    def launch(self, n):
        for _ in range(n):
            assert CUDA.cuLaunchKernel(self.fn, 1, 1, 1, 128, 1, 1, 0, None, None, None) == 0

    def backward(self, launches, keep_bytes=0):
        """loss.backward(): the engine's thread launches, and allocates
        keep_bytes that stay."""
        def work():
            assert self.engine.cpt_autograd_step(self.ctx, self.fn, launches, keep_bytes) == 0

        torch.Tensor("cuda:0", engine=work).backward()  # BACKWARD CALL


def evalloss(run, keep):
    weights = alloc(32 * MiB)
    kept = []
    for step in range(STEPS):
        act = alloc(12 * MiB)                   # the forward pass
        run.launch(8)
        run.backward(8)
        free(act)
        tmp = alloc(16 * MiB)                   # the optimizer's temporaries
        run.launch(4)
        free(tmp)
        if step % 2 == 0:
            out = alloc(6 * MiB)  # EVAL KEEP
            if keep:
                kept.append(out)
            else:
                free(out)
        time.sleep(0.01)
    assert CUDA.cuCtxSynchronize() == 0         # float(val_total): the sum, read back
    return weights, kept


def backward(run):
    for _ in range(STEPS):
        run.launch(8)                           # the forward pass
        run.backward(8, 8 * MiB)
        time.sleep(0.01)


def graphs(run):
    kept = []
    for step in range(STEPS * 2 // 5):          # the cache holds every size: 0.8 GiB
        static_in = alloc(1 * MiB)
        act = alloc((10 + 2 * step) * MiB)      # the graph's own pool, used by no other
        run.launch(8)
        kept.append((static_in, alloc(2 * MiB)))  # GRAPHS KEEP
        free(act)
        run.launch(4)
        time.sleep(0.09)                        # attribution samples through the growth
    return kept


def gather(run, steps, mib_per_step):
    """concat and predict: every step's output concatenated into a new
    tensor mib_per_step larger (the previous one freed), moved to the host
    at the end.  A segment sample, and an attribution sample, per step."""
    total = None
    for step in range(steps):
        run.launch(8)
        out = alloc((step + 2) * mib_per_step * MiB)  # GATHER KEEP
        if total is not None:
            free(total)
        total = out
        time.sleep(0.06)
    free(total)                                 # the predictions, moved to the host
    run.launch(8)


def concat(run):
    gather(run, STEPS * 3 // 5, 1)              # 2 to 37 MiB; the cache holds 0.7 GiB


def predict(run):
    gather(run, 19, 4)                          # 8 to 80 MiB


def teardown(run):
    kept = []
    for _ in range(STEPS):
        act = alloc(12 * MiB)
        run.launch(8)
        kept.append(alloc(4 * MiB))  # TEARDOWN KEEP
        free(act)
        time.sleep(0.01)
    assert CUDA.cuCtxSynchronize() == 0         # the epoch's accuracy, read back
    for k in kept:
        free(k)
    torch.cuda.empty_cache()


def main():
    scenario, lib = sys.argv[1], sys.argv[2]
    run = Run(lib)
    if scenario in ("evalloss", "evalclean"):
        evalloss(run, scenario == "evalloss")
    else:
        {"backward": backward, "slowexit": backward, "graphs": graphs, "concat": concat,
         "predict": predict,
         "teardown": teardown}[scenario](run)
    print("steps done")


if __name__ == "__main__":
    main()
