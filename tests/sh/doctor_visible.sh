#!/bin/sh
# doctor: CUDA_VISIBLE_DEVICES="" hides every GPU (layer 3 fails), and
# CUDA_VISIBLE_DEVICES=1,0 renumbers two: logical 0 is physical GPU 1.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
need_fake
use_tree gpu2
export LD_LIBRARY_PATH="$FAKE_DIR" FAKECUDA_DEVICES=2
run_doctor hidden CUDA_VISIBLE_DEVICES=
expect_verdict 'FAIL at layer 3 (runtime): no CUDA device visible: CUDA_VISIBLE_DEVICES="" hides all 2 GPUs' 1
expect_grep 'unset CUDA_VISIBLE_DEVICES, or list valid GPUs \(indices 0\.\.1' "$out"
# the physical order first, to learn each card's UUID
run_doctor plain CUDA_DEVICE_ORDER=PCI_BUS_ID
expect_verdict "PASS: all 4 layers passed" 0
u0=$(sed -n 's/.*device 0 = physical GPU 0 (PCI 0000:18:00\.0): \(GPU-[0-9a-f-]*\),.*/\1/p' "$out")
u1=$(sed -n 's/.*device 1 = physical GPU 1 (PCI 0000:28:00\.0): \(GPU-[0-9a-f-]*\),.*/\1/p' "$out")
[ -n "$u0" ] && [ -n "$u1" ] && [ "$u0" != "$u1" ] || { cat "$out"; die "no distinct UUIDs: '$u0' '$u1'"; }
run_doctor swapped CUDA_VISIBLE_DEVICES=1,0 CUDA_DEVICE_ORDER=PCI_BUS_ID
expect_verdict "PASS: all 4 layers passed" 0
expect_grep "✓ device 0 = physical GPU 1 \(PCI 0000:28:00\.0\): $u1," "$out"
expect_grep "✓ device 1 = physical GPU 0 \(PCI 0000:18:00\.0\): $u0," "$out"
expect_grep 'CUDA_VISIBLE_DEVICES="1,0", CUDA_DEVICE_ORDER=PCI_BUS_ID' "$out"
# a UUID prefix selects that card
run_doctor byuuid CUDA_VISIBLE_DEVICES=$(echo "$u1" | cut -c1-12) --json
expect_json verdict pass
grep -q "\"uuid\":\"$u1\"" "$out" || { cat "$out"; die "UUID $u1 not in JSON"; }
echo ok
