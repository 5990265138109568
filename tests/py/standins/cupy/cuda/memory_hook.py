"""Stand-in cupy.cuda.memory_hook, as CuPy 13 has it: memory hooks are kept
per thread (a threading.local), registered with `with hook:` (__enter__
refuses a second hook of the same name), and the pool calls them with
keyword arguments around each malloc and free."""
import collections
import threading

_thread_local = threading.local()


def _has_memory_hooks():
    return getattr(_thread_local, "memory_hooks", None) is not None


def get_memory_hooks():
    ret = getattr(_thread_local, "memory_hooks", None)
    if ret is None:
        ret = _thread_local.memory_hooks = collections.OrderedDict()
    return ret


class MemoryHook(object):
    name = "MemoryHook"

    def __enter__(self):
        memory_hooks = get_memory_hooks()
        if self.name in memory_hooks:
            raise KeyError("memory hook %s already exists" % self.name)
        memory_hooks[self.name] = self
        return self

    def __exit__(self, *_):
        del get_memory_hooks()[self.name]

    def alloc_preprocess(self, **kwargs):
        pass

    def alloc_postprocess(self, **kwargs):
        pass

    def malloc_preprocess(self, **kwargs):
        pass

    def malloc_postprocess(self, **kwargs):
        pass

    def free_preprocess(self, **kwargs):
        pass

    def free_postprocess(self, **kwargs):
        pass
