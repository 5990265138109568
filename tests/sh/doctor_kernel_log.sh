#!/bin/sh
# doctor --kernel-log FILE: a syslog copied off a failed node, read alone
# (this machine is not checked): uncorrectable PCIe errors on the node's
# GPU at 0000:3b:00.0 (the nvidia driver logged them: a GPU), reported to
# root port 0000:3a:00.0, and then Xid 79, named by the PCI address and the
# UUID the driver logged; layers 2-4 "not checked".
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
use_tree gpu1   # must not matter: the log is another machine's
export TZ=UTC
run_doctor node3 --kernel-log "$DR_LOGS/node3.syslog"
expect_verdict "FAIL at layer 1 (hardware): Xid 79 on GPU at PCI 0000:3b:00.0: the GPU has fallen off the bus (this GPU, not your code); 1 uncorrectable PCIe error at GPU at PCI 0000:3b:00.0 itself" 1
expect_grep "^cuprobe doctor: reading the kernel log $DR_LOGS/node3.syslog " "$out"
expect_grep '^  ✗ Xid 79 on GPU at PCI 0000:3b:00\.0: .*: once, at [0-9]{4}-03-04 14:02:11 \(boot \+ 5680\.9 s\); process python \(pid 20177\); GPU at PCI 0000:3b:00\.0 \(GPU-77e0a5d3-1c8e-4cfb-8c49-1f4e28b0a9e1\); ' "$out"
expect_grep '^  ✗ 1 uncorrectable PCIe error at GPU at PCI 0000:3b:00\.0 itself: corrected 0, uncorrected non-fatal 0, fatal 1; kernel log: 1 error report at the root port, 1 at the device; kernel log errors: SDES 1; reported to root port 0000:3a:00\.0$' "$out"
expect_grep 'fix: an uncorrectable error can drop the GPU off the bus \(Xid 79\); the path from root port 0000:3a:00\.0 to 0000:3b:00\.0 loses data' "$out"
expect_no_grep 'PCIe link of|NVIDIA GPU on the PCI bus' "$out"
expect_grep '^layer 2  driver: skipped \(layer 1 failed\)$' "$out"
# a clean foreign log passes, and says the other layers were not checked
printf 'Mar  4 14:02:09 gpu-node-3 kernel: [ 5678.1] EXT4-fs (sda1): mounted\n' >"$TMP/ok.log"
run_doctor ok --kernel-log "$TMP/ok.log"
expect_verdict "PASS: no Xid event, no PCIe AER error in $TMP/ok.log" 0
expect_grep '^layer 3  runtime: not checked \(--kernel-log\)$' "$out"
run_doctor json --kernel-log "$DR_LOGS/node3.syslog" --json
expect_json mode kernel-log
expect_json failed_layer 1
grep -q '"device":"0000:3b:00.0","role":"gpu","gpu_pci":"0000:3b:00.0","link":"","root_port":"0000:3a:00.0","correctable":0,"nonfatal":0,"fatal":1' "$out" ||
    { cat "$out"; die "AER data of the node's GPU"; }
# a log whose findings are notes only passes, but does not claim to be
# clean: the verdict names them
run_doctor few --kernel-log "$DR_LOGS/aerstorm.dmesg"
expect_verdict "PASS: nothing in $DR_LOGS/aerstorm.dmesg needs action; 1 note: 3 correctable PCIe errors at PCIe device 0000:27:00.0" 0
# an unreadable file is a usage problem of its own: said, not hidden
run_doctor missing --kernel-log "$TMP/nonexistent.log"
expect_grep "^  · kernel log not readable: .*--kernel-log $TMP/nonexistent.log: not present" "$out"
echo ok
