cd $PWD
unset PYTORCH_CUDA_ALLOC_CONF
S=$(date +%s); mkdir -p $OUT/checks
RUNS='new async mlp 15 10
old async mlp 15 10 RUN_CP=build/old/bin/cuprobe
old async mlp 15 10 RUN_CP=build/old/bin/cuprobe
new async mlp 15 10
new async gpt2 25 1
old async gpt2 25 1 RUN_CP=build/old/bin/cuprobe' BUDGET=260 OUT=$OUT/toggle bash tests/gpu/toggle.sh > /dev/null 2>&1
cp $OUT/toggle/toggle.txt $OUT/toggle.txt
for s in check_growth clean_gpt2 check_oom_capacity check_pageable check_oom_frag check_blocking clean_resnet check_fork; do
  [ $(( $(date +%s) - S )) -gt 500 ] && { echo "budget: stopped before $s" >> $OUT/compare.txt; break; }
  ONLY=$s OUT=$OUT/checks/new bash tests/gpu/run_checks.sh >> $OUT/checks/new.log 2>&1
  ONLY=$s RUN_CP=build/old/bin/cuprobe OUT=$OUT/checks/old bash tests/gpu/run_checks.sh >> $OUT/checks/old.log 2>&1
  rm -f $OUT/checks/*/*.trace
  for v in new old; do echo "$v/$s: $(tr '\n' ';' < $OUT/checks/$v/report-$s.list)"; done >> $OUT/compare.txt
  cmp -s <(grep -o '[^ ]*\.py:[0-9]*' $OUT/checks/new/report-$s.txt) <(grep -o '[^ ]*\.py:[0-9]*' $OUT/checks/old/report-$s.txt) && echo "  $s: same lines" >> $OUT/compare.txt || echo "  $s: LINES DIFFER" >> $OUT/compare.txt
done
(cd $OUT && tar czf checks.tgz checks)
rm -rf $OUT/checks
cat $OUT/toggle.txt $OUT/compare.txt
