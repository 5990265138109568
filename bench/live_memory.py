#!/usr/bin/env python3
"""live_memory.py - the report's peak memory per live allocation.

  python3 bench/live_memory.py [N...]          (default 1000000 10000000)
  OLD=/path/to/old/build python3 bench/live_memory.py ...   (also times it)

For each N, bench/gen_trace.c -k live writes a trace of N allocations that
are never freed (one call site, sizes 256 B to 32 KiB); `cuprobe-analyze
report --list` of it is run once per build, and of a 1,000-allocation trace
for the baseline.  Printed: peak RSS, CPU time, bytes per live allocation
over the baseline, and a BENCHMARKS.md row per build and N.
"""
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
B = os.environ.get("B", os.path.join(ROOT, "build"))


def run(cmd):
    """cmd's CPU seconds (user + system) and peak RSS (KiB)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("%s: exit %d" % (" ".join(cmd), os.waitstatus_to_exitcode(status)))
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def main(argv):
    ns = [int(a) for a in argv[1:]] or [1000000, 10000000]
    builds = [("new", B)] + ([("old", os.environ["OLD"])] if os.environ.get("OLD") else [])
    rows = []
    with tempfile.TemporaryDirectory() as d:
        def trace(n):
            t = os.path.join(d, "live%d.trace" % n)
            subprocess.run([os.path.join(B, "bench", "gen_trace"), "-k", "live", "-t", "1",
                            "-n", str(n), "-o", t], check=True)
            return t
        base = trace(1000)
        for n in ns:
            t = trace(n)
            size = os.path.getsize(t)
            for name, b in builds:
                ana = os.path.join(b, "cuprobe-analyze")
                _, rss0 = run([ana, "report", "--no-progress", "--list", base])
                cpu, rss = run([ana, "report", "--no-progress", "--list", t])
                per = (rss - rss0) * 1024 / (n - 1000)
                print("%s: %d live allocations (%.1f MB trace): peak %d KiB, %.2f s CPU, "
                      "%.0f B each" % (name, n, size / 1e6, rss, cpu, per), flush=True)
                rows.append("| %s | %d | %.1f MB | %d MiB | %.2f s | %.0f |" %
                            (name, n, size / 1e6, rss // 1024, cpu, per))
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    load = open("/proc/loadavg").read().split()[:3]
    print("machine: %d CPUs, load %s; commit %s; %s" %
          (os.cpu_count(), " ".join(load), commit, time.strftime("%Y-%m-%d %H:%M UTC",
                                                                 time.gmtime())))
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
