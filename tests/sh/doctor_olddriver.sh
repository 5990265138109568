#!/bin/sh
# doctor: a driver too old for the framework build (layer 3 via --python) or
# for --min-cuda (layer 2); a build without kernels for the GPU; no torch.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
need_fake
use_tree gpu1
export LD_LIBRARY_PATH="$FAKE_DIR" FAKECUDA_DEVICES=1 FAKECUDA_CC=9.0
cp "$DR_FIX/fakepython" "$TMP/python" && chmod +x "$TMP/python"
run_doctor old FAKECUDA_DRIVER_VERSION=11080 --python "$TMP/python"
expect_verdict "FAIL at layer 3 (runtime): driver too old: torch 2.9.0+cu130 needs CUDA 13.0, driver supports 11.8" 1
expect_grep 'driver supports CUDA 11\.8 and older: cuDriverGetVersion = 11080' "$out"
expect_grep 'whl/cu118' "$out"
expect_grep '^layer 4  allocation and transfer: skipped \(layer 3 failed\)$' "$out"
run_doctor mincuda FAKECUDA_DRIVER_VERSION=11080 --min-cuda 12.4
expect_verdict "FAIL at layer 2 (driver): driver too old: supports CUDA 11.8, need 12.4" 1
expect_grep 'R550 or newer' "$out"
# same major, newer minor: minor version compatibility, a warning only
run_doctor minor FAKECUDA_DRIVER_VERSION=12020 FAKEPY_CUDA=12.8 FAKEPY_TORCH=2.8.0+cu128 --python "$TMP/python"
expect_verdict "PASS with 1 warning: torch 2.8.0+cu128 built for CUDA 12.8, driver supports only 12.2" 0
# a build without sm_90 kernels (PTX for a newer arch does not help)
run_doctor noarch FAKEPY_ARCH="sm_80 sm_86 sm_100 compute_100" --python "$TMP/python"
expect_verdict "FAIL at layer 3 (runtime): this build has no kernels for sm_90" 1
# PTX for an older arch JIT-compiles: a warning
run_doctor ptx FAKEPY_ARCH="sm_80 compute_80" --python "$TMP/python"
expect_verdict "PASS with 1 warning: torch has only PTX for sm_90 (JIT-compiled at first use)" 0
# matching build; then torch missing is a note, not an error
run_doctor good --python "$TMP/python"
expect_verdict "PASS: all 4 layers passed" 0
expect_grep '✓ torch has kernels for sm_90' "$out"
run_doctor notorch FAKEPY_TORCH= --python "$TMP/python"
expect_verdict "PASS: all 4 layers passed" 0
expect_grep "· torch is not installed in $TMP/python" "$out"
echo ok
