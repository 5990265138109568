#!/usr/bin/env python3
"""bench/footprint.py - the cache lines one wrapped call touches: what it
costs inside a real program, where its lines have been evicted between two
calls (bench_cold.c says why).  Runs build/bench/bench_cold under valgrind's
lackey (every instruction and data access) with the shim preloaded, cuts the
trace at bench_cold's markers, and prints, per kind of call (alloc, free,
launch), the distinct 64-byte lines and 4 KiB pages touched, by region, as
the median over the timed calls; then the shim's lines by ELF section (cp_hot,
.text, .plt; .got, .data, .bss...) and its functions by code lines touched,
bytes run and the lines those bytes would fill if packed.

Usage: python3 bench/footprint.py SHIM.so|none [ITER]   (default 60 iterations;
  none: no shim, the driver's and the bench's own lines)
  B (build), TOP (15): functions listed.  CUPROBE_* pass through.
Needs valgrind.
"""
import collections
import os
import re
import statistics
import subprocess
import sys
import tempfile

shim = sys.argv[1] if len(sys.argv) > 1 else "build/libcuprobe.so"
iters = sys.argv[2] if len(sys.argv) > 2 else "60"
B = os.environ.get("B", "build")
TOP = int(os.environ.get("TOP", "15"))

tmp = tempfile.mkdtemp()
env = dict(os.environ)
env.update(LD_LIBRARY_PATH=B + "/fakecuda", CUPROBE_OUTPUT=tmp + "/t-%p.trace",
           CUPROBE_FLUSH_MS="10000", LD_PRELOAD=os.path.abspath(shim) if shim != "none" else "",
           COLD_MARKS="1", SLED_KB="0", EVICT_KB="0")
proc = subprocess.Popen(["valgrind", "--tool=lackey", "--trace-mem=yes",
                         "--log-file=" + tmp + "/lackey", B + "/bench/bench_cold", iters],
                        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
_, err = proc.communicate()
if proc.returncode:
    sys.exit("bench_cold under lackey failed:\n" + err[-2000:])

marks, maps = {}, []
for line in err.splitlines():
    w = line.split()
    if w[:1] == ["mark"]:
        marks[int(w[2], 16)] = w[1]
    elif w[:1] == ["map"]:
        lo, hi = (int(x, 16) for x in w[1].split("-"))
        name = w[6] if len(w) > 6 else "[anon]"
        maps.append((lo, hi, w[2], os.path.basename(name) if name.startswith("/") else name))
maps.sort()
shim_name = os.path.basename(shim)


def region(addr):
    for lo, hi, perm, name in maps:     # few: a scan does
        if lo <= addr < hi:
            if name == shim_name:
                return "shim-" + ("text" if "x" in perm else "data")
            if name == "libcuda.so.1":
                return "fake-driver"
            if name in ("[stack]", "[heap]"):
                return name[1:-1]
            if name.startswith("lib"):
                return "other-lib"
            if name == "bench_cold":
                return "bench"
            return "anon"
    return "anon"     # mmapped after the maps were printed: chunks, tables


# The shim's symbols, to name its lines: offsets from its first mapping
# (the ELF file's offset 0 for a shared object linked at 0).
shim_base = next((lo for lo, hi, perm, name in maps if name == shim_name), 0)
syms, dsyms = [], []
nm = subprocess.run(["nm", "--defined-only", "-S", shim], capture_output=True,
                    text=True).stdout if shim != "none" else ""
for line in nm.splitlines():
    w = line.split()
    if len(w) == 4 and w[2] in "tTwW":
        syms.append((int(w[0], 16), int(w[1], 16), w[3]))
    elif len(w) == 4 and w[2] in "bBdDrR":
        dsyms.append((int(w[0], 16), int(w[1], 16), w[3]))
syms.sort()
dsyms.sort()


# The shim's ELF sections, to say where its lines are (cp_hot, .text, .plt;
# .got, .got.plt, .data, .bss): offsets from its first mapping, as for nm.
sections = []
if shim != "none":
    for line in subprocess.run(["readelf", "-SW", shim], capture_output=True,
                               text=True).stdout.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m and int(m.group(2), 16):
            sections.append((int(m.group(2), 16), int(m.group(3), 16), m.group(1)))


def section(addr):
    off = addr - shim_base
    return next((n for lo, size, n in sections if lo <= off < lo + size), "?")


def sym(addr, table=None):
    syms_ = syms if table is None else table
    off = addr - shim_base
    lo, hi = 0, len(syms_)
    while lo < hi:
        mid = (lo + hi) // 2
        if syms_[mid][0] <= off:
            lo = mid + 1
        else:
            hi = mid
    if lo and syms_[lo - 1][0] <= off < syms_[lo - 1][0] + max(syms_[lo - 1][1], 64):
        return syms_[lo - 1][2]
    return "?"


events = collections.defaultdict(list)  # kind -> [(ilines, dlines)]
kind = None
ilines, dlines = set(), {}      # dlines: line -> the first instruction that touched it
cur = 0
ibytes = {}
shim_bytes = collections.defaultdict(list)
fn_bytes = collections.defaultdict(list)     # kind -> [Counter(function -> bytes run)]
with open(tmp + "/lackey") as f:
    for line in f:
        if line[0] == "I":
            addr = int(line[3:line.index(",")], 16)
            k = marks.get(addr)
            if k is not None:
                if kind is not None and k == "end":
                    events[kind].append((ilines, dlines))
                    fb = collections.Counter()
                    for a, n in ibytes.items():
                        if region(a) == "shim-text":
                            fb[sym(a)] += n
                    shim_bytes[kind].append(sum(fb.values()))
                    fn_bytes[kind].append(fb)
                kind = None if k == "end" else k
                ilines, dlines = set(), {}
                ibytes = {}
                continue
            if kind is not None:
                ilines.add(addr >> 6)
                cur = addr
                ibytes[addr] = int(line[line.index(",") + 1:])
        elif kind is not None and line[0] == " ":
            addr = int(line[3:line.index(",")], 16)
            dlines.setdefault(addr >> 6, cur)
for fn in os.listdir(tmp):
    os.unlink(os.path.join(tmp, fn))
os.rmdir(tmp)

# bench_cold's warm-up step: 96 allocations and launches, 48 frees.
WARM = {"alloc": 96, "launch": 96, "free": 48}
print("footprint of one call (median over the timed calls; shim %s; %s)" %
      (shim, " ".join("%s=%s" % (k, v) for k, v in sorted(os.environ.items())
                      if k.startswith("CUPROBE_")) or "defaults"))
for k in ("alloc", "free", "launch"):
    evs = events.get(k, [])[WARM[k]:]     # after bench_cold's warm-up step
    if not evs:
        continue
    by = collections.defaultdict(list)
    for il, dl in evs:
        c = collections.Counter()
        for a in il:
            c["I " + region(a << 6)] += 1
        for a in dl:
            c["D " + region(a << 6)] += 1
        c["I pages"] = len({a >> 6 for a in il})
        c["D pages"] = len({a >> 6 for a in dl})
        c["I lines"] = len(il)
        c["D lines"] = len(dl)
        for key in set(by) | set(c):
            by[key].append(c.get(key, 0))
    print("%-7s calls %d" % (k, len(evs)))
    sb = shim_bytes[k][WARM[k]:]
    print("  %-18s %7.1f   (their code lines if packed: %.1f)" %
          ("shim code bytes", statistics.median(sb), statistics.median(sb) / 64))
    for key in sorted(by):
        print("  %-18s %7.1f" % (key, statistics.median(by[key])))
    # the shim's lines by ELF section, in the median call
    il, dl = evs[len(evs) // 2]
    sc = collections.Counter("I " + section(a << 6) for a in il if region(a << 6) == "shim-text")
    sc.update("D " + section(a << 6) for a in dl if region(a << 6) == "shim-data")
    print("  shim lines by section (the median call): " +
          ", ".join("%s %d" % kv for kv in sorted(sc.items())))
    # the shim's code by function: lines touched against the bytes run
    # (packed: bytes / 64, what a layout in execution order would touch)
    fc = collections.Counter()
    for il, _ in evs:
        for a in il:
            if region(a << 6) == "shim-text":
                fc[sym(a << 6)] += 1
    fbs = fn_bytes[k][WARM[k]:]
    print("  shim code by function (mean a call): lines touched, bytes run, lines if packed")
    for name, n in fc.most_common(TOP):
        b = sum(c.get(name, 0) for c in fbs) / len(fbs)
        print("    %6.1f %7.1f %6.1f  %s" % (n / len(evs), b, b / 64, name))
    dc = collections.Counter()
    for _, dl in evs:
        for a, ip in dl.items():
            r = region(ip)
            where = region(a << 6)
            if where == "shim-data":
                where += " " + sym(a << 6, dsyms)
            dc[(sym(ip) if r == "shim-text" else r, where)] += 1
    if os.environ.get("DETAIL") == k:
        # one call's data lines, in the order first touched
        _, dl = evs[len(evs) // 2]
        for a, ip in sorted(dl.items(), key=lambda x: x[0]):
            r = region(ip)
            print("    line %#014x %-12s by %s" % (a << 6, region(a << 6),
                                               sym(ip) if r == "shim-text" else r))
    print("  data lines by the code that first touched them (mean a call):")
    for (who, where), n in dc.most_common(TOP):
        print("    %6.1f  %-36s %s" % (n / len(evs), who, where))
