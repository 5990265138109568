"""Attribution: the line of the program that allocated the framework memory
still held (kinds torch.attrib and cupy.attrib, docs/framework.md).  This
module holds the switch, the sites and their records; _attrib_torch.py and
_attrib_cupy.py read each framework's live allocations.

A caching allocator takes memory from the driver where its cache runs dry,
which is rarely the line that keeps the memory: the driver-level call site
of a growing pool is the line that refilled it.  This module records the
framework's own view instead: every live pool allocation counted under the
first frame of the program's own code that made it, aggregated here into
{site: bytes, blocks}, so that the analyzer can name the line whose live
bytes grew.

- PyTorch (_attrib_torch.py): the Python stack PyTorch keeps of each live
  block when its memory history records only live state;
- CuPy (_attrib_cupy.py): a memory hook counting each live pool allocation
  by its line.

Rules kept here:
- CUPROBE_ATTRIBUTE (auto, 1, 0) decides; DEFAULT_ON is what auto means;
- a sample is taken at each periodic tick, after the allocator grew (at
  most once per max(MIN_GAP_S, its own cost / DUTY), so that attribution
  holds the GIL for at most 1% of the time), at each of the first
  MAX_OOM_SAMPLES OOMs and at exit;
- a record lists at most MAX_SITES sites, the largest; a site's stack is
  written once per process, the first time the site is listed;
- attribution that cannot work (an API missing, a call refused) is turned
  off with one record saying why; it never disables the companion, and
  nothing it does raises into the program.
"""
import os
import sys
import threading
import time

from ._frames import LIBRARY_PACKAGES, is_user_frame, library_dirs
from ._sink import VERSION

# What CUPROBE_ATTRIBUTE=auto (or unset) means: the one place to change the
# default.
DEFAULT_ON = False
MAX_SITES = 64
MAX_FRAMES = 12          # frames of a site's stack, from the program's line outwards
MIN_GAP_S = 0.25
DUTY = 0.01

# In every "on" record.  Every number the records hold is an integer.
LIMITS = {"max_sites": MAX_SITES, "min_gap_ms": int(MIN_GAP_S * 1000),
           "duty_pct": int(DUTY * 100)}
_ON = ("1", "on", "true", "yes")
_OFF = ("0", "off", "false", "no")

def in_companion_thread():
    """Whether this is the companion's own timer thread (_core's; read
    from sys.modules, not imported: _core imports this module)."""
    core = sys.modules.get(__package__ + "._core")
    t = getattr(getattr(core, "_state", None), "thread", None)
    return t is not None and t is threading.current_thread()


def imports_running():
    """True while some thread executes a module's import (importlib marks
    its spec _initializing for that time).  The companion's thread must not
    import then: two threads importing modules that import each other (as
    torch._dynamo and torch._inductor do) make Python's deadlock avoidance
    hand one of them a partially initialised module, an ImportError in the
    program."""
    for m in list(sys.modules.values()):
        spec = getattr(m, "__spec__", None)
        if spec is not None and getattr(spec, "_initializing", False):
            return True
    return False


def enabled(text=None):
    """Whether attribution is on, from CUPROBE_ATTRIBUTE (text when given):
    1/on/true/yes, 0/off/false/no; auto, unset or anything else: DEFAULT_ON."""
    if text is None:
        text = os.environ.get("CUPROBE_ATTRIBUTE")
    value = (text or "").strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    return DEFAULT_ON


class UserFiles:
    """Is a file the program's own code (by name, cached)?  Not the standard
    library, not an installed package, not a known framework's package
    directory (a framework run from a source checkout), not the companion,
    not code that TorchInductor generated."""

    def __init__(self):
        self.cache = {}
        self.libdirs = None

    def _package_dirs(self):
        dirs = [os.path.dirname(os.path.realpath(__file__)) + os.sep]
        for name in LIBRARY_PACKAGES:
            path = getattr(sys.modules.get(name), "__file__", None)
            if path:
                dirs.append(os.path.dirname(os.path.realpath(path)) + os.sep)
        return tuple(dirs)

    def prepare(self):
        """Find the library directories (sysconfig: milliseconds, once)
        before a sample's cost is timed."""
        if self.libdirs is None:
            self.libdirs = library_dirs()

    def __call__(self, filename):
        user = self.cache.get(filename)
        if user is None:
            user = self._judge(filename)
            self.cache[filename] = user
        return user

    def _judge(self, filename):
        if not isinstance(filename, str) or "/torchinductor_" in filename:
            return False
        self.prepare()
        # Packages are looked up again for every new file: a framework
        # imported after the companion attached counts too.
        return is_user_frame(filename, None, self.libdirs + self._package_dirs())


class _Cost:
    def __init__(self):
        self.n = 0
        self.us_total = 0.0
        self.us_max = 0.0

    def add(self, us):
        self.n += 1
        self.us_total += us
        self.us_max = max(self.us_max, us)

    def fields(self):
        return {"samples": self.n,
                "sample_us_mean": int(self.us_total / self.n) if self.n else 0,
                "sample_us_max": int(self.us_max)}


class Sites:
    """The sites of one framework's attribution and the records that list
    them.  A site is the first frame of the program's own code of an
    allocation (file, line, function); its id is handed out here and its
    stack (that frame and up to MAX_FRAMES - 1 callers, innermost first) is
    written with the first record that lists it."""

    def __init__(self, record, kind):
        self._record = record
        self.kind = kind
        self.ids = {}           # (file, line, func) -> id
        self.stacks = {}        # id -> [[file, line, func], ...]
        self.announced = set()
        self.seq = 0
        self.cost = _Cost()
        self.state = "waiting"  # then "on" or "off"
        self.why = ""           # why it is off
        self.next_sample = 0.0

    def site(self, key, frames):
        """The id of site key; frames() gives its stack the first time."""
        sid = self.ids.get(key)
        if sid is None:
            sid = len(self.ids) + 1
            self.ids[key] = sid
            self.stacks[sid] = frames()
        return sid

    def say(self, event, **fields):
        obj = {"v": VERSION, "event": event}
        obj.update(fields)
        self._record(self.kind, obj)

    def safe(self, fn, *args):
        """fn(*args); an exception turns attribution off (one record), and
        goes no further."""
        try:
            fn(*args)
        except Exception as exc:
            try:
                self.off("failed", "%s: %s" % (type(exc).__name__, exc))
            except Exception:
                self.state = "off"

    def off(self, reason, why):
        """Attribution stops for good, with one record saying why."""
        if self.state == "off":
            return
        self.state = "off"
        self.why = why[:500]
        self.say("off", reason=reason, why=self.why)

    def due(self, event):
        """Whether a sample for `event` is wanted now."""
        if self.state != "on":
            return False
        return event in ("exit", "oom") or time.monotonic() >= self.next_sample

    def write(self, event, agg, totals, t0):
        """One sample: agg maps site id -> [bytes, blocks]; totals has
        live_bytes, live_blocks, unattributed_bytes, unattributed_blocks.
        t0: perf_counter() when the sample began."""
        rows = sorted(((v[0], v[1], sid) for sid, v in agg.items() if v[1] > 0),
                      reverse=True)
        top, rest = rows[:MAX_SITES], rows[MAX_SITES:]
        new = [sid for _, _, sid in top if sid not in self.announced]
        self.seq += 1
        obj = {"v": VERSION, "event": event, "seq": self.seq,
               "stacks": [{"id": sid, "frames": self.stacks[sid]} for sid in new],
               "sites": [[sid, b, n] for b, n, sid in top],
               "sites_total": len(rows),
               "other_bytes": sum(r[0] for r in rest),
               "other_blocks": sum(r[1] for r in rest)}
        obj.update(totals)
        obj["collect_us"] = int((time.perf_counter() - t0) * 1e6)
        rc = self._record(self.kind, obj)
        if rc is not None and rc >= 0:
            self.announced.update(new)
        # The throttle counts the whole sample, writing it included.
        us = (time.perf_counter() - t0) * 1e6
        self.cost.add(us)
        self.next_sample = time.monotonic() + max(MIN_GAP_S, us / 1e6 / DUTY)
