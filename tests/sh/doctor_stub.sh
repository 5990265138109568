#!/bin/sh
# doctor: the CUDA toolkit's stub libcuda found first fails at layer 2.
# Uses the toolkit's own stub where installed, else the fake driver in stub
# mode (FAKECUDA_STUB=1: every call returns CUDA_ERROR_STUB_LIBRARY).
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
use_tree gpu1
mkdir -p "$TMP/stubs"
STUB=/usr/local/cuda/lib64/stubs/libcuda.so
if [ -f "$STUB" ]; then
    ln -s "$STUB" "$TMP/stubs/libcuda.so.1"
    run_doctor stub LD_LIBRARY_PATH="$TMP/stubs"
    expect_grep '/stubs/libcuda\.so; cuInit returned 34 CUDA_ERROR_STUB_LIBRARY' "$out"
else
    echo "note: no toolkit stub at $STUB; using the fake driver with FAKECUDA_STUB=1"
    need_fake
    run_doctor stub FAKECUDA_STUB=1 LD_LIBRARY_PATH="$FAKE_DIR"
    expect_grep 'cuInit returned 34 CUDA_ERROR_STUB_LIBRARY' "$out"
fi
expect_verdict "FAIL at layer 2 (driver): the CUDA toolkit's stub libcuda was loaded, not the driver" 1
# the fake driver in stub mode is caught by cuInit's result alone
if [ -f "$FAKE_DIR/libcuda.so.1" ]; then
    run_doctor fakestub FAKECUDA_STUB=1 LD_LIBRARY_PATH="$FAKE_DIR"
    expect_verdict "FAIL at layer 2 (driver): the CUDA toolkit's stub libcuda was loaded, not the driver" 1
fi
echo ok
