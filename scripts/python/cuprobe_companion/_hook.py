"""The import hook: tells the companion when the program has imported one of
the frameworks it watches, right after that module finished executing.

A meta-path finder placed first on sys.meta_path answers only for the
watched names.  For those it asks the finders behind it, exactly as the
import system would, and hands back the very spec it got, with the real
loader, watched (_specdone) so that the companion is told when the import
is done and the module in sys.modules.  Nothing of ours runs between the
import system and the module's code, so an exception raised by the module
carries no frame of ours in its traceback.  Any problem in the hook makes it
step aside (return None) and the import proceeds untouched.
"""
import sys

from ._specdone import when_imported

# module name -> framework name handed to _core.on_framework ("threading"
# only gets its uncaught exceptions watched)
WATCHED = {"torch.cuda": "torch", "cupy": "cupy", "jax": "jax", "threading": "threading"}


def _imported(framework):
    """The callback for a watched spec: notify if the import succeeded."""
    def done(spec):
        module = sys.modules.get(spec.name)
        if module is not None and getattr(module, "__spec__", None) is spec:
            _notify(framework, module)
    return done


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
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        return spec if when_imported(spec, _imported(framework)) else None

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
#
# Invisibly: sys.excepthook and threading.excepthook stay what the program
# would have without cuprobe (libraries such as exceptiongroup and trio
# compare them with sys.__excepthook__).  The main thread's uncaught
# exception is what the interpreter left in sys.last_exc (3.12+) or
# sys.last_value when it handed it to sys.excepthook; an atexit handler
# registered first, so it runs last, reads it.  A thread's is seen where
# threading hands it to threading.excepthook: the function each Thread gets
# at creation to do that (threading._make_invoke_excepthook, 3.8+) is
# wrapped, which nothing public shows.

def _record_fatal(hook, etype, value, tb, thread_name=None):
    try:
        from . import _fatal

        _fatal.record(hook, etype, value, tb, thread_name)
    except Exception:
        pass


def _chain_threading(threading):
    make = getattr(threading, "_make_invoke_excepthook", None)
    if make is None or getattr(make, "_cuprobe", False):
        return

    def _make_invoke_excepthook():
        invoke = make()

        def invoke_excepthook(thread):
            etype, value, tb = sys.exc_info()
            _record_fatal("threading.excepthook", etype, value, tb,
                          getattr(thread, "name", None))
            return invoke(thread)

        return invoke_excepthook

    _make_invoke_excepthook._cuprobe = True
    threading._make_invoke_excepthook = _make_invoke_excepthook


def _fatal_at_exit():
    if getattr(sys, "last_value", None) is None and getattr(sys, "last_exc", None) is None:
        return
    try:
        from . import _fatal

        _fatal.at_exit()
    except Exception:
        pass


def install_excepthooks():
    """Register the atexit reader of the main thread's uncaught exception
    and watch threads' (now, or when threading is imported).  Registered
    first, the reader runs after every other exit handler."""
    try:
        import atexit

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
