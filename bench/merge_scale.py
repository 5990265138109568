#!/usr/bin/env python3
"""merge_scale.py - how the report of a large run scales with its processes
when pids repeat across hosts (containers: every host has its pid 100).

  python3 bench/merge_scale.py [PROCS] [RUNS]        (default 5200 3)
  OLD=/path/to/old/build python3 bench/merge_scale.py ...   (also times it)

Eight traces of one host (bench/gen_trace.c: pid 100 forks 101 after cuInit,
101..107 its children) are summarised once; bench/gen_summary.py repeats
them over PROCS/8 hosts, with the pids repeated and, for the baseline, with
a pid of its own for every process.  `cuprobe-analyze report --list` of each
summary is run RUNS times, alternating; printed: the medians of wall time,
CPU time (user + system) and peak RSS, the number of findings, and a
BENCHMARKS.md row.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
B = os.environ.get("B", os.path.join(ROOT, "build"))


def run(cmd):
    """cmd's wall seconds, CPU seconds (user + system), peak RSS (KiB) and
    the lines of its standard output."""
    with tempfile.TemporaryFile() as out:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            raise SystemExit("%s: exit %d" % (" ".join(cmd), p.returncode))
        out.seek(0)
        return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, out.read().count(b"\n")


def seed(d):
    gen = os.path.join(B, "bench", "gen_trace")
    traces = []
    for k in range(8):
        t = os.path.join(d, "s%d.trace" % k)
        cmd = [gen, "-n", "20", "-t", "4", "-H", "seedhost", "-p", str(100 + k),
               "-P", "1" if k == 0 else "100", "-T", str(1 + k), "-s", str(k + 1), "-o", t]
        if k == 0:
            cmd += ["-c", "101"]
        subprocess.run(cmd, check=True)
        traces.append(t)
    out = os.path.join(d, "seed.json")
    subprocess.run([os.path.join(B, "cuprobe-analyze"), "report", "--no-progress",
                    "--summary", out] + traces, check=True)
    return out


def main(argv):
    procs = int(argv[1]) if len(argv) > 1 else 5200
    runs = int(argv[2]) if len(argv) > 2 else 3
    builds = [("new", B)] + ([("old", os.environ["OLD"])] if os.environ.get("OLD") else [])
    with tempfile.TemporaryDirectory() as d:
        s = seed(d)
        inputs = {}
        for kind, extra in (("repeated", []), ("distinct", ["--distinct"])):
            inputs[kind] = os.path.join(d, kind + ".json")
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_summary.py"), s,
                            inputs[kind], str(procs)] + extra, check=True)
        res = {}
        for r in range(runs):
            for name, b in builds:
                for kind, path in inputs.items():
                    w, c, rss, lines = run([os.path.join(b, "cuprobe-analyze"), "report",
                                            "--no-progress", "--list", path])
                    res.setdefault((name, kind), []).append((w, c, rss, lines))
                    print("run %d %s %s: %.2f s wall, %.2f s CPU, %d findings" %
                          (r + 1, name, kind, w, c, lines), flush=True)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    cpu = open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": \t")
    load = open("/proc/loadavg").read().split()[:3]
    print("machine: %d CPUs (%s), load %s; commit %s; %s" %
          (os.cpu_count(), cpu, " ".join(load), commit, time.strftime("%Y-%m-%d %H:%M UTC",
                                                                     time.gmtime())))
    for (name, kind), v in res.items():
        w = statistics.median(x[0] for x in v)
        c = statistics.median(x[1] for x in v)
        rss = max(x[2] for x in v)
        print("| %s | %s | %d | %.2f s | %.2f s | %d MiB | %d |" %
              (name, kind, procs, w, c, rss // 1024, v[0][3]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
