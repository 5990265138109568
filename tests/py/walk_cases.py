"""walk_cases.py - run by tests/unit/test_pystack_walk inside an embedded
interpreter.  Every check() calls into C through ctypes (GIL released, as in
PyTorch), where cuprobe's walker reads this thread's frames; the result must
equal CPython's own view (sys._getframe: co_filename, co_qualname, f_lineno).
Any difference prints both and exits with status 3.

On 3.12+ the companion's code watcher is registered first (with the test
binary's callback), so every walk also goes through the call-site memo.
"""
import asyncio
import atexit
import ctypes
import functools
import os
import sys
import threading

_A = CP_ADDR  # noqa: F821  (set by the test binary)
WALK = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_int)(_A["walk"])
WALK_C_THREAD = ctypes.CFUNCTYPE(ctypes.c_int)(_A["walk_c_thread"])
RUN_C_THREAD = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(_A["run_c_thread"])
MARK = ctypes.CFUNCTYPE(None, ctypes.c_int)(_A["mark"])
BENCH = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_int, ctypes.c_int)(_A["bench"])
CALLBACK = ctypes.CFUNCTYPE(None)
CODE_WATCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(_A["code_watch"])
MEMO_ON = ctypes.CFUNCTYPE(ctypes.c_int)(_A["memo"])

checks = 0


def parse(raw):
    out = []
    for rec in raw.decode("utf-8", "surrogateescape").split("\x1e")[:-1]:
        f, q, line = rec.split("\x1f")
        out.append((f, q, int(line)))
    return out


def frames_of(f):
    out = []
    while f is not None:
        out.append((f.f_code.co_filename, f.f_code.co_qualname, f.f_lineno))
        f = f.f_back
    return out


def check(maxf=128, label=""):
    """Walk from here: our own frame first, then CPython's view of the rest."""
    global checks
    raw, line = WALK(maxf), sys._getframe().f_lineno
    got = parse(raw)
    want = [(__file__, "check", line)] + frames_of(sys._getframe(1))
    want = want[:maxf]
    if got != want:
        print("MISMATCH in case %r" % label)
        for i in range(max(len(got), len(want))):
            g = got[i] if i < len(got) else None
            w = want[i] if i < len(want) else None
            print("  %s got %r\n     want %r" % ("  " if g == w else "!!", g, w))
        sys.stdout.flush()
        os._exit(3)
    checks += 1
    return got


def start_code_watcher():
    """The companion's registration; on 3.11 it does nothing, and no harm."""
    sys.path.insert(0, os.path.join(CP_ROOT, "scripts", "python"))  # noqa: F821
    from cuprobe_companion import _codewatch

    if sys.version_info < (3, 12):
        assert _codewatch.start() is False
        assert not MEMO_ON()
        return False
    assert _codewatch.register(_A["code_event"], CODE_WATCH) is True
    assert MEMO_ON()
    return True


# --- cases -------------------------------------------------------------

def case_nested():
    def outer():
        def inner():
            def innermost():
                return check(label="nested")
            return innermost()
        return inner()
    got = outer()
    assert got[1][1] == "case_nested.<locals>.outer.<locals>.inner.<locals>.innermost"


class Model:
    def forward(self):
        return check(label="method")

    @staticmethod
    def static():
        return check(label="staticmethod")

    @property
    def prop(self):
        return check(label="property")


def case_methods():
    Model().forward()
    Model.static()
    Model().prop


def gen_inner():
    yield check(label="generator")
    yield check(label="generator resumed")


def gen_outer():
    yield from gen_inner()


def case_generators():
    for _ in gen_outer():
        pass
    g = gen_inner()
    next(g)
    next(g)


async def coro_leaf():
    await asyncio.sleep(0)
    return check(label="coroutine after await")


async def coro_root():
    check(label="coroutine")
    return await coro_leaf()


def case_coroutines():
    asyncio.run(coro_root())
    # Driven by hand, no event loop below it.
    c = coro_root()
    try:
        while True:
            c.send(None)
    except StopIteration:
        pass


def case_thread():
    t = threading.Thread(target=case_nested, name="worker")
    t.start()
    t.join()


def case_c_in_between():
    # sorted() is C: a C frame (3.12: a C-stack shim frame) sits between.
    sorted([3, 1, 2], key=lambda x: (check(label="key from C"), x)[1])
    list(map(lambda x: check(label="map"), [1]))


def rec(n, maxf):
    if n:
        return rec(n - 1, maxf)
    return check(maxf, label="deep")


def case_depth():
    got = rec(40, 32)
    assert len(got) == 32
    assert len(check(1, label="max 1")) == 1


def case_exceptions():
    try:
        raise ValueError("x")
    except ValueError:
        check(label="except")
    finally:
        check(label="finally")
    with open(os.devnull) as f:
        check(label="with")
        f.read()


def case_comprehension_and_call_forms():
    [check(label="listcomp") for _ in range(1)]
    functools.partial(check, label="partial")()
    (lambda: check(label="lambda"))()
    check(
        128,
        label="multi-line call")


def case_long_function():
    """A long body: line deltas beyond the short location-table forms."""
    a = 1
    # ------------------------------------------------------------------
    # Filler comments make the next statement's line far from the last.
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    b = a + 1
    x = [a, b, a * b, a - b, a + b]
    y = {k: v for k, v in enumerate(x)}
    check(label="long function")
    for i in range(3):
        if i == 2:
            check(label="loop body")
    return y


def case_unicode_names():
    # Non-ASCII names exercise the 1-, 2- and 4-byte str kinds.
    src = "def f\u00e9():\n    return check(label='unicode')\nf\u00e9()\n"
    for fname in ("/tmp/caf\u00e9.py", "/tmp/\u20ac_cost.py", "/tmp/\U0001f600.py"):
        exec(compile(src, fname, "exec"), {"check": check})


CHURN_SRC = """def churn_{i}():
    return check(label="churn {i}")
churn_{i}()
del churn_{i}
"""


def case_churn():
    # A new module and function each iteration, freed at its end (no cycle
    # keeps them): the next iteration's code objects take the same addresses, with
    # other names, at the same instruction.
    for i in range(64):
        exec(compile(CHURN_SRC.format(i=i), "/tmp/walk_churn_%d.py" % (i % 3), "exec"),
             {"check": check})


def case_second_interpreter():
    # Watchers are per interpreter: once a second one exists, the memo must
    # be off for good (the first walk that sees it stops it).
    if not WATCHING:
        return
    try:
        import _xxsubinterpreters as interpreters
    except ImportError:
        try:
            import _interpreters as interpreters
        except ImportError:
            return
    MARK(3)     # PyGILState_Check() means nothing from here on
    iid = interpreters.create()
    try:
        check(label="second interpreter")
        assert not MEMO_ON(), "the memo survived a second interpreter"
    finally:
        interpreters.destroy(iid)
    check(label="after the second interpreter")


def case_no_thread_state():
    # A thread C started that never ran Python has no frames to report.
    n = WALK_C_THREAD()
    assert n == 0, n


def case_callback_from_c_thread():
    # A thread started by C that calls back into Python: ctypes gives it a
    # thread state, and only the callback's own frames exist on it.
    seen = []
    cb = CALLBACK(lambda: seen.append(check(label="C thread callback")))
    assert RUN_C_THREAD(ctypes.cast(cb, ctypes.c_void_p).value) == 0
    assert len(seen) == 1 and len(seen[0]) == 2, seen


def at_exit_case():
    check(label="atexit")
    MARK(2)


def bench():
    # On a thread started by C, so that the stack holds only our frames and
    # the depth seen by the walker is exactly the one asked for.
    def at_depth(n, fn):
        here = len(frames_of(sys._getframe()))

        def down(k):
            return down(k - 1) if k else fn()
        assert n - here - 2 >= 0
        return down(n - here - 2)   # + the down() frames + fn = n

    for depth in (8, 32):
        for mode, name in ((0, "walk"), (1, "walk+intern"), (2, "full stack"),
                           (3, "raw 6")):
            res = []
            fn = lambda: (len(parse(WALK(64))), BENCH(200000, mode))  # noqa: E731
            cb = CALLBACK(lambda: res.append(at_depth(depth, fn)))
            RUN_C_THREAD(ctypes.cast(cb, ctypes.c_void_p).value)
            print("python %-11s depth %2d (%d frames): %.0f ns per capture"
                  % (name, depth, res[0][0], res[0][1]))


WATCHING = start_code_watcher()
if CP_BENCH:  # noqa: F821
    bench()
else:
    check(label="module level")
    case_nested()
    case_methods()
    case_generators()
    case_coroutines()
    case_thread()
    case_c_in_between()
    case_depth()
    case_exceptions()
    case_comprehension_and_call_forms()
    case_long_function()
    case_unicode_names()
    case_no_thread_state()
    case_callback_from_c_thread()
    case_churn()
    case_second_interpreter()
    atexit.register(at_exit_case)
    print("%d walks matched CPython's frames" % checks)
    MARK(1)
