"""gpu_pingpong.py - plain against traced on one GPU, in turns, without
start-up between measurements.

Usage: python3 bench/gpu_pingpong.py OUTDIR KIND ROUNDS SECS CONFIG...
  KIND    a bench/gpu_steps.py workload (mlp, gpt2, alloc)
  ROUNDS  rounds; each round every configuration times SECS seconds of
          steps once, one after the other, the order rotated by one every
          round (so each takes every place equally often)
  CONFIG  "NAME plain" or "NAME run [VAR=VALUE ...]" (`cuprobe run` with
          those variables; RUN_CP=PATH among them: that front end instead
          of CP's); the first plain one is the reference
Environment: PIN (taskset -c PIN for every process), BUDGET (seconds after
which no new round starts, default 300), CP (the cuprobe front end,
default build/cuprobe), GENERATIONS (default 1): the rounds are split
among that many sets of fresh processes, started one set after the other;
NOASLR=1: every process runs under `setarch -R` (no address-space
randomisation) with PYTHONHASHSEED=0, so two processes of one
configuration lay out their memory and their dicts the same way.

Why: a run per measurement (tests/gpu/bench_alloc_modes.sh) pays torch's
start-up (~10 s) for 1.5 s of steps, so 8 pairs took a device call per
allocator mode, and a round's first run measured 8-12% faster than the
others (BENCHMARKS.md 2f).  Here every configuration is one long-lived
`gpu_steps.py KIND serve` process, warmed up once; the processes take
turns (only one runs steps at a time, the others wait on a pipe), so a
round lasts a few seconds and dozens of rounds fit a few minutes.

A process has a speed of its own: on the H200 host a second plain process
ran at 0.957 and 0.98 of the first over 37-50 rounds (BENCHMARKS.md 2j),
whatever made it so (where its memory landed, its CPUs).  One process per
configuration measures that draw along with the shim; GENERATIONS > 1
draws again for every configuration, and the A/A row (a second plain
configuration) shows what is left of it.

SANDWICH=1: every other turn is the reference's (P c1 P c2 P c3 P c1 ...,
the other configurations' order rotated every round, one more P at the
end of each generation), and each other turn is compared with the mean of
the two reference turns around it.  The host's speed drifts over seconds
(on the H200 host adjacent 0.3 s turns correlated 0.3-0.55 while a turn's
rate varied by 8-10%), so a ratio to the turns just before and after
cancels more of it than a ratio to the round's reference turn, which may
lie a few turns away.

Writes OUTDIR/runs.txt (round, place, name, steps/s, CPU us per step) and
OUTDIR/summary.txt (per configuration: the median of its per-round ratios
to the reference, their range, how many rounds it was faster, the ratio of
means, CV, and "cpu": the median of the rounds' ratios of the reference's
CPU time per step to this one's, all threads of the process counted, so
the shim's writer thread is a cost there although it runs beside the
steps), and
each process's stderr to OUTDIR/NAME.stderr; traces go to OUTDIR/NAME-*.trace."""
import os
import select
import statistics
import subprocess
import sys
import time


def start(out, kind, name, words):
    env_vars = [w for w in words[1:] if "=" in w]
    cmd = []
    if os.environ.get("PIN"):
        cmd += ["taskset", "-c", os.environ["PIN"]]
    if os.environ.get("NOASLR", "0") not in ("", "0"):
        # Every process the same layout: see the docstring's NOASLR.
        cmd += ["setarch", os.uname().machine, "-R"]
        env_vars = ["PYTHONHASHSEED=0"] + env_vars
    cmd += ["env"] + env_vars
    if words[0] == "run":
        # RUN_CP=PATH among the variables: that configuration's front end
        # (another build's, e.g. build/oldshim/bin/cuprobe).
        cp = os.environ.get("CP", "build/cuprobe")
        for v in env_vars:
            if v.startswith("RUN_CP="):
                cp = v[len("RUN_CP="):]
        cmd += [cp, "run", "-o", os.path.join(out, name + "-%p.trace"), "--"]
    elif words[0] != "plain":
        sys.exit("config %s: mode must be plain or run, not %r" % (name, words[0]))
    cmd += [sys.executable, "bench/gpu_steps.py", kind, "serve"]
    err = open(os.path.join(out, name + ".stderr"), "w")
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=err, text=True, bufsize=1)


def read_line(name, p, timeout):
    """The process's next stdout line, or exit when it has none in time."""
    r, _, _ = select.select([p.stdout], [], [], timeout)
    line = p.stdout.readline() if r else ""
    if not line:
        sys.exit("config %s: no answer (exit status %s); see its .stderr" % (name, p.poll()))
    return line.strip()


def table(names, ref, rates, ratios, cpus, us_of):
    """The summary's rows: per configuration its rates, its ratios to the
    reference and the reference's CPU time per step over its own (lists by
    name; a configuration without ratios gets the reference's row shape),
    and its CPU us per step."""
    lines = ["%-10s %8s %17s %7s %9s %6s %9s %7s %7s" % ("config", "median", "range", "faster",
                                                      "mean/ref", "CV", "steps/s", "cpu", "us/step")]
    ref_mean = statistics.mean(rates[ref]) if rates.get(ref) else 0
    for name in names:
        if not rates.get(name):
            continue
        mean = statistics.mean(rates[name])
        cv = statistics.pstdev(rates[name]) / mean * 100 if mean else 0
        us = statistics.median(us_of[name])
        r = ratios.get(name)
        if name == ref or not r:
            lines.append("%-10s %8s %17s %7s %9.4f %5.1f%% %9.1f %7s %7.1f" % (
                name, "", "", "", mean / ref_mean if ref_mean else 0, cv, mean, "", us))
            continue
        c = cpus.get(name)
        lines.append("%-10s %8.4f %8.4f-%-8.4f %3d/%-3d %9.4f %5.1f%% %9.1f %7.4f %7.1f" % (
            name, statistics.median(r), min(r), max(r), sum(x > 1 for x in r), len(r),
            mean / ref_mean, cv, mean, statistics.median(c) if c else 0.0, us))
    return lines


def generations(names, ref, per_gen):
    """Lines per configuration over generations (sets of fresh processes):
    `per_gen` is a list per generation of {name: [ratios]}.  Each
    generation's median, the median of those medians and their standard
    deviation: a process's own speed (gpu_pingpong.py's docstring) moves
    all of a generation's ratios together, so the generations, not the
    rounds, are the independent draws."""
    if len(per_gen) < 2:
        return []
    lines = ["by generation (median of its ratios; then median, sd of the generations):"]
    for name in names:
        meds = [statistics.median(g[name]) for g in per_gen if g.get(name)]
        if name == ref or len(meds) < 2:
            continue
        lines.append("  %-10s %s | median %.4f sd %.4f (%d generations, %d faster)" % (
            name, " ".join("%.3f" % m for m in meds), statistics.median(meds),
            statistics.stdev(meds), len(meds), sum(m > 1 for m in meds)))
    return lines


def summarize(names, ref, rows, nrounds, gen_of):
    by, cpu = {}, {}
    for rnd, place, name, rate, us in rows:
        by.setdefault(rnd, {})[name] = rate
        cpu.setdefault(rnd, {})[name] = us
    rounds = [r for r in sorted(by) if len(by[r]) == len(names)]
    rates = {n: [by[r][n] for r in rounds] for n in names}
    us_of = {n: [cpu[r][n] for r in rounds] for n in names}
    ratios = {n: [by[r][n] / by[r][ref] for r in rounds] for n in names if n != ref}
    # Older gpu_steps.py printed no CPU time (0 here): no cpu ratio then.
    cpus = {n: [cpu[r][ref] / cpu[r][n] for r in rounds if cpu[r][n] > 0]
            for n in names if n != ref}
    lines = ["%d rounds complete of %d; reference %s" % (len(rounds), nrounds, ref)]
    lines += table(names, ref, rates, ratios, cpus, us_of)
    # A place that is faster whatever ran there (the bias 2f found with one
    # process per run) shows here: mean of rate / the round's mean, by place.
    places = {}
    for rnd, place, name, rate, _ in rows:
        if rnd in rounds:
            places.setdefault(place, []).append(rate / statistics.mean(by[rnd].values()))
    lines.append("by place (rate / its round's mean): " + "  ".join(
        "%d: %.4f" % (p + 1, statistics.mean(v)) for p, v in sorted(places.items())))
    per_gen = {}
    for i, r in enumerate(rounds):
        g = per_gen.setdefault(gen_of[r], {})
        for n in ratios:
            g.setdefault(n, []).append(ratios[n][i])
    lines += generations(names, ref, [per_gen[g] for g in sorted(per_gen)])
    return "\n".join(lines) + "\n"


def summarize_sandwich(names, ref, turns):
    """The same table from a SANDWICH sequence: `turns` is a list per
    generation of (name, rate, cpu us) in the order run."""
    cpus, rates, us_of, per_gen = {}, {}, {}, []
    for seq in turns:
        per_gen.append({})
        for i, (name, rate, us) in enumerate(seq):
            rates.setdefault(name, []).append(rate)
            us_of.setdefault(name, []).append(us)
            if name == ref or i == 0 or i + 1 >= len(seq):
                continue
            (pn, pr, pu), (nn, nr, nu) = seq[i - 1], seq[i + 1]
            if pn != ref or nn != ref:
                continue
            per_gen[-1].setdefault(name, []).append(rate / ((pr + nr) / 2))
            if us > 0:
                cpus.setdefault(name, []).append((pu + nu) / 2 / us)
    ratios = {n: [x for g in per_gen for x in g.get(n, [])] for n in names}
    ratios = {n: r for n, r in ratios.items() if r}
    n = min((len(v) for v in ratios.values()), default=0)
    lines = ["sandwich: %d turns compared per configuration (fewest); reference %s" % (n, ref)]
    lines += table(names, ref, rates, ratios, cpus, us_of)
    return "\n".join(lines + generations(names, ref, per_gen)) + "\n"


def turn(procs, name, secs, seq, runs, rnd, place, gen):
    """One timed turn of configuration `name`, appended to `seq` and
    written to runs.txt.  @return : (name, steps/s, CPU us per step)."""
    p = procs[name]
    p.stdin.write("run %g\n" % secs)
    words = read_line(name, p, 60 + 10 * secs).split()
    t = (name, float(words[1]), float(words[3]) if len(words) > 3 else 0.0)
    seq.append(t)
    runs.write("round %d place %d cfg %s steps_per_s %.3f gen %d cpu_us %.2f\n" %
               (rnd, place, name, t[1], gen, t[2]))
    return t


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    out, kind, nrounds, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    configs = [c.split() for c in sys.argv[5:]]
    names = [c[0] for c in configs]
    refs = [c[0] for c in configs if c[1] == "plain"]
    if not refs or len(set(names)) != len(names):
        sys.exit("need a plain configuration, and distinct names")
    os.makedirs(out, exist_ok=True)
    budget = float(os.environ.get("BUDGET", "300"))
    t0 = time.monotonic()
    gens = max(1, int(os.environ.get("GENERATIONS", "1")))
    per_gen = (nrounds + gens - 1) // gens
    sandwich = os.environ.get("SANDWICH", "0") not in ("", "0")
    others = [n for n in names if n != refs[0]]
    rows, losses, rnd, turns, gen_of = [], {}, 0, [], {}
    runs = open(os.path.join(out, "runs.txt"), "w")
    for gen in range(gens):
        if time.monotonic() - t0 > budget:
            break
        gdir = os.path.join(out, "g%d" % gen) if gens > 1 else out
        os.makedirs(gdir, exist_ok=True)
        procs = {c[0]: start(gdir, kind, c[0], c[1:]) for c in configs}
        for name, p in procs.items():
            line = read_line(name, p, 300)
            if line != "ready":
                sys.exit("config %s: said %r, not ready" % (name, line))
        print("generation %d: all %d ready at %.1f s" % (gen, len(procs), time.monotonic() - t0),
              flush=True)
        seq = []
        for _ in range(per_gen):
            if rnd >= nrounds or time.monotonic() - t0 > budget:
                break
            if sandwich:
                k = rnd % len(others)
                order = [x for o in others[k:] + others[:k] for x in (refs[0], o)]
            else:
                order = names[rnd % len(names):] + names[:rnd % len(names)]
            gen_of[rnd] = gen
            for place, name in enumerate(order):
                rows.append((rnd, place) + turn(procs, name, secs, seq, runs, rnd, place, gen))
            runs.flush()
            rnd += 1
        if sandwich and seq:    # the last configuration's turn needs a reference after it
            turn(procs, refs[0], secs, seq, runs, rnd - 1, 2 * len(others), gen)
        turns.append(seq)
        for name, p in procs.items():
            try:
                rest, _ = p.communicate("quit\n", timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                rest = ""
            losses.setdefault(name, []).extend(l for l in rest.split("\n") if l.startswith("loss"))
    runs.close()
    losses = {k: " ".join(v) for k, v in losses.items()}
    text = summarize_sandwich(names, refs[0], turns) if sandwich else \
        summarize(names, refs[0], rows, nrounds, gen_of)
    text += "last loss per process: " + ", ".join("%s %s" % kv for kv in losses.items()) + "\n"
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


main()
