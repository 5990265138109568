"""bench/pmu.py - per-thread hardware counters for bench/gpu_steps.py's toggle
mode (TOGGLE_PMU=1): what a recording block costs in instructions, cycles and
cache/TLB misses, against a paused block of the same process.

Time alone cannot say whether the shim's extra time is its own instructions
or PyTorch's code running slower (the shim evicting its lines); the counters
can.  Counters are opened with perf_event_open(2) on every thread the
process has when toggling starts (PyTorch's autograd thread exists by then:
warm-up ran backward), user space only, and read around each block.  Threads
are grouped as "writer" (the shim's writer thread, comm cuprobe-*) and
"steps" (all others).  Each count is scaled by time_enabled/time_running
(multiplexing); scaled counts are flagged.

No dependency beyond ctypes; x86-64 and AArch64 syscall numbers only.
"""
import ctypes
import os
import platform
import struct

_NR = {"x86_64": 298, "aarch64": 241}.get(platform.machine())

# (name, type, config): PERF_TYPE_HARDWARE = 0, PERF_TYPE_SOFTWARE = 1,
# PERF_TYPE_HW_CACHE = 3 (config = cache | op << 8 | result << 16; op read = 0,
# result miss = 1; caches L1D 0, L1I 1, LL 2, DTLB 3, ITLB 4).
EVENTS = [
    ("cycles", 0, 0),
    ("instructions", 0, 1),
    ("l1i_miss", 3, 1 | 1 << 16),
    ("itlb_miss", 3, 4 | 1 << 16),
    ("l1d_miss", 3, 0 | 1 << 16),
    ("llc_miss", 3, 2 | 1 << 16),
]
SOFT = [("task_clock_ns", 1, 1)]


def _attr(typ, config):
    # struct perf_event_attr, PERF_ATTR_SIZE_VER5 (112 bytes): type, size,
    # config, sample_period, sample_type, read_format, flags, ...
    read_format = 1 | 2             # TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING
    flags = (1 << 5) | (1 << 6)     # exclude_kernel | exclude_hv
    buf = struct.pack("=IIQQQQQ", typ, 112, config, 0, 0, read_format, flags)
    return buf + b"\0" * (112 - len(buf))


class Counters:
    """Counters on every thread of this process; read() sums them by group."""

    def __init__(self, soft_only=False):
        self.fds = []           # (group, name, fd)
        self.missing = []
        if _NR is None:
            self.missing.append("no syscall number for " + platform.machine())
            return
        libc = ctypes.CDLL(None, use_errno=True)
        self._sys = libc.syscall
        self._sys.restype = ctypes.c_long
        events = SOFT if soft_only else EVENTS + SOFT
        for tid in sorted(int(t) for t in os.listdir("/proc/self/task")):
            try:
                with open("/proc/self/task/%d/comm" % tid) as f:
                    comm = f.read().strip()
            except OSError:
                continue
            group = "writer" if comm.startswith("cuprobe") else "steps"
            for name, typ, config in events:
                a = ctypes.create_string_buffer(_attr(typ, config), 112)
                fd = self._sys(ctypes.c_long(_NR), a, ctypes.c_long(tid), ctypes.c_long(-1),
                               ctypes.c_long(-1), ctypes.c_ulong(0))
                if fd < 0:
                    err = os.strerror(ctypes.get_errno())
                    if (name, err) not in self.missing:
                        self.missing.append((name, err))
                    continue
                self.fds.append((group, name, fd))

    def names(self):
        seen = []
        for _, n, _ in self.fds:
            if n not in seen:
                seen.append(n)
        return seen

    def read(self):
        """{(group, name): (scaled count, multiplexed?)} now."""
        out = {}
        for group, name, fd in self.fds:
            try:
                v, en, run = struct.unpack("=QQQ", os.read(fd, 24))
            except OSError:
                continue
            scaled = v * en / run if run else 0.0
            c, m = out.get((group, name), (0.0, False))
            out[(group, name)] = (c + scaled, m or (run < en))
        return out

    def close(self):
        for _, _, fd in self.fds:
            os.close(fd)
        self.fds = []


def delta(a, b):
    return {k: (b[k][0] - a.get(k, (0.0, False))[0], b[k][1]) for k in b}


def report(sums, steps, out):
    """sums[state] = {(group, name): (count, mux)} over all blocks of that
    state, steps[state] = steps run; prints per-step counts for each state and
    the recording-minus-paused difference."""
    keys = sorted(set(sums[0]) | set(sums[1]))
    for group, name in keys:
        r, mr = sums[0].get((group, name), (0.0, False))
        p, mp = sums[1].get((group, name), (0.0, False))
        r /= max(steps[0], 1)
        p /= max(steps[1], 1)
        out("pmu %-6s %-14s recording %14.1f paused %14.1f diff %+12.1f ratio %.4f%s" %
            (group, name, r, p, r - p, r / p if p else float("nan"),
             " (multiplexed)" if mr or mp else ""))


class SelfTime:
    """The shim's per-API call counts and nanoseconds in the wrapper and in
    the driver (a -DCP_SELFTIME build: cuprobe_bench_selftime), read around
    each block: how much of a recording block's extra time is spent inside
    the wrapped calls (the shim's hooks, or the driver running slower), and
    how much outside them (the program's own code running slower)."""

    def __init__(self):
        lib = ctypes.CDLL(None)
        self._f = lib.cuprobe_bench_selftime
        self._name = lib.cuprobe_bench_api
        self._name.restype = ctypes.c_char_p
        self._f.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_int]
        self._cap = 3 * 1024
        self._buf = (ctypes.c_uint64 * self._cap)()

    def read(self):
        n = self._f(self._buf, self._cap)
        return [tuple(self._buf[3 * i + k] for k in range(3)) for i in range(n)]

    def api(self, i):
        return self._name(i).decode()


def selftime_delta(a, b):
    """What the counters took between two SelfTime.read()s a and b: each
    row's [calls, wrapper ns, driver ns] of b less a's."""
    return [[v - u for u, v in zip(x, y)] for x, y in zip(a, b)]


def selftime_report(sums, steps, wall_ns, name, out):
    """sums[state][id] = [calls, wrapper ns, driver ns] over the state's
    blocks; wall_ns[state]: the blocks' wall time.  Prints per-step figures
    for each API with calls, then the totals against the wall-time
    difference."""
    tot = {0: [0.0, 0.0, 0.0], 1: [0.0, 0.0, 0.0]}
    rows, parts = [], []
    for i in range(len(sums[0])):
        r = [v / max(steps[0], 1) for v in sums[0][i]]
        p = [v / max(steps[1], 1) for v in sums[1][i]]
        if r[0] == 0 and p[0] == 0:
            continue
        if name(i).startswith("part:"):
            # a part of the recording path, inside the wrappers' time
            parts.append((name(i), r))
            continue
        for st, v in ((0, r), (1, p)):
            for k in range(3):
                tot[st][k] += v[k]
        rows.append((r[1] - p[1], name(i), r, p))
    for d, api, r, p in sorted(rows, reverse=True):
        out("self %-28s calls/step %7.1f / %7.1f  wrapper ns/call %8.1f / %8.1f  "
            "driver ns/call %8.1f / %8.1f  extra ns/step %+9.1f" %
            (api, r[0], p[0], r[1] / r[0] if r[0] else 0, p[1] / p[0] if p[0] else 0,
             r[2] / r[0] if r[0] else 0, p[2] / p[0] if p[0] else 0, d))
    for part, r in parts:
        out("self %-28s times/step %7.1f  ns each %8.1f  ns/step %9.1f" %
            (part, r[0], r[1] / r[0] if r[0] else 0, r[1]))
    wr = wall_ns[0] / max(steps[0], 1)
    wp = wall_ns[1] / max(steps[1], 1)
    out("self total per step (recording / paused): wall %.0f / %.0f ns (diff %+.0f); "
        "in wrappers %.0f / %.0f (diff %+.0f), of it in the driver %.0f / %.0f (diff %+.0f), "
        "shim's own %+.0f; outside the calls %+.0f" %
        (wr, wp, wr - wp, tot[0][1], tot[1][1], tot[0][1] - tot[1][1], tot[0][2], tot[1][2],
         tot[0][2] - tot[1][2], (tot[0][1] - tot[0][2]) - (tot[1][1] - tot[1][2]),
         (wr - tot[0][1]) - (wp - tot[1][1])))
