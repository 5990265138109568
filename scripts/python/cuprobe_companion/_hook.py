"""The import hook: tells the companion when the program has imported one of
the frameworks it watches, right after that module finished executing.

A meta-path finder placed first on sys.meta_path answers only for the
watched names.  For those it asks the finders behind it, exactly as the
import system would, and wraps the loader it gets so that the companion runs
after the module's code.  The wrapper puts the real loader back on the spec
and on the module before the module's code runs, so nothing the program can
see differs.  Any problem in the hook makes it step aside (return None) and
the import proceeds untouched.
"""
import sys

# module name -> framework name handed to _core.on_framework ("threading"
# only gets its excepthook chained)
WATCHED = {"torch.cuda": "torch", "cupy": "cupy", "jax": "jax", "threading": "threading"}


class _Loader:
    """Stands in for a real loader between find_spec and exec_module."""

    def __init__(self, loader, framework):
        self._cuprobe_loader = loader
        self._cuprobe_framework = framework

    def create_module(self, spec):
        create = getattr(self._cuprobe_loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        loader = self._cuprobe_loader
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.loader is self:
            spec.loader = loader
        if getattr(module, "__loader__", None) is self:
            module.__loader__ = loader
        loader.exec_module(module)
        _notify(self._cuprobe_framework, module)

    def __getattr__(self, name):
        # Anything else (get_code, is_package, resource readers...) is the
        # real loader's.
        return getattr(self._cuprobe_loader, name)


class _Finder:
    """First on sys.meta_path; a dict lookup for every other module."""

    def find_spec(self, fullname, path=None, target=None):
        framework = WATCHED.get(fullname)
        if framework is None or fullname in sys.modules:
            return None
        try:
            spec = self._find_behind(fullname, path, target)
        except Exception:
            # The import system will meet the same error and report it.
            return None
        if spec is None or spec.loader is None:
            return None
        if not hasattr(spec.loader, "exec_module"):
            return None
        spec.loader = _Loader(spec.loader, framework)
        return spec

    def _find_behind(self, fullname, path, target):
        meta = sys.meta_path
        try:
            start = next(i for i, f in enumerate(meta) if f is self) + 1
        except StopIteration:
            return None
        for finder in meta[start:]:
            find = getattr(finder, "find_spec", None)
            if find is None:
                # A legacy finder the import system would consult in its
                # own way: do not second-guess it.
                return None
            spec = find(fullname, path, target)
            if spec is not None:
                return spec
        return None

    def invalidate_caches(self):
        pass


_finder = None


def _notify(framework, module):
    """Hand a freshly imported framework to the companion; never raises."""
    if framework == "threading":
        _chain_threading(module)
        return
    try:
        from . import _core

        _core.on_framework(framework, module)
    except Exception as exc:
        try:
            from . import _core

            _core.fail("on_framework", exc)
        except Exception:
            pass


# --- the exception the run died of (recorded by _fatal, imported only then) ---

def _record_fatal(hook, etype, value, tb, thread_name=None):
    try:
        from . import _fatal

        _fatal.record(hook, etype, value, tb, thread_name)
    except Exception:
        pass


def _chain_excepthook():
    previous = sys.excepthook

    def cuprobe_excepthook(etype, value, tb):
        _record_fatal("sys.excepthook", etype, value, tb)
        return previous(etype, value, tb)

    cuprobe_excepthook.__wrapped__ = previous
    sys.excepthook = cuprobe_excepthook


def _chain_threading(threading):
    previous = getattr(threading, "excepthook", None)
    if previous is None or getattr(previous, "_cuprobe", False):
        return

    def cuprobe_thread_excepthook(args):
        thread = getattr(args, "thread", None)
        _record_fatal("threading.excepthook", args.exc_type, args.exc_value,
                      args.exc_traceback, getattr(thread, "name", None))
        return previous(args)

    cuprobe_thread_excepthook._cuprobe = True
    cuprobe_thread_excepthook.__wrapped__ = previous
    threading.excepthook = cuprobe_thread_excepthook


def _fatal_at_exit():
    if sys.modules.get(__package__ + "._fatal") is None and \
            getattr(sys, "last_value", None) is None and getattr(sys, "last_exc", None) is None:
        return
    try:
        from . import _fatal

        _fatal.at_exit()
    except Exception:
        pass


def install_excepthooks():
    """Chain sys.excepthook and threading.excepthook (now, or when threading
    is imported), and register the atexit fallback.  Registered first, the
    fallback runs after every other exit handler."""
    try:
        import atexit

        _chain_excepthook()
        atexit.register(_fatal_at_exit)
        if "threading" in sys.modules:
            _chain_threading(sys.modules["threading"])
    except Exception:
        pass


def install():
    """Insert the finder, and catch up on frameworks imported already (a
    chained sitecustomize may have imported one)."""
    global _finder
    if _finder is not None:
        return
    install_excepthooks()
    _finder = _Finder()
    sys.meta_path.insert(0, _finder)
    for name, framework in WATCHED.items():
        module = sys.modules.get(name)
        if module is not None:
            _notify(framework, module)
