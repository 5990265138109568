#!/bin/bash
# tests/gpu/profile_parts.sh OUTDIR - where the time of a traced training
# run goes, by library and by function (perf's cpu-clock sampling, which
# works in a VM): bench/gpu_steps.py WORKLOAD under plain and under each
# configuration of CONFIGS ("TAG [VAR=VALUE...]" a line, all `cuprobe run`),
# profiled with the perf packed by tests/gpu/perfkit.sh into build/perfkit.
# Writes OUTDIR/TAG.out (steps/s), TAG-dso.txt (by thread name and library)
# and TAG-sym.txt (the python3 threads by library and function).
#   WORKLOAD (alloc), SECS (4), WARM (1); the allocator is PyTorch's default
#   unless PYTORCH_CUDA_ALLOC_CONF is set.
OUT=${1:-${OUT:-profile-out}}; mkdir -p "$OUT" || exit 1
K=$PWD/build/perfkit
[ -x "$K/perf" ] || { echo "skip: no build/perfkit (run tests/gpu/perfkit.sh where perf is installed)" | tee "$OUT/summary.txt"; exit 0; }
WORKLOAD=${WORKLOAD:-alloc}; SECS=${SECS:-4}
export GPU_STEPS_WARM_S=${WARM:-1}
CONFIGS=${CONFIGS:-"c0 CUPROBE_STACK_CACHE=0
c1 CUPROBE_STACK_CACHE=1"}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
perf() { "$K/ld-linux-x86-64.so.2" --library-path "$K" "$K/perf" "$@"; }
prof() {    # TAG CMD... : profile one run
    local n=$1; shift
    perf record -q -F 4000 -o "$T/$n.data" -- "$@" >"$OUT/$n.out" 2>&1
    echo "$n $(grep steps_per_s "$OUT/$n.out")" | tee -a "$OUT/summary.txt"
    perf report -i "$T/$n.data" --no-children --sort comm,dso --stdio 2>/dev/null | grep "%" | head -25 >"$OUT/$n-dso.txt"
    perf report -i "$T/$n.data" --no-children --comm python3 --sort dso,sym --stdio 2>/dev/null |
        grep "%" | head -80 >"$OUT/$n-sym.txt"
    rm -f "$T"/*.data "$T"/*.trace
}
: >"$OUT/summary.txt"
prof "$WORKLOAD-plain" python3 bench/gpu_steps.py "$WORKLOAD" "$SECS"
while read -r tag vars; do
    [ -n "$tag" ] && prof "$WORKLOAD-$tag" env $vars "$PWD/build/cuprobe" run -o "$T/t-%p.trace" -- \
        python3 bench/gpu_steps.py "$WORKLOAD" "$SECS"
done <<<"$CONFIGS"
