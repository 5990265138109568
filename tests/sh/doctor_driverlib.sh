#!/bin/sh
# doctor: the libcuda file's version against the kernel module's (the classic
# "driver/library version mismatch"), and a full pass when they agree.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
need_fake
use_tree gpu1
export FAKECUDA_DEVICES=1
mkdir -p "$TMP/old" "$TMP/same"
cp "$FAKE_DIR/libcuda.so.1" "$TMP/old/libcuda.so.575.57.08"
ln -s libcuda.so.575.57.08 "$TMP/old/libcuda.so.1"
run_doctor mismatch LD_LIBRARY_PATH="$TMP/old"
expect_verdict "FAIL at layer 2 (driver): driver/library version mismatch" 1
expect_grep 'kernel module 580\.65\.06, libcuda 575\.57\.08' "$out"
expect_grep 'reboot' "$out"
cp "$FAKE_DIR/libcuda.so.1" "$TMP/same/libcuda.so.580.65.06"
ln -s libcuda.so.580.65.06 "$TMP/same/libcuda.so.1"
run_doctor same LD_LIBRARY_PATH="$TMP/same"
expect_verdict "PASS: all 4 layers passed" 0
expect_grep "✓ libcuda.so.1 loads: $TMP/same/libcuda.so.1 -> .*/same/libcuda.so.580.65.06" "$out"
expect_grep '✓ library version 580\.65\.06 matches the kernel module' "$out"
expect_grep '✓ driver supports CUDA 13\.0 and older: cuDriverGetVersion = 13000' "$out"
echo ok
