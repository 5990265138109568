"""Which Python frames are the program's own code: the frame the
companion's records name as "the user's line" (the exception a run died of,
the line that called backward()).  Imports nothing of the companion.
"""
import os

# Top-level packages whose frames are never "the user's line".
LIBRARY_PACKAGES = frozenset((
    "torch", "torchvision", "torchaudio", "torchtext", "jax", "jaxlib", "flax", "optax",
    "cupy", "cupyx", "triton", "numpy", "scipy", "transformers", "accelerate",
    "deepspeed", "lightning", "pytorch_lightning", "apex", "xformers", "vllm",
    "megatron", "timm", "diffusers", "datasets", "tensorflow", "keras", "nccl",
    "cuprobe_companion", "sitecustomize", "runpy", "threading", "importlib",
    "concurrent", "multiprocessing", "asyncio", "unittest", "pdb", "bdb",
))


def library_dirs():
    """The standard library's and installed packages' directories."""
    dirs = []
    try:
        import sysconfig

        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            path = sysconfig.get_paths().get(key)
            if path:
                dirs.append(os.path.realpath(path) + os.sep)
    except Exception:
        pass
    return tuple(dirs)


def is_user_frame(filename, module, libdirs):
    """A frame of the program itself: not the standard library, not an
    installed package, not a known framework (by its module name, so that
    a framework run from a source checkout is still a library)."""
    top = (module or "").split(".", 1)[0]
    if top in LIBRARY_PACKAGES:
        return False
    if not filename or filename.startswith("<"):
        return False
    parts = filename.replace("\\", "/").split("/")
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    try:
        real = os.path.realpath(filename)
    except (OSError, ValueError):
        real = filename
    return not any(real.startswith(d) for d in libdirs)
