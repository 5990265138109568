#!/bin/sh
# doctor and PCIe AER: (1) 12042 correctable errors counted by bridge
# 0000:27:00.0, the switch port above physical GPU 1, whose link also
# trained at x8 of x16: two warnings at layer 1 naming the bridge, the link
# and the GPU; (2) uncorrectable errors (a completion timeout) on physical
# GPU 0 itself, in sysfs and in the kernel log: a failure at layer 1;
# (3) GPUs whose paths have no AER counters in sysfs: a note.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"

# 1. a correctable error storm on a bridge
log_case aerstorm aerstorm.dmesg
run_doctor storm --bw-mib 4
expect_verdict "PASS with 2 warnings: PCIe link of 0000:28:00.0 degraded to x8 of x16; 12042 correctable PCIe errors at bridge 0000:27:00.0 above physical GPU 1 (PCI 0000:28:00.0)" 0
expect_grep '^  · kernel log: 0 Xid lines, 9 PCIe AER lines: ' "$out"
expect_grep '^  ! 12042 correctable PCIe errors at bridge 0000:27:00\.0 above physical GPU 1 \(PCI 0000:28:00\.0\): corrected 12042, uncorrected non-fatal 0, fatal 0 \(sysfs since boot: 12042, 0, 0\); kernel log: 3 error reports at the root port, 3 at the device; kernel log errors: RxErr 2, BadDLLP 1; sysfs counters: RxErr 11800, BadDLLP 230, Timeout 12; the link 0000:27:00\.0 - 0000:28:00\.0, root port 0000:00:02\.0; the GPU.s link trained at x8 of x16 \(degraded: the same link\)$' "$out"
expect_grep 'fix: the link 0000:27:00\.0 - 0000:28:00\.0 loses data: reseat the GPU, check or replace the riser or cable' "$out"
run_doctor json --bw-mib 4 --json
expect_json verdict warn
expect_check pcie.aer 1 warn '^12042 correctable PCIe errors at bridge 0000:27:00\.0'
grep -q '"device":"0000:27:00.0","role":"bridge","gpu_pci":"0000:28:00.0","link":"0000:27:00.0 - 0000:28:00.0","root_port":"0000:00:02.0","correctable":12042' "$out" ||
    { cat "$out"; die "AER data"; }

# 2. uncorrectable errors on the GPU
log_case aerfatal aerfatal.kmsg
run_doctor json --bw-mib 4 --json
expect_json failed_layer 1
expect_check pcie.aer 1 fail '^2 uncorrectable PCIe errors at physical GPU 0'
grep -q '"device":"0000:18:00.0","role":"gpu","gpu_pci":"0000:18:00.0"' "$out" || { cat "$out"; die "AER data"; }
run_doctor fatal --bw-mib 4
expect_verdict "FAIL at layer 1 (hardware): 2 uncorrectable PCIe errors at physical GPU 0 (PCI 0000:18:00.0) itself" 1
expect_grep '^  ✗ 2 uncorrectable PCIe errors at physical GPU 0 \(PCI 0000:18:00\.0\) itself: corrected 0, uncorrected non-fatal 2, fatal 0 \(sysfs since boot: 0, 2, 0\); kernel log: 1 error report at the root port, 1 at the device; kernel log errors: CmpltTO 1; sysfs counters: CmpltTO 2; the link 0000:17:00\.0 - 0000:18:00\.0, root port 0000:00:01\.0' "$out"
expect_grep 'fix: an uncorrectable error can drop the GPU off the bus \(Xid 79\); the link 0000:17:00\.0 - 0000:18:00\.0 loses data' "$out"
expect_grep '^layer 2  driver: skipped \(layer 1 failed\)$' "$out"

# 3. no AER counters in sysfs (a VM's GPU, AER off, an old kernel): said
# in one note, not passed over as if the links were clean
log_case gpu2 clean.kmsg
run_doctor nosys --bw-mib 4
expect_verdict "PASS: all 4 layers passed" 0
expect_grep '^  · PCIe AER counters not in sysfs for physical GPU 0 \(PCI 0000:18:00\.0\), physical GPU 1 \(PCI 0000:28:00\.0\): no aer_dev_correctable, aer_dev_nonfatal or aer_dev_fatal for the GPUs or the bridges above them' "$out"
expect_no_grep 'no PCIe AER errors on the GPUs' "$out"
run_doctor nosys_json --bw-mib 4 --json
expect_check pcie.aer 1 note '^PCIe AER counters not in sysfs for physical GPU 0'
grep -q '"devices":0,"not_in_sysfs":"0000:18:00.0, 0000:28:00.0"' "$out" || { cat "$out"; die "AER note data"; }
echo ok
