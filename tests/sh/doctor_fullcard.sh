#!/bin/sh
# doctor: a card whose memory is taken by other processes is a warning that
# names the bytes in use; the small allocation test still passes.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
need_fake
use_tree gpu1
export LD_LIBRARY_PATH="$FAKE_DIR" FAKECUDA_DEVICES=1 FAKECUDA_MEM=80G
run_doctor full FAKECUDA_USED=78G
expect_verdict "PASS with 1 warning: device 0 nearly full: 78.0 GiB of 80.0 GiB in use" 0
expect_grep 'cuMemGetInfo: [0-9]+ bytes free of 85899345920 \(2\.[0-9]%\), [0-9]+ bytes used' "$out"
expect_grep '✓ device 0: allocate, memset, copy both ways verified' "$out"
run_doctor half FAKECUDA_USED=40G
expect_verdict "PASS: all 4 layers passed" 0
expect_grep '✓ device 0: 40\.0 GiB free of 80\.0 GiB' "$out"
echo ok
