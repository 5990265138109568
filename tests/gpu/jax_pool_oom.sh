#!/bin/sh
# tests/gpu/jax_pool_oom.sh [OUTDIR] - OOMs inside JAX's preallocated pool on
# a real GPU (jax with CUDA), caught and uncaught, under `cuprobe run`; the
# report's oom findings are held to XLA's own numbers (jax_pool_oom.py says
# what is checked).  Under a minute on one H100.  Exit 0 pass, 1 fail, 77
# skip.  Run from the repository root after make; PYTHON picks the
# interpreter (3.12+ sees caught OOMs too).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
exec "${PYTHON:-python3}" "$ROOT/tests/gpu/jax_pool_oom.py" --out "${1:-${OUT:-jax-pool-oom-out}}"
