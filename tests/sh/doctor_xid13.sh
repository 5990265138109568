#!/bin/sh
# doctor: Xid 13 and 43 from a program's bad kernel on physical GPU 1, seen
# by this process as CUDA device 0 (CUDA_VISIBLE_DEVICES=1): the program's
# own fault, a warning at the driver layer; the machine passes.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
log_case pcie2 xid13.dmesg
run_doctor xid13 CUDA_VISIBLE_DEVICES=1 --bw-mib 4
expect_verdict "PASS with 2 warnings: Xid 13 on physical GPU 1 (PCI 0000:28:00.0): graphics engine exception (your code); Xid 43 on physical GPU 1 (PCI 0000:28:00.0): GPU stopped processing (your code)" 0
expect_grep '^  ! Xid 13 on .*: 3 times, first at .*\(boot \+ 812\.3 s\), last at .*; process python3 \(pid 4242\); physical GPU 1 \(PCI 0000:28:00\.0, GPU-a1e60b30-557a-9fc4-e90e-33587da2c7ec, CUDA device 0 in this process\); ' "$out"
expect_grep 'fix: find the faulting kernel with `compute-sanitizer --tool memcheck`.*\(NVIDIA.s Xid catalogue: https://docs\.nvidia\.com/deploy/xid-errors/\)' "$out"
run_doctor json CUDA_VISIBLE_DEVICES=1 --bw-mib 4 --json
expect_json verdict warn
expect_check xid 2 warn '^Xid 13 on physical GPU 1 \(PCI 0000:28:00\.0\)'
grep -q '"xid":13,"class":"application","verdict":"your code","pci":"0000:28:00.0","physical":1,"uuid":"GPU-a1e60b30-557a-9fc4-e90e-33587da2c7ec","cuda_device":0,"count":3' "$out" ||
    { cat "$out"; die "Xid 13 data"; }
echo ok
