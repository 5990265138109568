#!/bin/sh
# tests/gpu/accuracy/run.sh [OPTIONS] OUTDIR - the accuracy suite: every
# workload of tests/gpu/accuracy, clean and with a planted bug, under
# `cuprobe run`; OUTDIR/accuracy.md gets the table (run.py says how, and
# takes the options: -j, --shard, --only, --deadline, --keep-traces).
# Run from anywhere after `make`; about 5 minutes on one H100 with -j 4.
[ $# -gt 0 ] || set -- "${OUT:-accuracy-out}"
exec python3 "$(dirname "$0")/run.py" "$@"
