set -x
cd $PWD
mkdir -p $OUT/calls
export LD_LIBRARY_PATH=
for i in 1 2 3; do
  build/bench/bench_calls 200000 > $OUT/calls/plain-$i.txt 2>&1
  CUPROBE_OUTPUT=/tmp/c-%p.trace LD_PRELOAD=$PWD/build/libcuprobe.so build/bench/bench_calls 200000 > $OUT/calls/traced-$i.txt 2>&1
  CUPROBE_STACK_DEPTH=0 CUPROBE_OUTPUT=/tmp/c-%p.trace LD_PRELOAD=$PWD/build/libcuprobe.so build/bench/bench_calls 200000 > $OUT/calls/depth0-$i.txt 2>&1
  BENCH_PAUSE=1 CUPROBE_OUTPUT=/tmp/c-%p.trace LD_PRELOAD=$PWD/build/libcuprobe.so build/bench/bench_calls 200000 > $OUT/calls/paused-$i.txt 2>&1
  rm -f /tmp/c-*.trace
done
(cd $OUT/calls && for f in *.txt; do echo "$f $(tr '\n' ' ' < $f)"; done) > $OUT/calls.txt
RUNS='defaults async mlp 20 10
depth0 async mlp 20 10 CUPROBE_STACK_DEPTH=0
nopy async mlp 20 10 CUPROBE_PYTHON=0
bare async mlp 20 10 CUPROBE_STACK_DEPTH=0 CUPROBE_PYTHON=0
barefw async mlp 20 10 CUPROBE_STACK_DEPTH=0 CUPROBE_PYTHON=0 CUPROBE_FRAMEWORK=0
zstd1 async mlp 20 10 CUPROBE_ZSTD_LEVEL=1
v1 async mlp 20 10 RUN_CP=build/v1/bin/cuprobe
v1bare async mlp 20 10 RUN_CP=build/v1/bin/cuprobe CUPROBE_STACK_DEPTH=0 CUPROBE_PYTHON=0
defaults async gpt2 30 1
bare async gpt2 30 1 CUPROBE_STACK_DEPTH=0 CUPROBE_PYTHON=0' BUDGET=470 OUT=$OUT/toggle bash tests/gpu/toggle.sh
cp $OUT/toggle/toggle.txt $OUT/toggle.txt
