#!/bin/sh
# bench/gpu_ab.sh - steps/s of bench/gpu_steps.py under two environments, as
# alternating pairs (A, B, B, A, A, B, ...) in one sitting; prints each pair and the
# median of the per-pair ratios B/A.
# Usage: gpu_ab.sh WORKLOAD PAIRS SECONDS 'ENV A' 'ENV B'
#   ENV is a space-separated list of VAR=value given to env(1); the word
#   SHIM stands for LD_PRELOAD=<build>/libcuprobe.so plus a scratch
#   CUPROBE_OUTPUT.  Examples:
#     sh bench/gpu_ab.sh mlp 8 5 '' 'SHIM'                         # shim cost
#     sh bench/gpu_ab.sh mlp 6 5 'SHIM CUPROBE_PYTHON=0' 'SHIM'    # Python stacks
B=${B:-build}
W=$1; P=$2; S=$3; A=$4; Bv=$5
T=$(mktemp -d)
expand() {
    out=""
    for w in $1; do
        if [ "$w" = SHIM ]; then
            w="LD_PRELOAD=$PWD/$B/libcuprobe.so CUPROBE_OUTPUT=$T/t-%p.trace"
        fi
        out="$out $w"
    done
    echo "$out"
}
EA=$(expand "$A"); EB=$(expand "$Bv")
steps() {   # ENV (expanded) -> steps/s of one run
    env $1 python3 bench/gpu_steps.py "$W" "$S" | awk '/steps_per_s/ {print $2}'
}
i=0
while [ $i -lt "$P" ]; do
    # B first in every other pair: the first of two back-to-back runs
    # measured faster on the H200 whatever it ran (BENCHMARKS.md 2f).
    if [ $((i % 2)) = 0 ]; then
        a=$(steps "$EA"); b=$(steps "$EB")
    else
        b=$(steps "$EB"); a=$(steps "$EA")
    fi
    rm -f "$T"/t-*.trace
    echo "pair $i A $a B $b ratio $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.4f", b/a}')"
    i=$((i + 1))
done | tee "$T/pairs"
awk '{print $NF}' "$T/pairs" | sort -n | awk -v w="$W" -v a="$A" -v b="$Bv" '{r[NR]=$1} END {
    m = (NR % 2) ? r[(NR+1)/2] : (r[NR/2] + r[NR/2+1]) / 2
    printf "%s: A=[%s] B=[%s]: median B/A over %d pairs = %.4f\n", w, a, b, NR, m }'
rm -rf "$T"
