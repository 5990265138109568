#!/bin/sh
# doctor: a GPU and its kernel driver but no libcuda.so.1 on the search path
# fails at layer 2 with the loader's own error text.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    skip "a libcuda.so.1 is installed system-wide; cannot test its absence"
fi
mkdir -p "$TMP/empty"
use_tree gpu1
run_doctor nolib LD_LIBRARY_PATH="$TMP/empty"
expect_verdict "FAIL at layer 2 (driver): no NVIDIA driver library (libcuda.so.1 does not load)" 1
expect_grep 'dlopen: libcuda\.so\.1: cannot open shared object file: No such file or directory' "$out"
expect_grep "LD_LIBRARY_PATH=$TMP/empty" "$out"
expect_grep '^layer 3  runtime: skipped \(layer 2 failed\)$' "$out"
expect_grep 'matching kernel module 580\.65\.06' "$out"
echo ok
