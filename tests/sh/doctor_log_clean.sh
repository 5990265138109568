#!/bin/sh
# doctor: a kernel log with no Xid event and no AER error, zero AER
# counters on both GPUs' paths and a healthy NVML: everything passes, and
# the log says so in one line naming its source.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
log_case pcie2 clean.kmsg
run_doctor clean --bw-mib 4
expect_verdict "PASS: all 4 layers passed" 0
expect_grep "^  ✓ kernel log: no Xid event, no PCIe AER error: CUPROBE_KMSG=$DR_LOGS/clean.kmsg, 9 lines; " "$out"
[ "$(grep -c 'kernel log' "$out")" -eq 1 ] || { cat "$out"; die "the clean log takes more than one line"; }
expect_grep '^  ✓ no PCIe AER errors on the GPUs. paths: .* of 6 devices' "$out"
expect_grep '^  ✓ NVML: driver 580\.65\.06, 2 GPUs' "$out"
expect_grep '^  ✓ NVML: physical GPU 1 \(PCI 0000:28:00\.0\): Fake H200, GPU-[0-9a-f-]+; ECC on: uncorrected 0 .*; persistence mode on; PCIe replays 0$' "$out"
run_doctor json --bw-mib 4 --json
expect_json schema cuprobe-doctor/2
expect_json verdict pass
expect_check kernel.log 1 ok '^kernel log: no Xid event'
python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["kernel_log"]; sys.exit(0 if k["readable"] and k["lines"] == 9 else str(k))' "$out" ||
    die "kernel_log object"
echo ok
