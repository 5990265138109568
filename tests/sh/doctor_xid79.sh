#!/bin/sh
# doctor: Xid 79 on physical GPU 1 (the GPU fell off the bus): a hardware
# failure at layer 1 naming the GPU and its UUID; the driver probe stops
# there (the CUDA ordinal then follows from the bus order and the mask
# where it can), and the Xid 45 that followed shows at layer 2 from the log,
# as the aftermath it is, not as the program's fault.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
log_case pcie2 xid79.kmsg
run_doctor xid79 --bw-mib 4
expect_verdict "FAIL at layer 1 (hardware): Xid 79 on physical GPU 1 (PCI 0000:28:00.0): the GPU has fallen off the bus (this GPU, not your code)" 1
expect_grep '^  ✗ Xid 79 on .*: once, at .*\(boot \+ 914\.4 s\); physical GPU 1 \(PCI 0000:28:00\.0, GPU-a1e60b30-557a-9fc4-e90e-33587da2c7ec, CUDA index not probed\); .*last message: "GPU has fallen off the bus\."' "$out"
expect_grep 'fix: reboot the node \(or reset the GPU\); check its power cables' "$out"
expect_grep '^layer 2  driver: probe skipped \(layer 1 failed\); from the kernel log:$' "$out"
expect_grep '^  · Xid 45 on physical GPU 1 \(PCI 0000:28:00\.0\): preemptive cleanup \(follows an earlier error\): once, .*process torchrun \(pid 5151\)' "$out"
expect_no_grep '\(your code\)' "$out"
expect_grep '^layer 3  runtime: skipped \(layer 1 failed\)$' "$out"
# without the probe, the CUDA ordinal follows from the bus order and the mask
run_doctor byuuid CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=GPU-a1e6 --bw-mib 4
expect_grep 'physical GPU 1 \(PCI 0000:28:00\.0, GPU-a1e60b30-557a-9fc4-e90e-33587da2c7ec, CUDA device 0 in this process \(by bus order and CUDA_VISIBLE_DEVICES\)\)' "$out"
run_doctor hidden CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0 --bw-mib 4
expect_grep 'physical GPU 1 \(PCI 0000:28:00\.0, GPU-a1e60b30-557a-9fc4-e90e-33587da2c7ec, hidden by CUDA_VISIBLE_DEVICES\)' "$out"
# the GPU is gone from the bus (it often is after an Xid 79): named by the
# UUID the driver logged, and said to be gone, not "not on this machine"
use_tree gpu1
run_doctor gone FAKECUDA_DEVICES=1 --bw-mib 4
expect_verdict "FAIL at layer 1 (hardware): Xid 79 on GPU at PCI 0000:28:00.0: the GPU has fallen off the bus (this GPU, not your code)" 1
expect_grep '^  ✗ Xid 79 on GPU at PCI 0000:28:00\.0: .*; GPU at PCI 0000:28:00\.0 \(GPU-a1e60b30-557a-9fc4-e90e-33587da2c7ec, not on the PCI bus now\); ' "$out"
use_tree pcie2
run_doctor json --bw-mib 4 --json
expect_json failed_layer 1
expect_json exit 1
expect_check xid 1 fail '^Xid 79 on physical GPU 1 \(PCI 0000:28:00\.0\)'
grep -q '"xid":79,"class":"hardware","verdict":"this GPU, not your code","pci":"0000:28:00.0","physical":1' "$out" ||
    { cat "$out"; die "Xid 79 data"; }
echo ok
