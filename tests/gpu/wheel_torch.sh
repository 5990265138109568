#!/bin/bash
# tests/gpu/wheel_torch.sh - the wheel (dist/, from `make wheel` where it was
# built) installed offline into the Python that has torch, then a PyTorch
# script traced and reported by the cuprobe that install put on PATH, with
# no build tree involved.  Output into $OUT: pip's lines, which cuprobe ran,
# what the wheel's programs need (ldd), the run and the report.
#   WHEEL (dist/cuprobe-*.whl); PY (python3); SCRIPT (tests/gpu/check_pageable.py)
set -u
OUT=${OUT:-validation-out}
PY=${PY:-python3}
SCRIPT=${SCRIPT:-tests/gpu/check_pageable.py}
WHEEL=${WHEEL:-$(ls dist/cuprobe-*.whl | head -n 1)}
mkdir -p "$OUT"
exec > >(tee "$OUT/wheel-torch.txt") 2>&1
echo "=== wheel ${WHEEL##*/}; $("$PY" -c 'import sys, torch; print(sys.executable, sys.version.split()[0], "torch", torch.__version__)')"
# An image's system Python may be marked externally managed (PEP 668).
"$PY" -m pip install --no-index --force-reinstall "$WHEEL" ||
    "$PY" -m pip install --no-index --force-reinstall --break-system-packages "$WHEEL" || exit 1
# Where pip put cuprobe (its record of the install; a --user or
# /usr/local scheme alike).
BIN=$("$PY" -c 'import importlib.metadata as m, os
d = m.distribution("cuprobe")
print(os.path.dirname(os.path.realpath(d.locate_file(next(f for f in d.files if str(f).endswith("bin/cuprobe"))))))')
CP=$(PATH="$BIN:$PATH" command -v cuprobe)
echo "=== cuprobe: $CP"
[ "$CP" = "$BIN/cuprobe" ] || { echo "FAIL: cuprobe is not the one pip installed ($BIN/cuprobe)"; exit 1; }
for f in "$BIN/cuprobe" "$BIN/../lib/cuprobe/libcuprobe.so" "$BIN/../lib/cuprobe/cuprobe-analyze"; do
    echo "--- ldd $f"; ldd "$f"
done
rm -f "$OUT"/wheel-torch.*.trace
echo "=== cuprobe run -- $PY $SCRIPT"
PYTHONUNBUFFERED=1 "$CP" run -o "$OUT/wheel-torch.%p.trace" -- "$PY" "$SCRIPT" 2>&1 | tail -n 3
echo "=== cuprobe report"
"$CP" report --no-progress "$OUT"/wheel-torch.*.trace
