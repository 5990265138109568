"""Hearing that the import system is done importing a module, from the
module's own spec: it marks a spec initialising before the module's code
runs and done after it has put the module in sys.modules for good, or
removed it after a failure (_load_unlocked's spec._initializing, CPython 3.4
and later).  The spec keeps its real loader, so nothing of ours runs between
the import system and the module's code and no frame of ours is ever in its
tracebacks; its class is switched for the import's duration and back when
done (before anything but the import system can see it)."""
from importlib.machinery import ModuleSpec


class _Watched(ModuleSpec):
    """A spec whose import is watched: its callback waits in the instance
    dict, where a ModuleSpec keeps its own attributes."""

    @property
    def _initializing(self):
        return self.__dict__.get("_initializing", False)

    @_initializing.setter
    def _initializing(self, value):
        self.__dict__["_initializing"] = value
        if value:
            return
        done = self.__dict__.pop("_cuprobe_done", None)
        try:
            self.__class__ = ModuleSpec
        except TypeError:
            pass
        if done is not None:
            done(self)


def when_imported(spec, done):
    """Call done(spec) once the import of spec's module is over, whether it
    succeeded (the module is then in sys.modules) or not.  done must not
    raise.  @return : True when armed (spec is a plain ModuleSpec)."""
    if type(spec) is not ModuleSpec:
        return False
    try:
        spec.__class__ = _Watched
    except TypeError:
        return False
    spec.__dict__["_cuprobe_done"] = done
    return True
