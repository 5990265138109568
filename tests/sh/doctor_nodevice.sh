#!/bin/sh
# doctor: a machine with no NVIDIA GPU and no NVIDIA driver fails at layer 1
# and skips the rest; --json says the same; usage errors exit 2.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
use_tree none
run_doctor text
expect_verdict "FAIL at layer 1 (hardware): no NVIDIA GPU on the PCI bus; no NVIDIA kernel driver loaded" 1
expect_grep '^layer 2  driver: skipped \(layer 1 failed\)$' "$out"
expect_grep '^layer 4  allocation and transfer: skipped' "$out"
expect_grep '3 PCI devices in .*/none/sys/bus/pci/devices, none with vendor 0x10de' "$out"
expect_grep '^      fix: ' "$out"
run_doctor json --json
[ "$rc" -eq 1 ] || die "--json exit $rc"
expect_json verdict fail
expect_json failed_layer 1
expect_json summary "FAIL at layer 1 (hardware): no NVIDIA GPU on the PCI bus; no NVIDIA kernel driver loaded"
# a GPU on the bus but no kernel driver
use_tree unbound
run_doctor unbound
expect_verdict "FAIL at layer 1 (hardware): GPU not bound to the nvidia kernel driver; no NVIDIA kernel driver loaded" 1
expect_grep 'PCIe link of 0000:18:00.0: x16 at 2.5 GT/s, max x16 at 32.0 GT/s' "$out"
# usage errors
run_doctor usage --bogus
[ "$rc" -eq 2 ] || die "unknown option: exit $rc, want 2"
run_doctor usage2 --timeout 0
[ "$rc" -eq 2 ] || die "--timeout 0: exit $rc, want 2"
run_doctor help --help
[ "$rc" -eq 0 ] || die "--help: exit $rc"
expect_grep '^usage: cuprobe doctor' "$out"
echo ok
