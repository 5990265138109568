#!/bin/bash
# tests/gpu/session_batch.sh PART... - run several GPU scripts in one device
# call, each under its own time limit, with their outputs under $OUT/PART;
# everything is packed into $OUT/results.tgz (the device tool brings back
# at most 8 files).  PART is one of: accuracy fatal pictures compile bytes
# bench checks validation gpt2ab gpt2bisect watch.  Run from the repository root with build/ built.
OUT=${OUT:-session-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
limit_of() {
    case $1 in accuracy) echo 420 ;; bench) echo 360 ;; checks|gpt2ab|gpt2bisect) echo 300 ;; *) echo 150 ;; esac
}
run_part() {
    local d="$OUT/$1"; mkdir -p "$d"
    case $1 in
    accuracy) sh tests/gpu/accuracy/run.sh "$d" ;;
    fatal) bash tests/gpu/fatal_errors.sh "$d" ;;
    pictures) bash tests/gpu/pictures.sh "$d" ;;
    compile) bash tests/gpu/compile_clean.sh "$d" ;;
    bytes) bash tests/gpu/bytes_per_event.sh "$d" ;;
    bench) bash tests/gpu/bench_alloc_modes.sh "$d" ;;
    checks) OUT="$d" bash tests/gpu/run_checks.sh ;;
    validation) OUT="$d" bash tests/gpu/run_validation.sh ;;
    gpt2ab) bash tests/gpu/gpt2_async_ab.sh "$d" ;;
    gpt2bisect) bash tests/gpu/gpt2_bisect.sh "$d" ;;
    watch) bash tests/gpu/framework_watch.sh "$d" ;;
    esac
}
# The analyzer links elfutils dynamically; a GPU machine without libdw gets
# the copies carried in build/gpulib (the analyzer only, not the traced programs).
if [ -d build/gpulib ] && ! ldconfig -p | grep -q libdw.so.1 && [ ! -e build/cuprobe-analyze.bin ]; then
    mv build/cuprobe-analyze build/cuprobe-analyze.bin
    printf '#!/bin/sh\nLD_LIBRARY_PATH="%s/build/gpulib" exec "%s/build/cuprobe-analyze.bin" "$@"\n' "$PWD" "$PWD" >build/cuprobe-analyze
    chmod +x build/cuprobe-analyze
fi
build/cuprobe-analyze --help 2>&1 | head -n 2
nvidia-smi -L; python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.device_count(), "GPU")'
for p in "$@"; do
    t0=$(date +%s)
    echo "===== $p (limit $(limit_of $p) s)"
    timeout -k 10 "$(limit_of $p)" bash -c "$(declare -f run_part); OUT='$OUT'; run_part $p" \
        >"$OUT/$p.log" 2>&1
    rc=$?
    tail -n 25 "$OUT/$p.log"
    echo "===== $p rc=$rc $(( $(date +%s) - t0 )) s"
done
# traces are large and stay behind; reports, tables, pages and logs come back
( cd "$OUT" && find . -type f ! -name '*.trace' ! -name '*.dump' -size -8M -print0 |
  tar czf results.tgz --null -T - ) && ls -la "$OUT/results.tgz"
