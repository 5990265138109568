#!/bin/sh
# doctor on this machine as it is, with the real /sys and /proc and the
# default library search path: without a GPU and driver it must say so.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
if cat /sys/bus/pci/devices/*/vendor 2>/dev/null | grep -q 0x10de || [ -e /proc/driver/nvidia/version ] ||
   [ -e /dev/dxg ]; then
    skip "this machine has an NVIDIA GPU or driver"
fi
[ -d /sys/bus/pci/devices ] || skip "no sysfs PCI bus here"
unset LD_LIBRARY_PATH
run_doctor real
expect_verdict "FAIL at layer 1 (hardware): no NVIDIA GPU on the PCI bus; no NVIDIA kernel driver loaded" 1
expect_grep 'none with vendor 0x10de' "$out"
expect_grep 'no nvidia module in /proc/modules, no /proc/driver/nvidia/version' "$out"
echo ok
