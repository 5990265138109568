#!/bin/sh
# run_model.sh - the whole run judged as one, on the fake driver
# with two GPUs, through `cuprobe run`:
#   two ranks (LOCAL_RANK 0 and 1) both on GPU 0 -> rank-placement error;
#   the same ranks on their own GPUs under a launching sh -> --fail-on
#   warning passes (the sh is their launcher: info);
#   a GPU process whose fork+exec'd worker only calls cuInit, and a child
#   that exec'd and then used CUDA -> --fail-on warning passes;
#   a SIGKILLed run -> "killed by signal 9" (the front end reaped it), exit 0
#   (3 under --fail-on warning);
#   %r follows SLURM_PROCID and a launcher writes no rank0 file;
#   `cuprobe run` says where its traces are; `cuprobe report DIR` and
#   `cuprobe report` with no TRACE read them; 20 quick runs into one
#   directory each find their own trace.
. "$ROOT/tests/sh/lib.sh"
[ -f "$SHIM" ] && [ -x "$ANA" ] && [ -x "$CUPROBE" ] || skip "shim, analyzer or front end not built"
P="$B/tests/progs/run_ranks"
[ -x "$P" ] || die "$P not built"
export LD_LIBRARY_PATH="$FAKE_DIR" FAKECUDA_DEVICES=2 P
run() { d=$TMP/$1; shift; mkdir -p "$d"; "$CUPROBE" run -o "$d/t-%p.trace" -- "$@"; }
report() { "$ANA" report --no-progress "$@"; }

# 1. both ranks on GPU 0 of two.
run same sh -c 'RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 "$P" rank 0 &
                RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 "$P" rank 0 & wait' 2>/dev/null ||
    die "same: run failed"
report --list "$TMP"/same/*.trace >"$TMP/same.list"
expect_grep '^rank-placement error 2$' "$TMP/same.list"
report "$TMP"/same/*.trace >"$TMP/same.txt"
expect_grep 'ranks 0, 1 on host .* all work on GPU 0 .* while 1 of the host.s 2 GPUs sit idle' "$TMP/same.txt"
expect_grep 'idle: GPU 1' "$TMP/same.txt"

# 2. each rank on its own GPU, under a launching sh (the root trace).
run own sh -c 'RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 "$P" rank 0 &
               RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 "$P" rank 1 & wait' 2>/dev/null ||
    die "own: run failed"
[ "$(ls "$TMP"/own/*.trace | wc -l)" -eq 3 ] || die "own: expected 3 traces (sh and two ranks)"
report --fail-on warning "$TMP"/own/*.trace >"$TMP/own.txt"; rc=$?
[ $rc -eq 0 ] || { cat "$TMP/own.txt"; die "own GPUs: --fail-on warning exit $rc"; }
expect_grep 'info .*\[no-gpu-used\] did not use a GPU: launcher of rank' "$TMP/own.txt"
# A launcher's finding explains itself, not the check's problem (no "install
# the driver" advice for torchrun).
expect_grep 'Fix: Nothing to fix: the processes it started did the GPU work' "$TMP/own.txt"
expect_no_grep 'install or expose the driver' "$TMP/own.txt"
expect_no_grep 'rank-placement' "$TMP/own.txt"

# 3. a compile worker that only calls cuInit, fork+exec'd by the GPU process;
#    and a child that exec'd, then used CUDA: neither is a problem.
for m in fork-exec-probe exec-child; do
    run "$m" "$P" "$m" 2>/dev/null || die "$m: run failed"
    [ "$(ls "$TMP/$m"/*.trace | wc -l)" -eq 2 ] || die "$m: expected 2 traces"
    report --fail-on warning "$TMP/$m"/*.trace >"$TMP/$m.txt"; rc=$?
    [ $rc -eq 0 ] || { cat "$TMP/$m.txt"; die "$m: --fail-on warning exit $rc"; }
    expect_no_grep 'fork-after-init' "$TMP/$m.txt"
done
expect_grep 'did not use a GPU: a helper of this run' "$TMP/fork-exec-probe.txt"
expect_grep 'Why: Compile workers, wrapper shells and device probes' "$TMP/fork-exec-probe.txt"
expect_no_grep 'install or expose the driver' "$TMP/fork-exec-probe.txt"

# 4. SIGKILL: a post-mortem, not bad input.
mkdir -p "$TMP/kill"
CUPROBE_FLUSH_MS=20 CUPROBE_LOG=0 "$CUPROBE" run -o "$TMP/kill/t-%p.trace" -- "$P" hold >"$TMP/kill.out" &
i=0; while ! grep -q ready "$TMP/kill.out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
sleep 0.3
kpid=$(sed -n 's/^HEADER .* pid=\([0-9]*\) .*/\1/p' "$TMP/kill/t-"*.trace 2>/dev/null | head -1)
[ -n "$kpid" ] || kpid=$(ls "$TMP"/kill/ | sed -n 's/^t-\([0-9]*\)\.trace$/\1/p' | head -1)
[ -n "$kpid" ] || die "kill: no trace to find the pid in"
kill -9 "$kpid"; wait
report "$TMP"/kill/t-*.trace >"$TMP/kill.txt" 2>"$TMP/kill.err"; rc=$?
[ $rc -eq 0 ] || { cat "$TMP/kill.txt" "$TMP/kill.err"; die "killed run: report exit $rc, expected 0"; }
# `cuprobe run` reaped it: the signal is named, not inferred.
expect_grep 'killed by signal 9 \(SIGKILL\), as .cuprobe run. saw it: no exit was recorded' "$TMP/kill.txt"
expect_grep 'Device memory held then: 6[4-9]' "$TMP/kill.txt"
expect_grep 'cuMemAlloc_v2 on GPU 0' "$TMP/kill.txt"
report --fail-on warning "$TMP"/kill/t-*.trace >/dev/null 2>&1; rc=$?
[ $rc -eq 3 ] || die "killed run: --fail-on warning exit $rc, expected 3"

# 5. %r follows SLURM_PROCID; a launcher with no rank writes no rank0 file.
mkdir -p "$TMP/names"
SLURM_PROCID=5 SLURM_LOCALID=1 "$CUPROBE" run -o "$TMP/names/rank%r-l%l.trace" -- "$P" rank 0 2>/dev/null ||
    die "names: run failed"
[ -f "$TMP/names/rank5-l1.trace" ] || { ls "$TMP/names"; die "%r/%l did not follow SLURM_PROCID/SLURM_LOCALID"; }
mkdir -p "$TMP/launch"
"$CUPROBE" run -o "$TMP/launch/rank%r.trace" -- sh -c 'RANK=0 "$P" rank 0' 2>/dev/null ||
    die "launch: run failed"
ls "$TMP/launch" >"$TMP/launch.ls"
[ "$(grep -c '^rank0\.' "$TMP/launch.ls")" -eq 1 ] || { cat "$TMP/launch.ls"; die "rank 0 must own rank0.trace alone"; }
expect_grep '^ranknorank-[0-9]*\.trace$' "$TMP/launch.ls"

# 6. where the traces went, and reading the last run of a directory.
mkdir -p "$TMP/disc" && cd "$TMP/disc" || die "cd"
"$CUPROBE" run -- "$P" rank 0 2>"$TMP/disc.err" || die "disc: run failed"
expect_grep '^cuprobe: 1 trace in this directory; report: cuprobe report$' "$TMP/disc.err"
"$CUPROBE" run -o "$TMP/own/u-%p.trace" -- "$P" rank 1 2>"$TMP/disc2.err" || die "disc2: run failed"
expect_grep "^cuprobe: 1 trace in $TMP/own; report: cuprobe report $TMP/own\$" "$TMP/disc2.err"
CUPROBE_LOG=0 "$CUPROBE" run -- "$P" rank 0 2>"$TMP/disc3.err" || die "disc3: run failed"
[ ! -s "$TMP/disc3.err" ] || die "CUPROBE_LOG=0 still printed: $(cat "$TMP/disc3.err")"
"$CUPROBE" report --no-progress >"$TMP/disc.txt" || die "report with no TRACE failed"
expect_grep '^cuprobe report.*: 1 trace$' "$TMP/disc.txt"
"$CUPROBE" report --no-progress "$TMP/own" >"$TMP/disc2.txt" || die "report DIR failed"
expect_grep '^cuprobe report.*: 1 trace$' "$TMP/disc2.txt"
# 7. quick runs one after another into one directory: each finds its own
# trace, also one written within the clock tick of the marker the front end
# makes before the run (file times are as coarse as the kernel's tick; with
# -newer alone about one run in eight said "0 traces" here).
mkdir -p "$TMP/quick"
i=0
while [ $i -lt 20 ]; do
    "$CUPROBE" run -o "$TMP/quick/q-%p.trace" -- "$P" rank 1 2>"$TMP/quick.err" ||
        die "quick run $i failed"
    grep -q "^cuprobe: 1 trace in $TMP/quick;" "$TMP/quick.err" ||
        die "quick run $i: $(cat "$TMP/quick.err")"
    i=$((i + 1))
done
echo "run_model: ok"
