"""Stand-in jax._src.traceback_util: at JAX's API boundary an exception is
raised again with JAX's own frames dropped from its traceback (what the
user sees), as jax_traceback_filtering=auto does."""
import functools
import os
import types

_JAX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _filtered(tb):
    frames = []
    while tb is not None:
        if not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_JAX_DIR + os.sep):
            frames.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(frames):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def api_boundary(fun):
    @functools.wraps(fun)
    def reraise_with_filtered_traceback(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            raise e.with_traceback(_filtered(e.__traceback__)) from None
    return reraise_with_filtered_traceback
