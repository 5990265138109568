#!/bin/sh
# tests/gpu/accuracy/run.sh OUTDIR - the accuracy suite: every workload of
# tests/gpu/accuracy, clean and with a planted bug, under `cuprobe run`;
# OUTDIR/accuracy.md gets the table (see run.py).  Run from anywhere after
# `make`; about 5 minutes on one H200.
OUT=${1:-${OUT:-accuracy-out}}
exec python3 "$(dirname "$0")/run.py" "$OUT"
