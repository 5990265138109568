#!/bin/sh
# doctor and NVML (the fake libnvidia-ml.so.1): never linked (readelf);
# absent is "not checked";
# an init failure is a warning at the driver layer; hardware thermal
# throttling and a PCIe replay storm are warnings, a software power cap and
# persistence mode off are notes.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
need_fake
need_nvml
# NVML and the driver are dlopen'ed, never linked: doctor runs where
# neither is installed
if command -v readelf >/dev/null; then
    for bin in "$ANA" "$B/cuprobe"; do
        [ -f "$bin" ] || continue
        readelf -d "$bin" >"$TMP/dyn" || die "readelf -d $bin"
        grep -q NEEDED "$TMP/dyn" || die "readelf -d $bin lists no NEEDED entry"
        expect_no_grep 'NEEDED.*(libnvidia-ml|libcuda)' "$TMP/dyn"
    done
fi
use_tree pcie2
export FAKECUDA_DEVICES=2 CUPROBE_KMSG="$DR_LOGS/clean.kmsg"
run_doctor absent LD_LIBRARY_PATH="$FAKE_DIR" --bw-mib 4
expect_verdict "PASS: all 4 layers passed" 0
expect_grep '^  · NVML not checked: libnvidia-ml\.so\.1 does not load: .*; ECC, row remapping, throttling, persistence and PCIe replays not checked$' "$out"
export LD_LIBRARY_PATH="$FAKE_DIR:$NVML_DIR"
run_doctor initfail FAKENVML_INIT=9 --bw-mib 4
expect_verdict "PASS with 1 warning: nvmlInit failed: Driver Not Loaded" 0
run_doctor health FAKENVML_THROTTLE=0x40,0x4 FAKENVML_REPLAY=0,4711 FAKENVML_PERSIST=0,0 --bw-mib 4
expect_verdict "PASS with 2 warnings: clocks of physical GPU 0 (PCI 0000:18:00.0) throttled: hardware thermal slowdown; 4711 PCIe replays on physical GPU 1 (PCI 0000:28:00.0)" 0
expect_grep '^  ✓ NVML: physical GPU 1 \(PCI 0000:28:00\.0\): .*clocks throttled: software power cap \(reasons 0x4\); persistence mode off; PCIe replays 4711$' "$out"
expect_grep '^  · persistence mode off on physical GPU 0 \(PCI 0000:18:00\.0\): ' "$out"
run_doctor health_json FAKENVML_THROTTLE=0x40,0x4 FAKENVML_REPLAY=0,4711 FAKENVML_PERSIST=0,0 --bw-mib 4 --json
expect_check nvml.throttle 1 warn 'hardware thermal slowdown'
expect_check nvml.replay 1 warn '^4711 PCIe replays'
expect_check nvml.persistence 2 note '^persistence mode off on physical GPU 1'
echo ok
