#!/bin/bash
# tests/gpu/explore_evidence.sh OUTDIR - a real PyTorch run for `cuprobe
# stats` and the HTML page: tests/gpu/check_growth.py (a tensor kept every
# step) and tests/gpu/check_oom_frag.py (a fragmentation OOM), each traced
# under build/cuprobe, then `stats` (text and CSV), `report` and
# `report --html` into OUTDIR/NAME/.  Needs python3 with a CUDA torch.
#   tests/gpu/explore_evidence.sh --again OUTDIR  makes the stats, reports
# and pages again from the traces an earlier run left in OUTDIR/NAME/, with
# this build's analyzer: no GPU, no program run.
AGAIN=0
[ "$1" = --again ] && { AGAIN=1; shift; }
OUT=${1:-explore-evidence-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CP="$ROOT/build/cuprobe"
for name in check_growth check_oom_frag; do
    if [ $AGAIN = 0 ]; then
        rm -rf "${OUT:?}/$name" && mkdir -p "$OUT/$name"
        (cd "$OUT/$name" && PYTHONUNBUFFERED=1 timeout 300 "$CP" run -o "$OUT/$name/t.%p.trace" -- \
            python3 "$ROOT/tests/gpu/$name.py" >run.out 2>&1; echo "exit $?" >>run.out)
    fi
    "$CP" stats "$OUT/$name" >"$OUT/$name/stats.txt" 2>&1
    "$CP" stats --csv "$OUT/$name" >"$OUT/$name/stats.csv" 2>&1
    "$CP" report "$OUT/$name" >"$OUT/$name/report.txt" 2>&1
    "$CP" report --html "$OUT/$name/report.html" "$OUT/$name" >/dev/null 2>&1
    echo "== $name"; tail -n 2 "$OUT/$name/run.out"; head -n 30 "$OUT/$name/stats.txt"
done
