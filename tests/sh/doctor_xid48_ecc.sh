#!/bin/sh
# doctor: Xid 48 (a double-bit ECC error) in the journal and NVML's word
# on physical GPU 0: uncorrectable ECC errors and a pending row remapping,
# all failures at layer 1; an older card's retired pages the same way.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
log_case pcie2 xid48.journal
run_doctor xid48 FAKENVML_ECC=2:5:2:40 FAKENVML_REMAP=0:1:1:0 --bw-mib 4
expect_verdict "FAIL at layer 1 (hardware): Xid 48 on physical GPU 0 (PCI 0000:18:00.0): double-bit ECC error (this GPU, not your code); 2 uncorrectable ECC errors on physical GPU 0 (PCI 0000:18:00.0); row remapping pending on physical GPU 0 (PCI 0000:18:00.0)" 1
expect_grep '^  ! Xid 63 on physical GPU 0 \(PCI 0000:18:00\.0\): ECC page retirement or row remapping recorded \(this GPU, not your code\)' "$out"
expect_grep 'process pt_main_thread \(pid 1187\)' "$out"
expect_grep '^  ✓ NVML: physical GPU 0 \(PCI 0000:18:00\.0\): .*ECC on: uncorrected 2 since the driver loaded \(2 in the GPU.s life\), corrected 5 \(40\); remapped rows: 1 for uncorrectable, 0 for correctable errors, a remapping pending' "$out"
expect_grep 'fix: reset the GPU \(`nvidia-smi -r`\) or reboot to activate the remapping' "$out"
run_doctor json FAKENVML_ECC=2:5:2:40 FAKENVML_REMAP=0:1:1:0 --bw-mib 4 --json
expect_check nvml.ecc 1 fail '^2 uncorrectable ECC errors on physical GPU 0'
expect_check nvml.remap 1 fail '^row remapping pending on physical GPU 0'
grep -q '"ecc_volatile_uncorrected":2,"ecc_volatile_corrected":5,"ecc_aggregate_uncorrected":2,"ecc_aggregate_corrected":40,"remapped_rows_uncorrectable":1' "$out" ||
    { cat "$out"; die "NVML ECC data"; }
# an older card: no row remapper, retired pages with one pending
run_doctor pages FAKENVML_ECC=1:0:1:0 FAKENVML_REMAP=none,none FAKENVML_RETIRED=3:61:1 --bw-mib 4
expect_grep '^  ✗ page retirement pending on physical GPU 0 \(PCI 0000:18:00\.0\): NVML: 61 pages retired for double-bit, 3 for single-bit errors' "$out"
expect_grep 'retired pages: 61 double-bit, 3 single-bit, a retirement pending' "$out"
[ "$rc" -eq 1 ] || die "exit status $rc, want 1"
echo ok
