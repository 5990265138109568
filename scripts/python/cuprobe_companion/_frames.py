"""Which Python frames are the program's own code: the frame the
companion's records name as "the user's line" (the exception a run died of,
the line that called backward(), XLA's out-of-memory error), and the
frames and type of an exception as records list them.  Imports nothing of
the companion.
"""
import os

MAX_FRAMES = 120        # innermost 100 and outermost 20 when deeper

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


def frames_of(tb, libdirs):
    """[{file, line, func, user}] of a traceback, outermost first."""
    out = []
    while tb is not None:
        frame = tb.tb_frame
        code = frame.f_code
        module = frame.f_globals.get("__name__") if isinstance(frame.f_globals, dict) else None
        func = getattr(code, "co_qualname", code.co_name)
        out.append({"file": code.co_filename, "line": tb.tb_lineno, "func": func,
                    "module": module if isinstance(module, str) else None,
                    "user": is_user_frame(code.co_filename, module, libdirs)})
        tb = tb.tb_next
    if len(out) > MAX_FRAMES:
        out = out[:20] + out[-(MAX_FRAMES - 20):]
    return out


def stack_from_user(frame, is_user, limit):
    """[{file, line, func}] from the innermost frame of the program's own
    code outwards (is_user(frame) says which are), at most limit frames; []
    when no frame of the chain is the program's."""
    while frame is not None and not is_user(frame):
        frame = frame.f_back
    out = []
    while frame is not None and len(out) < limit:
        code = frame.f_code
        out.append({"file": code.co_filename, "line": frame.f_lineno,
                    "func": getattr(code, "co_qualname", code.co_name)})
        frame = frame.f_back
    return out


def type_name(etype):
    """module.Qualname of an exception type (builtins bare)."""
    module = getattr(etype, "__module__", "") or ""
    name = getattr(etype, "__qualname__", getattr(etype, "__name__", "?"))
    return name if module in ("builtins", "") else module + "." + name
