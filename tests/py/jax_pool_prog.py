"""A JAX program on the stand-in JAX of tests/py/standins (XLA's pool,
preallocated: 75% of the card by default), run by tests/sh/framework_jax_pool.sh
under the shim on the fake driver (STANDIN_JAX_DRIVER=1, 1 GiB) and by
tests/py/framework_test.py with the companion's test sink.

Usage: jax_pool_prog.py SCENARIO.  Scenarios:
  limit     7 arrays of 100 MiB, then one of 200 MiB: more than the pool's
            limit, less than the card; the error is caught (exit 0)
  uncaught  the same, not caught (traceback, exit 1)
  frag      24 arrays of 32 MiB fill the pool, every other one is deleted,
            then one of 64 MiB: the room is there, not in one piece (caught)
  full      arrays of 100 MiB until 900 MiB, then 200 MiB (run it with a
            fraction of .95: the card itself is too small; caught)
  growth    40 steps STEP_S seconds apart (default 0.03), each with 8
            executions, keeping an 8 MiB array
  steady    the same steps, keeping nothing
  plateau   30 steps keeping nothing (the plateau), then 30 keeping 8 MiB
  train     a Flax-like loop: 40 calls of a jitted step (seven 1 MiB
            temporaries, 8 MiB of new parameters), each call's parameters
            kept in a list (the line marked "# STEP"), then their mean in
            eager operations (three a kept array, "# MEAN"); run it with
            STANDIN_JAX_EXEC_S (device time per execution) so that the loop
            takes a fraction of a second, as on a GPU
  train_clean  the same loop keeping a running mean instead
  train_warm  train after a warm-up of 1500 executions that keep nothing,
            as XLA's autotuning of the first call launches more kernels
            than a short loop: the plateau is most of the work
  train_long  train, its mean taken leaf by leaf over four leaves, as
            jax.tree_util.tree_map over a Flax MLP's four parameter arrays
            does: the last pass is longer than the loop, in time and in
            kernel launches
  sysmon    the limit scenario under a RAISE callback of the program's own
            (sys.monitoring, 3.12+, the debugger's tool id), which counts
            the exceptions it sees on the main thread
  tools     (3.12+) prints the sys.monitoring tool ids in use after an
            array was made
Each prints what it did; XLA's error reaches the program at the line marked
"# OOM" (the innermost line of the program's own).
"""
import os
import sys
import time

import jax
import jax.numpy as jnp

MiB = 1 << 20


def arr(nbytes):
    return jnp.zeros((nbytes // 4,), dtype=jnp.float32)  # OOM


def limit(catch):
    keep = [arr(100 * MiB) for _ in range(7)]
    try:
        big = arr(200 * MiB)
    except jax.errors.JaxRuntimeError as e:
        if not catch:
            raise
        print("caught:", str(e).splitlines()[0])
        big = None
    print("kept", len(keep), "big", big is not None)


def frag():
    keep = [arr(32 * MiB) for _ in range(24)]
    del keep[::2]
    try:
        arr(64 * MiB)
    except jax.errors.JaxRuntimeError as e:
        print("caught:", str(e).splitlines()[0])
    print("kept", len(keep))


def full():
    keep = [arr(100 * MiB) for _ in range(9)]
    try:
        arr(200 * MiB)
    except jax.errors.JaxRuntimeError as e:
        print("caught:", str(e).splitlines()[0])
    print("kept", len(keep))


@jax.jit
def step(n):
    for _ in range(7):
        arr(1 * MiB)
    return arr(n)


def steps(keep_from, n=40):
    kept = []
    for i in range(n):
        out = step(8 * MiB)
        if i >= keep_from:
            kept.append(out)
        time.sleep(float(os.environ.get("STEP_S", "0.03")))  # SLEEP
    print("steps", n, "kept", len(kept))


@jax.jit
def train_step(params):
    for _ in range(7):
        arr(1 * MiB)
    return arr(params.nbytes)


@jax.jit
def running_mean(avg, params):
    return arr(avg.nbytes)


def scaled_sum(acc, p):
    return arr(acc.nbytes), arr(acc.nbytes), arr(acc.nbytes)


def autotune(n):
    """n executions whose results are dropped at once: kernels launched,
    nothing kept."""
    for _ in range(n):
        arr(MiB)


def train(keep, n=40, leaves=1):
    params = arr(8 * MiB)
    history, avg = [], arr(8 * MiB)
    for i in range(n):
        params = train_step(params)  # STEP
        if keep:
            history.append(params)
        else:
            avg = running_mean(avg, params)
    for _ in range(leaves):
        for p in history:
            avg, _, _ = scaled_sum(avg, p)  # MEAN
    print("steps", n, "kept", len(history))


def sysmon():
    import threading

    mon = sys.monitoring
    seen = []
    main = threading.main_thread()

    def raised(code, off, exc):
        if threading.current_thread() is main:
            seen.append(type(exc).__name__)
    mon.use_tool_id(mon.DEBUGGER_ID, "program's own")
    mon.register_callback(mon.DEBUGGER_ID, mon.events.RAISE, raised)
    mon.set_events(mon.DEBUGGER_ID, mon.events.RAISE)
    limit(True)
    mon.set_events(mon.DEBUGGER_ID, 0)
    print("own RAISE events:", len(seen), sorted(set(seen)))


def main(scenario):
    print("devices:", jax.devices())
    if scenario in ("limit", "uncaught"):
        limit(scenario == "limit")
    elif scenario == "frag":
        frag()
    elif scenario == "full":
        full()
    elif scenario in ("growth", "steady"):
        steps(0 if scenario == "growth" else 40)
    elif scenario == "plateau":
        steps(30, 60)
    elif scenario in ("train", "train_clean"):
        train(scenario == "train")
    elif scenario == "train_warm":
        autotune(1500)
        train(True)
    elif scenario == "train_long":
        train(True, leaves=4)
    elif scenario == "sysmon":
        sysmon()
    elif scenario == "tools":
        arr(MiB)
        print("tools:", {i: sys.monitoring.get_tool(i) for i in range(6)
                         if sys.monitoring.get_tool(i)})
    else:
        print("unknown scenario", scenario, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
