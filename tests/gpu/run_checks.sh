#!/bin/bash
# tests/gpu/run_checks.sh - every tests/gpu/check_*.py and clean_*.py under
# `cuprobe run`, then `cuprobe report` of its traces into $OUT/report-NAME.txt
# (and --list into report-NAME.list).  2-GPU scripts are skipped on 1 GPU.
#   ONLY (names, e.g. "clean_gpt2"): those scripts alone; REPEAT (1): run
#   each that many times (the Nth run's files get the suffix -N from the
#   second on: is a difference between two shims the shim or the run?);
#   RUN_CP (build/cuprobe): the front end that runs the scripts (another
#   build's, e.g. build/oldshim/cuprobe, whose libcuprobe.so lies beside it);
#   the reports always come from build/cuprobe.
OUT=${OUT:-validation-out}
. tests/gpu/analyzer_ready.sh
mkdir -p "$OUT"
CP="$PWD/build/cuprobe"
RUN_CP=${RUN_CP:-$CP}
ngpu=$(python3 -c 'import torch; print(torch.cuda.device_count())')
for s in tests/gpu/check_*.py tests/gpu/clean_*.py; do
  for ((rep = 1; rep <= ${REPEAT:-1}; rep++)); do
    name=$(basename "$s" .py)
    [ -z "$ONLY" ] || [[ " $ONLY " == *" $name "* ]] || continue
    case $name in check_xdev|check_stray) [ "$ngpu" -ge 2 ] || { echo "skip $name (1 GPU)"; continue; } ;; esac
    [ "$rep" -gt 1 ] && name=$name-$rep
    rm -f "$OUT/$name".*.trace
    echo "=== $name"
    PYTHONUNBUFFERED=1 "$RUN_CP" run -o "$OUT/$name.%p.trace" -- python3 "$s" 2>&1 | tail -n 3
    timeout 120 "$CP" report --no-progress "$OUT/$name".*.trace >"$OUT/report-$name.txt" 2>&1 \
        || { [ $? = 124 ] && timeout 120 "$CP" report --no-progress --no-symbolize "$OUT/$name".*.trace \
             >"$OUT/report-$name.txt" 2>&1; }
    timeout 120 "$CP" report --no-progress --no-symbolize --list "$OUT/$name".*.trace 2>&1 \
        | tee "$OUT/report-$name.list"
  done
done
