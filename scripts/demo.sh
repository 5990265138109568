#!/bin/sh
# scripts/demo.sh - what `make demo` runs: trace a bundled program on the fake
# driver (two fake GPUs), then print cuprobe's report of it.
set -e
B=${B:-build}
OUT=$(mktemp -d /tmp/cuprobe-demo.XXXXXX)
echo "== cuprobe run -- $B/tests/progs/demo_train   (fake driver, 2 GPUs)"
FAKECUDA_DEVICES=2 LD_LIBRARY_PATH="$B/fakecuda" \
    "$B/cuprobe" run -o "$OUT/demo-%p.trace" -- "$B/tests/progs/demo_train"
echo
echo "== cuprobe report $OUT   (the run's traces, from $OUT/.cuprobe-last-run)"
"$B/cuprobe" report "$OUT" || true
echo
echo "(trace kept in $OUT; decode every record with: $B/cuprobe dump $OUT/demo-*.trace)"
