"""cuprobe's framework companion: records PyTorch caching-allocator state
(at each OOM, at exit and periodically), CuPy memory-pool and JAX device
memory statistics into the cuprobe trace, without any change to the program.

install() is called by cuprobe's sitecustomize.  It only places an import
hook; everything else (ctypes, json, threading, the framework collectors) is
imported when the program itself imports torch.cuda, cupy or jax.  The JSON
records are described in docs/framework.md.
"""

_installed = False


def install():
    """Place the import hook once per process.  Never raises."""
    global _installed
    if _installed:
        return
    _installed = True
    try:
        from . import _hook

        _hook.install()
    except Exception as exc:  # pragma: no cover - defensive
        try:
            from . import _core

            _core.fail("install", exc)
        except Exception:
            pass
