# cuprobe-sitecustomize: this marker tells a second copy of this file apart
# from a sitecustomize of the environment's own (see _cuprobe_is_ours).
"""cuprobe's sitecustomize: `cuprobe run` puts this directory first on
PYTHONPATH so that every Python process it traces loads the framework
companion (cuprobe_companion), without any change to the program.

It first runs the sitecustomize that it hides (the next one on sys.path, as
Python itself would have run it, under the name 'sitecustomize'), then
installs the companion's import hook unless CUPROBE_FRAMEWORK=0.  Installing
imports nothing heavy and starts nothing: the companion wakes only when the
program itself imports torch.cuda, cupy or jax.  See docs/framework.md.
"""
import os as _cuprobe_os
import sys as _cuprobe_sys

_CUPROBE_MARKER = b"cuprobe-sitecustomize"


def _cuprobe_same_dir(entry, here):
    try:
        return _cuprobe_os.path.realpath(entry or _cuprobe_os.getcwd()) == here
    except (OSError, ValueError):
        return False


def _cuprobe_is_ours(origin):
    """A copy of this file (an installed one beside the source tree's)."""
    try:
        with open(origin, "rb") as f:
            return _CUPROBE_MARKER in f.read(256)
    except (OSError, TypeError):
        return False


def _cuprobe_find_next():
    """The spec of the sitecustomize Python would have run without us: the
    first one on sys.path after our own directory that is not ours."""
    import importlib.machinery

    here = _cuprobe_os.path.dirname(_cuprobe_os.path.realpath(__file__))
    entries = list(_cuprobe_sys.path)
    start = 0
    for i, entry in enumerate(entries):
        if _cuprobe_same_dir(entry, here):
            start = i + 1
            break
    for entry in entries[start:]:
        if not isinstance(entry, str) or _cuprobe_same_dir(entry, here):
            continue
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [entry])
        if spec is None or spec.loader is None:
            continue
        if _cuprobe_is_ours(spec.origin):
            continue
        return spec
    return None


def _cuprobe_traceback(tb):
    """The traceback site.py shows for a failing sitecustomize (with
    PYTHONVERBOSE) without cuprobe: the frames from site's
    execsitecustomize down to the import system's call into the module,
    which are ours' callers, then the module's own frames, from the part of
    tb after our frames and our call into the import system."""
    import types

    outer = []
    frame = _cuprobe_sys._getframe(0)
    while frame is not None:
        if frame.f_code.co_filename != __file__:
            outer.append(frame)
        if frame.f_code.co_name == "execsitecustomize":
            break
        frame = frame.f_back
    if frame is None:
        outer = []
    theirs = tb
    while theirs is not None and (theirs.tb_frame.f_code.co_filename == __file__ or
                                  theirs.tb_frame.f_code.co_filename.startswith("<frozen")):
        theirs = theirs.tb_next
    if theirs is None:
        return tb
    for frame in outer:
        theirs = types.TracebackType(theirs, frame, frame.f_lasti, frame.f_lineno)
    return theirs


def _cuprobe_forget_me():
    """Have the import system drop the name 'sitecustomize' once it is done
    importing this module (this module stands in under the name until then),
    as it does when a sitecustomize fails."""
    me = _cuprobe_sys.modules.get(__name__)

    def done(spec):
        if _cuprobe_sys.modules.get(spec.name) is me:
            _cuprobe_sys.modules.pop(spec.name, None)

    try:
        from cuprobe_companion._specdone import when_imported

        spec = globals().get("__spec__")
        if spec is not None and spec.name == "sitecustomize":
            when_imported(spec, done)
    except Exception:
        pass


def _cuprobe_chain():
    try:
        spec = _cuprobe_find_next()
    except Exception:
        # Our search failed, not their code: behave as if there were none.
        return
    if spec is None:
        return
    import importlib.util

    ours = _cuprobe_sys.modules.get("sitecustomize")
    module = importlib.util.module_from_spec(spec)
    # Under its own name, so that `import sitecustomize` in the program
    # finds the environment's module, as it would without cuprobe.
    _cuprobe_sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:
        # Reported here as site.py reports it (CPython 3.8 to 3.13), not
        # raised through our frames: their traceback, PYTHONVERBOSE's, then
        # shows exactly the frames it shows without cuprobe.  The import
        # system still wants a module under the name until it is done (ours),
        # and then none, as after a failed import.
        if ours is not None:
            _cuprobe_sys.modules["sitecustomize"] = ours
            _cuprobe_forget_me()
        if isinstance(err, ImportError) and err.name == "sitecustomize":
            return
        if _cuprobe_sys.flags.verbose:
            # The default hook shows the exception's own traceback.
            err.__traceback__ = _cuprobe_traceback(err.__traceback__)
            _cuprobe_sys.excepthook(type(err), err, err.__traceback__)
        else:
            _cuprobe_sys.stderr.write(
                "Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                "%s: %s\n" % (err.__class__.__name__, err))


def _cuprobe_install():
    flag = _cuprobe_os.environ.get("CUPROBE_FRAMEWORK", "1").strip().lower()
    if flag in ("0", "off", "false", "no"):
        return
    try:
        import cuprobe_companion

        cuprobe_companion.install()
    except Exception:
        # The companion logs its own failures; an import failure here has
        # nowhere to go and must not reach the program.
        pass


try:
    _cuprobe_chain()
finally:
    _cuprobe_install()
