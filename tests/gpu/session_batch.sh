#!/bin/bash
# tests/gpu/session_batch.sh PART... - run several GPU scripts in one device
# call, each under its own time limit, with their outputs under $OUT/PART;
# everything is packed into $OUT/results.tgz (the device tool brings back
# at most 8 files).  PART is one of: accuracy fatal pictures compile bytes
# bench checks validation gpt2ab gpt2bisect gpt2q watch many shimab gpt2parts
# cacheab cachechecks mlpasync mlpcontrol anahost anadiag fakehost steady
# (anadiag: tests/gpu/analyzer_diag.sh, the report's variants and a profile);
# (steady: tests/gpu/profile_steady.sh, samples per step of the timed window;
# clock: tests/gpu/host_clock.sh, a clock read's cost on this host;
# events: tests/gpu/step_events.sh, records and call-site depths per step;
# selfparts: `make selftime`'s build (build/st/bin, carried or built there) in
# the MLP's three settings and GPT-2, each wrapped call's time and the
# recording path's parts per step, BENCHMARKS.md 2p's call 4);
# (shimab: bench_calls on the real driver, build/oldshim/libcuprobe.so against build/;
# fakehost: the same two shims on the fake driver (build/fakecuda), on this
# host's CPUs, 9 alternating rounds, defaults and CUPROBE_STACK_DEPTH=0;
# pingpong: tests/gpu/pingpong.sh, issue 16's MLP table from long-lived processes taking turns;
# pinspread: the same harness under cudaMallocAsync, one generation, for each CPU set of
# PINS (default "4 4-5 2-7"): which pinning gives the least spread between turns;
# checkrep: the validation scripts of ONLY (default clean_gpt2) REPEAT (3) times
# with build/cuprobe, then as often with build/oldshim/bin/cuprobe (another
# build's shim beside it in build/oldshim/build), and each run's findings and lines
# against the first new run's (does a difference come with the shim or the run?);
# cacheab: GPT-2 under cudaMallocAsync, stack cache off/on, 5 rounds; cachechecks:
# the validation scripts with the stack cache off, then on, their --list outputs
# and the script lines their reports name compared; mlpasync: the MLP under
# cudaMallocAsync, 8 rounds of plain / defaults / the segment watch off /
# no call sites, and how many samples the watch takes in one traced run;
# mlpcontrol: the same MLP, plain twice (A/A), the shim loaded but off
# (CUPROBE_DISABLE=1), the Python companion off; anahost: issue 14's report against zstd -dc
# on the 20 M-record trace, pinned to cores 2,3, 8 rounds: tests/gpu/analyzer_host.sh).  Run from the repository root with build/ built.
OUT=${OUT:-session-out}
B0=$(date +%s)
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
limit_of() {
    case $1 in accuracy) echo 330 ;; bench|many) echo 560 ;; watch|checks|gpt2ab|gpt2bisect|gpt2parts) echo 300 ;; cacheab) echo 420 ;; pingpong) echo 540 ;; pinspread|checkrep) echo 300 ;; cachechecks|mlpasync) echo 560 ;; mlpcontrol) echo 400 ;; anahost) echo 200 ;; anadiag) echo 260 ;; steady) echo 400 ;; events|selfparts) echo 240 ;; clock) echo 90 ;; fakehost) echo 120 ;; *) echo 150 ;; esac
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
    gpt2q) bash tests/gpu/gpt2_quick.sh "$d" ;;
    watch) bash tests/gpu/framework_watch.sh "$d" ;;
    shimab) { cat /sys/devices/system/clocksource/clocksource0/current_clocksource
              REAL=1 sh bench/compare_shims.sh build/oldshim/libcuprobe.so build/libcuprobe.so 200000 7
              CUPROBE_STACK_DEPTH=0 REAL=1 sh bench/compare_shims.sh build/oldshim/libcuprobe.so build/libcuprobe.so 200000 7
            } >"$d/shimab.txt" 2>&1; cat "$d/shimab.txt" ;;
    fakehost) { cat /sys/devices/system/clocksource/clocksource0/current_clocksource; nproc
                for r in 1 2; do
                    sh bench/compare_shims.sh build/oldshim/libcuprobe.so build/libcuprobe.so 1000000 9
                    CUPROBE_STACK_DEPTH=0 sh bench/compare_shims.sh build/oldshim/libcuprobe.so build/libcuprobe.so 1000000 9
                done
              } >"$d/fakehost.txt" 2>&1; cat "$d/fakehost.txt" ;;
    gpt2parts) bash tests/gpu/gpt2_parts.sh "$d" ;;
    cacheab) ROUNDS=5 SECS=4 WARM=1.5 BUDGET=330 bash tests/gpu/gpt2_quick.sh "$d" ;;
    cachechecks) CUPROBE_STACK_CACHE=0 OUT="$d/off" bash tests/gpu/run_checks.sh >"$d/off.log" 2>&1
                 CUPROBE_STACK_CACHE=1 OUT="$d/on" bash tests/gpu/run_checks.sh >"$d/on.log" 2>&1
                 for l in "$d"/on/report-*.list; do
                     n=$(basename "$l" .list); off="$d/off/$n"
                     # The findings and every line a report names must not change.
                     if cmp -s "$l" "$off.list" &&
                        cmp -s <(grep -o '[^ ]*\.py:[0-9]*' "$d/on/$n.txt") <(grep -o '[^ ]*\.py:[0-9]*' "$off.txt"); then
                         echo "same findings and lines: $n"
                     else echo "DIFFERS: $n"; diff "$off.list" "$l" | head -n 20; fi
                 done ;;
    mlpasync) export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
              build/cuprobe run -o "$d/watch-%p.trace" -- python3 bench/gpu_steps.py mlp 2 >"$d/watch.txt" 2>&1
              # Each sample the watch takes is one torch.segment record.
              echo "torch.segment records in one 2 s traced run: $(build/cuprobe-analyze dump "$d"/watch-*.trace | grep -c 'torch\.segment')" | tee -a "$d/watch.txt"
              WORKLOAD=mlp ROUNDS=8 SECS=2 WARM=1 BUDGET=440 CONFIGS="run run
watch0 run CUPROBE_FRAMEWORK_WATCH=0
depth0 run CUPROBE_STACK_DEPTH=0" bash tests/gpu/parts.sh "$d" ;;
    mlpcontrol) # Where a cost that does not depend on call sites comes from:
                # an A/A control (plain twice), the shim loaded but off, the
                # Python companion off.
              PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync WORKLOAD=mlp ROUNDS=${ROUNDS:-6} SECS=2 WARM=1 BUDGET=${BUDGET:-300} CONFIGS="aa plain
run run
disable run CUPROBE_DISABLE=1
fw0 run CUPROBE_FRAMEWORK=0" bash tests/gpu/parts.sh "$d" ;;
    anahost) bash tests/gpu/analyzer_host.sh "$d" ;;
    pingpong) bash tests/gpu/pingpong.sh "$d" ;;
    pinspread) for pin in ${PINS:-4 4-5 2-7}; do
                   echo "#### PIN=$pin" >>"$d/summary.txt"
                   MODES=async PIN=$pin GENERATIONS=1 ROUNDS=${ROUNDS:-30} SECS=${SECS:-0.3} BUDGET=${BUDGET:-45} \
                       CONFIGS=$'plain plain\naa plain\ntraced run\ndepth0 run CUPROBE_STACK_DEPTH=0' \
                       bash tests/gpu/pingpong.sh "$d/pin-$pin" >/dev/null 2>&1
                   cat "$d/pin-$pin/summary.txt" >>"$d/summary.txt"
               done; cat "$d/summary.txt" ;;
    checkrep) only=${ONLY:-clean_gpt2}
              ONLY=$only REPEAT=${REPEAT:-3} OUT="$d/new" bash tests/gpu/run_checks.sh >"$d/new.log" 2>&1
              ONLY=$only REPEAT=${REPEAT:-3} RUN_CP=build/oldshim/bin/cuprobe OUT="$d/old" \
                  bash tests/gpu/run_checks.sh >"$d/old.log" 2>&1
              for l in "$d"/new/report-*.list "$d"/old/report-*.list; do
                  n=$(basename "$l" .list); base=${n%-[0-9]*}; ref="$d/new/$base"
                  echo "$(basename "$(dirname "$l")")/$n: $(tr '\n' ';' <"$l")"
                  cmp -s <(grep -o '[^ ]*\.py:[0-9]*' "${l%.list}.txt") <(grep -o '[^ ]*\.py:[0-9]*' "$ref.txt") ||
                      echo "  lines differ from new/$base"
              done | tee "$d/compare.txt" ;;
    anadiag) bash tests/gpu/analyzer_diag.sh "$d" ;;
    steady) bash tests/gpu/profile_steady.sh "$d" ;;
    clock) bash tests/gpu/host_clock.sh "$d" ;;
    events) bash tests/gpu/step_events.sh "$d" ;;
    selfparts) [ -x build/st/bin/cuprobe ] || make -s selftime >"$d/make.log" 2>&1 || { cat "$d/make.log"; exit 1; }
               S="TOGGLE_SELFTIME=1 RUN_CP=build/st/bin/cuprobe"
               RUNS="async-def async mlp 20 10 $S
async-nopy async mlp 20 10 CUPROBE_PYTHON=0 $S
async-bare async mlp 20 10 CUPROBE_STACK_DEPTH=0 CUPROBE_PYTHON=0 $S
default-def default mlp 15 10 $S
gpt2-async-def async gpt2 25 1 $S" OUT="$d" BUDGET=230 bash tests/gpu/toggle.sh >/dev/null
               sed 's/ \(toggle\|pmu\|self\) /\n  \1 /g' "$d/toggle.txt" >"$d/toggle-lines.txt"
               grep -E "^[a-z0-9]|toggle ratio|self cuMem|self cuLaunchKernel |self part|self total" "$d/toggle-lines.txt" ;;
    many) DIR=/tmp/many sh bench/report_many.sh 64 1000000 3 >"$d/report_many.txt" 2>&1; tail -n 30 "$d/report_many.txt" ;;
    esac
}
. tests/gpu/analyzer_ready.sh
build/cuprobe-analyze --help 2>&1 | head -n 2
nvidia-smi -L; python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.device_count(), "GPU")'
# BATCH_LIMIT (default 570 s, inside the device tool's 600 s per command):
# a part gets at most what is left of it, and results.tgz is rewritten after
# every part, so a batch cut short still brings back what it finished.
BATCH_LIMIT=${BATCH_LIMIT:-570}

pack() {   # traces are large and stay behind; reports, tables, pages and logs come back
    ( cd "$OUT" && find . -type f ! -name '*.trace' ! -name '*.dump' ! -name results.tgz -size -8M -print0 |
      tar czf results.tgz.new --null -T - && mv results.tgz.new results.tgz )
}
for p in "$@"; do
    t0=$(date +%s)
    lim=$(limit_of $p); left=$(( BATCH_LIMIT - (t0 - B0) - 15 ))
    [ $left -lt $lim ] && lim=$left
    [ $lim -lt 30 ] && { echo "===== $p skipped: $left s left of BATCH_LIMIT"; continue; }
    echo "===== $p (limit $lim s)"
    timeout -k 10 "$lim" bash -c "$(declare -f run_part); OUT='$OUT'; run_part $p" \
        >"$OUT/$p.log" 2>&1
    rc=$?
    tail -n 25 "$OUT/$p.log"
    echo "===== $p rc=$rc $(( $(date +%s) - t0 )) s"
    pack
done
ls -la "$OUT/results.tgz"
