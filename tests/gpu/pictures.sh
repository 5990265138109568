#!/bin/bash
# tests/gpu/pictures.sh [OUTDIR] - `report --html` and `export --perfetto` on a real GPU:
# for the fragmentation OOM (check_oom_frag.py), a short GPT-2-like training
# run (pictures_gpt.py) and the same run as 2-rank DDP under torchrun (gloo
# ranks sharing the GPU where there is only one): the traces, `cuprobe
# report --html` pages, `cuprobe export --perfetto` JSON, the text reports,
# and a PNG screenshot of each page when a chromium is installed (else take
# them from the HTML elsewhere).
# Run from the repository root with build/ built.  About 2 minutes.
OUT=${1:-${OUT:-pictures-out}}
mkdir -p "$OUT" || exit 1
CP="$PWD/build/cuprobe"
[ -x "$CP" ] || { echo "FAIL: $CP not built"; exit 1; }
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null ||
    { echo "skip: torch with CUDA not importable"; exit 0; }
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
# Framework summaries every second: the charts split tensors from cache.
export CUPROBE_FRAMEWORK_INTERVAL=1 PYTHONUNBUFFERED=1

one() {
    name=$1; shift
    rm -f "$OUT/$name".*.trace
    echo "=== $name: $*"
    t0=$(date +%s)
    timeout 150 "$CP" run -o "$OUT/$name.%p.trace" -- "$@" >"$OUT/run-$name.log" 2>&1
    echo "exit $? after $(( $(date +%s) - t0 )) s; $(tail -n 1 "$OUT/run-$name.log" | cut -c1-160)"
    ls "$OUT/$name".*.trace >/dev/null 2>&1 || { echo "FAIL $name: no trace"; return; }
    "$CP" report --no-progress --html "$OUT/$name.html" "$OUT/$name".*.trace \
        >"$OUT/report-$name.txt" 2>&1
    "$CP" export --no-progress --perfetto "$OUT/$name.perfetto.json" "$OUT/$name".*.trace \
        2>>"$OUT/report-$name.txt" || echo "FAIL $name: export exit $?"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('perfetto events', len(d['traceEvents']))" \
        "$OUT/$name.perfetto.json" || echo "FAIL $name: perfetto JSON does not parse"
    ls -l "$OUT/$name.html" "$OUT/$name.perfetto.json" | awk '{print $5, $9}'
    grep -E "memory on GPU|over time" "$OUT/report-$name.txt" | head -n 8
    grep -E "^(error|warning|info) " "$OUT/report-$name.txt" | head -n 6
    if [ -n "$CHROME" ]; then
        timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
            --user-data-dir="$OUT/.chrome" --window-size=1100,1500 \
            --screenshot="$OUT/$name.png" "file://$PWD/$OUT/$name.html" >/dev/null 2>&1 &&
            echo "screenshot $OUT/$name.png"
    fi
}

one oom_frag python3 tests/gpu/check_oom_frag.py
one gpt python3 tests/gpu/pictures_gpt.py
# 2-rank DDP: NCCL on 2 GPUs, or 2 gloo ranks sharing one GPU (one chart
# per rank, same scale)
one ddp python3 -m torch.distributed.run --standalone --nproc_per_node 2 \
    tests/gpu/pictures_gpt.py --ddp
[ -n "$CHROME" ] || echo "no chromium here: screenshots to be taken from $OUT/*.html"
echo "pictures in $OUT"
