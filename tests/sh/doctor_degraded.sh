#!/bin/sh
# doctor: a PCIe link trained at x8 of x16 is a warning; everything passes.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
need_fake
use_tree degraded
run_doctor degraded LD_LIBRARY_PATH="$FAKE_DIR" FAKECUDA_DEVICES=1
expect_verdict "PASS with 1 warning: PCIe link of 0000:18:00.0 degraded to x8 of x16" 0
expect_grep '^  ! PCIe link of 0000:18:00\.0 degraded to x8 of x16: x8 at 32\.0 GT/s, max x16 at 32\.0 GT/s$' "$out"
expect_grep 'at most 50% of the bandwidth' "$out"
expect_grep 'host-to-device: pageable [0-9.]+ GB/s, pinned [0-9.]+ GB/s \(pinned/pageable [0-9.]+x\)' "$out"
run_doctor json LD_LIBRARY_PATH="$FAKE_DIR" FAKECUDA_DEVICES=1 --json
expect_json verdict warn
expect_json exit 0
echo ok
