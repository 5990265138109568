#!/bin/bash
# tests/gpu/compile_clean.sh [OUTDIR] - a clean torch.compile training run
# under `cuprobe run` (1 GPU, under 2 minutes): every process of the run
# (the program, Inductor's compile workers, their launchers) is judged
# together and the report must have no warning or error (compile
# workers that only call cuInit are info, not no-gpu-used warnings).
OUT=${1:-${OUT:-compile-out}}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CP="$ROOT/build/cuprobe"
python3 -c 'import torch, triton' 2>/dev/null || { echo "SKIP compile_clean: torch or triton cannot be imported"; exit 77; }
d="$OUT/compile"; rm -rf "$d"; mkdir -p "$d"
timeout 300 "$CP" run -o "$d/c.%p.trace" -- python3 "$ROOT/tests/gpu/compile_worker.py" 2>&1 | tail -n 3
echo "traces: $(ls "$d"/*.trace | wc -l)"
"$CP" report --no-progress "$d" >"$OUT/report-compile.txt" 2>&1
"$CP" report --no-progress --list "$d" | tee "$OUT/report-compile.list"
"$CP" report --no-progress --fail-on warning "$d" >/dev/null 2>&1; rc=$?
if [ $rc -eq 0 ]; then echo "compile_clean: PASS (no warning; report in $OUT)"; else
    echo "compile_clean: FAIL (--fail-on warning exited $rc; report in $OUT/report-compile.txt)"; fi
exit $rc
