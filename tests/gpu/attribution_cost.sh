#!/bin/sh
# tests/gpu/attribution_cost.sh [OUTDIR] - what attribution (cuprobe run
# --attribute) costs GPT-2 and a launch-bound MLP in each PyTorch allocator
# mode, and CuPy with its memory hook: alternating blocks off/on in one
# process per row, under the shim (build/cuprobe; see attribution_cost.py).
# Prints a markdown table, also written to OUTDIR/attribution_cost.md.
# About 5 minutes on one H100; rows whose module (torch, transformers,
# cupy) is missing say skipped.  Run from anywhere after `make`.
OUT=${1:-${OUT:-attribution-cost-out}}
mkdir -p "$OUT" || exit 1
exec python3 "$(dirname "$0")/attribution_cost.py" "$OUT/attribution_cost.md"
