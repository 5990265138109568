#!/bin/bash
# tests/gpu/profile_steady.sh OUTDIR - where a traced run's extra time goes
# in the steady state: bench/gpu_steps.py WORKLOAD profiled (perf's cpu-clock
# sampling, the perf packed by tests/gpu/perfkit.sh into build/perfkit) over
# its timed window only (perf --control: gpu_steps.py enables sampling after
# start-up and warm-up), plain and under each configuration of CONFIGS
# ("TAG [VAR=VALUE...]" a line, all `cuprobe run`; RUN_CP=PATH among the
# variables runs that front end instead of build/cuprobe), ROUNDS times in
# turn.
# The figure to read is samples per step by thread and library (the
# threads that run the steps are busy the whole window, so a cost anywhere
# shows as more samples per step, also one outside the shim's code, e.g.
# cache misses it causes in the driver or the interpreter).
#   WORKLOAD (mlp), SECS (4), WARM (2), ROUNDS (2), PIN (taskset -c list),
#   SYMOFF (1: also TAG-R-symoff.txt, the shim's samples by function+offset);
#   the allocator is PyTorch's default unless PYTORCH_CUDA_ALLOC_CONF is set.
# Writes OUTDIR/summary.txt, TAG-R-dso.txt, TAG-R-sym.txt and TAG-R-shim.txt
# (libcuprobe.so's functions only).
OUT=${1:-${OUT:-profile-out}}; mkdir -p "$OUT" || exit 1
K=$PWD/build/perfkit
[ -x "$K/perf" ] || { echo "skip: no build/perfkit (run tests/gpu/perfkit.sh where perf is installed)" | tee "$OUT/summary.txt"; exit 0; }
WORKLOAD=${WORKLOAD:-mlp}; SECS=${SECS:-4}; ROUNDS=${ROUNDS:-2}
export GPU_STEPS_WARM_S=${WARM:-2}
CONFIGS=${CONFIGS:-"traced
nostack CUPROBE_STACK_DEPTH=0"}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
PINC=(); [ -n "$PIN" ] && taskset -c "$PIN" true 2>/dev/null && PINC=(taskset -c "$PIN")
perf() { "$K/ld-linux-x86-64.so.2" --library-path "$K" "$K/perf" "$@"; }
# DIGITS LINES perf-report-options... : prof's report of run $n, each line
# led by its samples per step ($steps, the run's step count)
per_step() {
    local d=$1 l=$2; shift 2
    perf report -i "$T/$n.data" -n --no-children --stdio "$@" 2>/dev/null |
        awk -v s="${steps:-0}" -v fmt="%8.${d}f samples/step  %s\n" '/%/ && s > 0 { printf fmt, $2 / s, $0 }' |
        head -"$l"
}
prof() {    # TAG CMD... : profile one run's timed window
    local n=$1; shift
    rm -f "$T/ctl"; mkfifo "$T/ctl"
    GPU_STEPS_PERF_CTL="$T/ctl" perf record -q -F 4000 -D -1 --control "fifo:$T/ctl" \
        -o "$T/$n.data" -- "${PINC[@]}" "$@" >"$OUT/$n.out" 2>&1
    local sps steps
    sps=$(awk '/^steps_per_s/ {print $2}' "$OUT/$n.out"); steps=$(awk '/^steps / {print $2}' "$OUT/$n.out")
    per_step 2 25 --sort comm,dso >"$OUT/$n-dso.txt"
    per_step 3 60 --sort comm,dso,sym >"$OUT/$n-sym.txt"
    # The shim's own functions, all of them (the list above stops at 60).
    per_step 4 80 --dsos libcuprobe.so --sort comm,sym >"$OUT/$n-shim.txt"
    # Where inside them (SYMOFF=1): the shim's samples by function and
    # offset, to be read against a disassembly of the same libcuprobe.so
    # (objdump -d; this host has none).
    [ "${SYMOFF:-0}" = 1 ] && perf script -i "$T/$n.data" -F comm,ip,sym,symoff,dso 2>/dev/null |
        awk '/libcuprobe/ { n[$1 " " $3]++ } END { for (k in n) print n[k], k }' | sort -rn >"$OUT/$n-symoff.txt"
    echo "$n steps_per_s ${sps:-FAILED} steps ${steps:-0} samples $(perf report -i "$T/$n.data" --stdio 2>/dev/null | awk '/^# Samples/ {print $3; exit}')" |
        tee -a "$OUT/summary.txt"
    rm -f "$T"/*.data "$T"/*.trace
}
: >"$OUT/summary.txt"
for ((r = 0; r < ROUNDS; r++)); do
    prof "plain-$r" python3 bench/gpu_steps.py "$WORKLOAD" "$SECS"
    while read -r tag vars; do
        # RUN_CP=PATH among the variables: another build's front end (and
        # the shim beside it), e.g. build/oldshim/bin/cuprobe.
        cp=$PWD/build/cuprobe
        for v in $vars; do case $v in RUN_CP=*) cp=${v#RUN_CP=} ;; esac; done
        [ -n "$tag" ] && prof "$tag-$r" env $vars "$cp" run -o "$T/t-%p.trace" -- \
            python3 bench/gpu_steps.py "$WORKLOAD" "$SECS"
    done <<<"$CONFIGS"
done
