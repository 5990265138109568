#!/bin/sh
# framework_jax_pool: JAX's own pool in the report.  tests/py/jax_pool_prog.py
# runs on the stand-in JAX (tests/py/standins, installed under a
# site-packages as pip puts the real one), whose XLA pool is taken from the
# fake driver (1 GiB) at start-up: 75% of the card by default.  The driver
# sees that one allocation and nothing after, so:
#   - an OOM inside the pool gets an oom finding from XLA's own numbers
#     (the companion's jax.oom record): the pool is a fraction of the card,
#     the pool is full, fragmented pool; caught (seen as raised, CPython
#     3.12+) and uncaught (seen at exit, every version); its advice names
#     XLA's settings with values XLA takes;
#   - memory kept from step to step is found from XLA's samples, at the
#     line of the step whose results are kept, even when the whole loop
#     takes a fraction of a second;
#   - the pool itself is no leak and no stray device, on one GPU or two.
. "$ROOT/tests/sh/lib.sh"
need_py_fake
. "$ROOT/tests/sh/lib_explain.sh"
PROG="$ROOT/tests/py/jax_pool_prog.py"
OOM_LINE="jax_pool_prog\.py:$(line_of OOM) \(arr\)"
T="XLA's pool could not serve"

# pool_ok NAME: the pool is neither a leak nor a stray, and nothing else
# is wrong with a run that had no OOM and kept nothing.
pool_ok() {
    has "^info +\[leak\] held by allocator \(JAX/XLA allocator\)" "$1"
    has_not "^(error|warning) +\[(leak|stray-device|memory-growth)\]" "$1"
    has_not "\[stray-device\]" "$1"
}

# A CPython with sys.monitoring (3.12+), as "python3" first on PATH.
py312=$(pythons | while read -r p_ id_; do
    case "$id_" in 3.1[2-9].*|3.[2-9][0-9].*) echo "$p_"; break ;; esac
done)

# 1. Uncaught, seen at exit: the pool is a fraction of the card, and the
#    run died of it (fatal-error joins the finding, no finding of its own).
explain uncaught STANDIN_JAX_DRIVER=1 -- uncaught
rc_is uncaught 1
has "^error +\[oom\] $T 200\.00 MiB on GPU 0 .*: the pool is a fraction of the card: XLA took 75% at start-up$" uncaught
has "XLA's pool on this device: 700\.00 MiB in use of its 768\.00 MiB limit \(75% of the card's 1\.00 GiB\), peak 700\.00 MiB, largest free block 68\.00 MiB; 7 allocations so far\." uncaught
has "XLA raised jaxlib\.xla_extension\.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 209715200 bytes\." uncaught
has "^    at your line .*$OOM_LINE$" uncaught
has "The program did not catch it \(seen at exit\)\." uncaught
has "Verdict: the pool is a fraction of the card: XLA took 75% at start-up: 700\.00 MiB in use and 200\.00 MiB requested need 900\.00 MiB, which the card \(1\.00 GiB\) could hold, but the pool's limit is 768\.00 MiB\." uncaught
has "Advice: let XLA's pool take more of the card: XLA_PYTHON_CLIENT_MEM_FRACTION=\.90 " uncaught
has "XLA_PYTHON_CLIENT_PREALLOCATE=false alone keeps the limit" uncaught
has "XLA_PYTHON_CLIENT_ALLOCATOR=platform has no pool" uncaught
has "The run died of it: jaxlib\.xla_extension\.XlaRuntimeError: RESOURCE_EXHAUSTED" uncaught
has_not "\[fatal-error\]" uncaught
[ "$(grep -cE "^error +\[oom\]" "$TMP/uncaught.report")" -eq 1 ] || die "uncaught: one oom finding expected"
expect_grep '"verdict": *"pool limit"' "$TMP/uncaught.json"
expect_grep '"request_bytes": *209715200' "$TMP/uncaught.json"
expect_grep '"suggested_mem_fraction": *"\.90"' "$TMP/uncaught.json"
expect_grep '"bytes_limit": *805306368' "$TMP/uncaught.json"
expect_grep '"seen": *"exit"' "$TMP/uncaught.json"
has_not "^(error|warning) +\[leak\]" uncaught

# 2. Caught (CPython 3.12+): fragmented pool, the fraction of the card,
#    XLA_CLIENT_MEM_FRACTION named as the process named it, and a program
#    with a sys.monitoring tool of its own sees the same exceptions.
if [ -z "$py312" ]; then
    echo "no CPython 3.12 or later here: caught OOMs not tested"
else
    mkdir -p "$TMP/py312" && ln -s "$py312" "$TMP/py312/python3"
    P="PATH=$TMP/py312:$PATH"
    explain full "$P" STANDIN_JAX_DRIVER=1 XLA_PYTHON_CLIENT_MEM_FRACTION=.95 -- full
    rc_is full 0
    has "^error +\[oom\] $T 200\.00 MiB on GPU 0 .*: the pool is full$" full
    has "Verdict: the pool is full: 900\.00 MiB in use of the pool's 972\.80 MiB limit left 72\.80 MiB, less than the 200\.00 MiB requested; the whole card could not hold it either\." full
    has "XLA's settings in the process: XLA_PYTHON_CLIENT_MEM_FRACTION=\.95\." full
    has "Advice: reduce what is live at the peak" full
    has_not "XLA_PYTHON_CLIENT_MEM_FRACTION=\.[0-9]* \(" full
    has "The program caught it and went on \(exit status 0\)\." full

    explain frag "$P" STANDIN_JAX_DRIVER=1 -- frag
    rc_is frag 0
    has "^error +\[oom\] $T 64\.00 MiB on GPU 0 .*: fragmented pool$" frag
    has "Verdict: fragmented pool: XLA's pool had 384\.00 MiB free, enough for the 64\.00 MiB requested, but its largest free block was 32\.00 MiB\." frag
    has "A larger pool gives the same pieces more room: XLA_PYTHON_CLIENT_MEM_FRACTION=\.85\." frag
    has "XLA_PYTHON_CLIENT_ALLOCATOR=platform has no pool to fragment" frag
    expect_grep '"verdict": *"fragmentation"' "$TMP/frag.json"

    explain newvar "$P" STANDIN_JAX_DRIVER=1 XLA_CLIENT_MEM_FRACTION=.7 -- limit
    rc_is newvar 0
    has "^error +\[oom\] $T 200\.00 MiB on GPU 0 .*: the pool is a fraction of the card: XLA took 70% at start-up$" newvar
    has "Advice: let XLA's pool take more of the card: XLA_CLIENT_MEM_FRACTION=\.90 " newvar
    has_not "XLA_PYTHON_CLIENT_MEM_FRACTION=" newvar
    expect_grep '"seen": *"sys\.monitoring"' "$TMP/newvar.json"

    explain sysmon "$P" STANDIN_JAX_DRIVER=1 -- sysmon
    explain sysmon_off "$P" STANDIN_JAX_DRIVER=1 CUPROBE_FRAMEWORK=0 -- sysmon
    rc_is sysmon 0
    has "^error +\[oom\] $T 200\.00 MiB" sysmon
    cmp -s "$TMP/sysmon.out" "$TMP/sysmon_off.out" ||
        { cat "$TMP/sysmon.out" "$TMP/sysmon_off.out"; die "the program's own RAISE events differ"; }
    expect_grep "^own RAISE events: [1-9]" "$TMP/sysmon.out"
fi

# 3. Memory kept every step, seen only in XLA's samples.
explain growth STANDIN_JAX_DRIVER=1 CUPROBE_FRAMEWORK_INTERVAL=0.02 -- growth
rc_is growth 0
has "^warning +\[memory-growth\] memory in use in XLA's pool grew by [0-9.]+ MiB while the program kept working" growth
has "The driver sees none of it: XLA took its pool \(768\.00 MiB\) from the driver" growth
has "Cost: at this rate the pool's limit \(768\.00 MiB; 320\.00 MiB in use at the end\) is reached" growth
expect_grep '"source": *"xla_pool_samples"' "$TMP/growth.json"
[ "$(grep -cE "\[memory-growth\]" "$TMP/growth.report")" -eq 1 ] || die "growth: one finding expected"
# After a plateau of 30 steps, 30 that keep 8 MiB each: the growth is
# measured from the plateau's end, not the run's start (240 MiB: from the
# run's start it would be more than 248; the last eighth's floor is its
# lowest sample, up to an eighth of the growth and a step below the end).
explain plateau STANDIN_JAX_DRIVER=1 CUPROBE_FRAMEWORK_INTERVAL=0.02 -- plateau
rc_is plateau 0
has "Lowest in use in each eighth of the (second half of the work \(kernel launches; the first half was its warm-up\)|work after its warm-up plateau)" plateau
PYTHONPATH="$ROOT/tests/py" python3 - "$TMP/plateau.json" <<'PY' || die "plateau: growth not measured from the plateau"
import sys
from report_findings import findings
d = findings(sys.argv[1], "memory-growth")[0]["details"]
print(d["plateau_bytes"] >> 20, d["growth_bytes"] >> 20)
sys.exit(not (d["plateau_bytes"] > 0 and 176 << 20 <= d["growth_bytes"] <= 248 << 20))
PY

# 3b. A Flax-like loop at the default sampling: 40 calls of a jitted step
#     whose executions take 1 ms each (0.3 s in all, as a small model's
#     loop on a GPU), each call's parameters kept, then a last pass over
#     them.  The growth is found and its first site is the line that calls
#     the step (XLA keeps no allocation stacks: where the samples were
#     taken); the loop keeping a running mean instead is quiet.
# at_step NAME: one memory-growth finding, its first site the line that
# calls the step, seen by 8 samples or more.
at_step() {
    has "^warning +\[memory-growth\] memory in use in XLA's pool grew by [0-9.]+ MiB while the program kept working" "$1"
    has "XLA keeps no allocation stacks: the sites are where the program was when the samples saw the pool grow" "$1"
    [ "$(grep -cE "\[memory-growth\]" "$TMP/$1.report")" -eq 1 ] || die "$1: one finding expected"
    PYTHONPATH="$ROOT/tests/py" python3 - "$TMP/$1.json" "$PROG" "$(line_of STEP)" <<'PY' ||
import sys
from report_findings import findings
f = findings(sys.argv[1], "memory-growth")[0]
top = f["sites"][0]["python"][0]
print("first site", top["file"], top["line"], f["sites"][0]["note"])
sys.exit(not (top["file"] == sys.argv[2] and top["line"] == int(sys.argv[3]) and
              f["details"]["samples_at_sites"] >= 8))
PY
        die "$1: the first site is not the step's line"
}
# train_case SCENARIO: run it with 1 ms of device time per execution.
train_case() {
    explain "$1" STANDIN_JAX_DRIVER=1 STANDIN_JAX_EXEC_S=0.001 -- "$1"
    rc_is "$1" 0
}
train_case train
at_step train
# 3c. The mean taken leaf by leaf over four leaves, as tree_map over a Flax
#     MLP's parameters does: the last pass is longer than the loop (in
#     time and in launches) and runs at other lines; the growth is still
#     found, kept to the end.  The program lets the kept arrays go as it
#     ends, a few launches after the last look: that drop is its teardown.
#     (A machine too loaded for the companion to look during the last pass
#     leaves no flat top to see: the growth is then found to the end.)
train_case train_long
at_step train_long
if grep -q "^  Then it grew no more" "$TMP/train_long.report"; then
    has "\[memory-growth\] .*, and kept it to the end$" train_long
    has "Then it grew no more but let nothing go: the last [5-7][0-9]% of the work" train_long
fi
# 3d. After a warm-up that launched more kernels than the loop and kept
#     nothing (XLA autotuning the first call): the growth is measured from
#     the plateau's end.
train_case train_warm
at_step train_warm
has "Lowest in use in each eighth of the work after its warm-up plateau" train_warm
train_case train_clean
pool_ok train_clean

# 4. The same steps keeping nothing: no finding about the pool at all, on
#    one GPU and on two (XLA takes a pool on each).
explain steady STANDIN_JAX_DRIVER=1 CUPROBE_FRAMEWORK_INTERVAL=0.02 -- steady
rc_is steady 0
pool_ok steady
has_not "\[oom\]" steady
explain steady2 STANDIN_JAX_DRIVER=1 FAKECUDA_DEVICES=2 CUPROBE_FRAMEWORK_INTERVAL=0.02 -- steady
rc_is steady2 0
pool_ok steady2
has "memory on GPU 1: peak 768\.00 MiB" steady2
echo "ok"
