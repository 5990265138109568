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


def _cuprobe_chain():
    try:
        spec = _cuprobe_find_next()
    except Exception:
        # Our search failed, not their code: behave as if there were none.
        return
    if spec is None:
        return
    import importlib.util

    module = importlib.util.module_from_spec(spec)
    # Under its own name, so that `import sitecustomize` in the program
    # finds the environment's module, as it would without cuprobe.  An
    # exception from its code propagates: site.py then reports it exactly as
    # it would have.
    _cuprobe_sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


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
