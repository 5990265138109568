#!/bin/sh
# bench/gpu_pairs.sh - steps/s with and without the shim, as alternating
# pairs (plain, traced, plain, traced, ...) in one sitting; prints each pair
# and the median of the per-pair ratios traced/plain.
# Usage: gpu_pairs.sh WORKLOAD PAIRS SECONDS [extra env for traced runs...]
#   e.g. sh bench/gpu_pairs.sh mlp 8 6
#        sh bench/gpu_pairs.sh mlp 6 6 CUPROBE_PYTHON=0
B=${B:-build}
W=$1; P=${2:-6}; S=${3:-8}; shift 3
T=$(mktemp -d)
i=0
while [ $i -lt "$P" ]; do
    a=$(python3 bench/gpu_steps.py "$W" "$S" | awk '/steps_per_s/ {print $2}')
    b=$(env "$@" CUPROBE_OUTPUT="$T/t-%p.trace" LD_PRELOAD="$PWD/$B/libcuprobe.so" \
        python3 bench/gpu_steps.py "$W" "$S" | awk '/steps_per_s/ {print $2}')
    rm -f "$T"/t-*.trace
    echo "pair $i plain $a traced $b ratio $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.4f", b/a}')"
    i=$((i + 1))
done | tee "$T/pairs"
awk '{print $NF}' "$T/pairs" | sort -n | awk -v w="$W" -v x="$*" '{r[NR]=$1} END {
    m = (NR % 2) ? r[(NR+1)/2] : (r[NR/2] + r[NR/2+1]) / 2
    printf "%s %s: median traced/plain over %d pairs = %.4f (%.2f%% %s)\n", w, x, NR, m,
        (m < 1 ? (1-m)*100 : (m-1)*100), (m < 1 ? "slower" : "faster") }'
rm -rf "$T"
