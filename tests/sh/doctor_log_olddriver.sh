#!/bin/sh
# doctor: a log from an older driver (418: "Xid (0000:18:00)" without
# "PCI:", no pid or process name) in dmesg -T form (wall-clock stamps):
# the Xid 31 page faults and the Xid 43 are the program's, warnings naming
# physical GPU 0, with their times.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
log_case pcie2 olddriver.dmesg-T
export TZ=UTC
run_doctor old --bw-mib 4
expect_verdict "PASS with 2 warnings: Xid 31 on physical GPU 0 (PCI 0000:18:00.0): GPU memory page fault (your code); Xid 43 on physical GPU 0 (PCI 0000:18:00.0): GPU stopped processing (your code)" 0
expect_grep '^  ! Xid 31 on physical GPU 0 \(PCI 0000:18:00\.0\): GPU memory page fault \(your code\): 2 times, first at 2025-03-04 16:40:02, last at 2025-03-04 16:40:02; physical GPU 0 \(PCI 0000:18:00\.0, GPU-a081a6cb-f015-3a5f-84a9-cef3183d6287, CUDA device 0 in this process\); .*last message: "Ch 00000010, engmask 00000101, intr 10000000"$' "$out"
expect_grep '^  ! Xid 43 on .*: once, at 2025-03-04 17:15:54; ' "$out"
run_doctor json --bw-mib 4 --json
expect_check xid 2 warn '^Xid 31 on physical GPU 0 \(PCI 0000:18:00\.0\)'
echo ok
