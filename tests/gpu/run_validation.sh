#!/bin/bash
# tests/gpu/run_validation.sh - the interposer on a real GPU (run from the
# repo root on the GPU machine with build/libcuprobe.so, build/cuprobe and
# build/cuprobe-analyze present).  Writes everything to $OUT (default
# ./validation-out) and prints a summary:
#   1. PyTorch training in three allocator modes: losses identical with and
#      without the shim; trace allocation counts vs torch.cuda.memory_stats().
#   2. non_blocking copies from pinned and pageable memory, classified.
#   3. Triton launches, seen through dlsym.
OUT=${OUT:-validation-out}
mkdir -p "$OUT"
CP="$PWD/build/cuprobe"
ANA="$PWD/build/cuprobe-analyze"
py() { PYTHONUNBUFFERED=1 python3 "$@"; }
traced() { name=$1; shift; rm -f "$OUT/$name".*.trace
    "$CP" run -o "$OUT/$name.%p.trace" -- python3 "$@"; }
stats() { for t in "$OUT/$1".*.trace; do "$ANA" dump "$t"; done | py tests/gpu/trace_stats.py; }

for mode in default expandable async; do
    echo "=== allocator mode: $mode"
    py tests/gpu/torch_alloc_modes.py $mode >"$OUT/alloc-$mode.plain.txt" 2>&1
    traced alloc-$mode tests/gpu/torch_alloc_modes.py $mode >"$OUT/alloc-$mode.traced.txt" 2>&1
    if cmp -s "$OUT/alloc-$mode.plain.txt" "$OUT/alloc-$mode.traced.txt"; then
        echo "identical output with and without the shim"
    else
        echo "OUTPUT DIFFERS:"; diff "$OUT/alloc-$mode.plain.txt" "$OUT/alloc-$mode.traced.txt" | head
    fi
    tail -n 1 "$OUT/alloc-$mode.traced.txt"
    for t in "$OUT"/alloc-$mode.*.trace; do "$ANA" dump "$t"; done >"$OUT/alloc-$mode.dump"
    py tests/gpu/trace_stats.py <"$OUT/alloc-$mode.dump" >"$OUT/alloc-$mode.stats.json"
    py tests/gpu/trace_stats.py --between tensors-begin tensors-end <"$OUT/alloc-$mode.dump" \
        >"$OUT/alloc-$mode.between.json"
    py - "$OUT/alloc-$mode.stats.json" "$OUT/alloc-$mode.between.json" "$OUT/alloc-$mode.traced.txt" <<'PYEOF'
import json, sys
st = json.load(open(sys.argv[1])); bt = json.load(open(sys.argv[2]))
torch = json.loads(open(sys.argv[3]).read().strip().splitlines()[-1])
s = torch["stats"]
def n(d, prefix):
    return sum(v for k, v in d.items() if k.startswith(prefix))
print("torch: num_device_alloc=%s num_device_free=%s num_alloc_retries=%s num_ooms=%s"
      % (s.get("num_device_alloc"), s.get("num_device_free"), s.get("num_alloc_retries"), s.get("num_ooms")))
print("trace: cuMemAlloc_v2=%d cuMemFree_v2=%d cuMemCreate=%d cuMemRelease=%d "
      "cuMemAllocAsync=%d cuMemFreeAsync=%d failed=%s"
      % (n(st["alloc"], "cuMemAlloc_v2"), n(st["free"], "cuMemFree_v2"), n(st["alloc"], "cuMemCreate"),
         n(st["free"], "cuMemRelease"), n(st["alloc"], "cuMemAllocAsync"),
         n(st["free"], "cuMemFreeAsync"), json.dumps(st["failed"])))
print("trace between marks: allocs=%s frees=%s (script created and freed %d tensors)"
      % (json.dumps(bt["alloc"]), json.dumps(bt["free"]), torch["counted_tensors"]))
PYEOF
    grep -c '^VMM .*op=map ' "$OUT/alloc-$mode.dump" | sed 's/^/trace VMM maps: /'
    grep -c '^VMM .*op=unmap ' "$OUT/alloc-$mode.dump" | sed 's/^/trace VMM unmaps: /'
done

echo "=== non_blocking copies"
py tests/gpu/torch_copies.py >"$OUT/copies.plain.txt" 2>&1
traced copies tests/gpu/torch_copies.py >"$OUT/copies.traced.txt" 2>&1
cmp -s "$OUT/copies.plain.txt" "$OUT/copies.traced.txt" && echo "identical output" || echo "OUTPUT DIFFERS"
cat "$OUT/copies.traced.txt"
stats copies | py -c 'import json,sys; d=json.load(sys.stdin); [print(k, v) for k, v in sorted(d["copies"].items()) if "HtoD" in k]'

echo "=== triton"
py tests/gpu/triton_launch.py >"$OUT/triton.plain.txt" 2>&1
traced triton tests/gpu/triton_launch.py >"$OUT/triton.traced.txt" 2>&1
cmp -s "$OUT/triton.plain.txt" "$OUT/triton.traced.txt" && echo "identical output" || echo "OUTPUT DIFFERS"
cat "$OUT/triton.traced.txt"
stats triton | py -c 'import json,sys; d=json.load(sys.stdin); print("launches", d["launches"]); print("routes", {k: v for k, v in d["routes"].items() if "Launch" in k})'
