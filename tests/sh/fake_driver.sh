#!/bin/sh
# fake_driver.sh - the fake libcuda.so.1 behaves like the real driver where
# cuprobe's tests rely on it: allocations and OOM at capacity, copies and
# kernels that really compute, CUDA_VISIBLE_DEVICES renumbering, stub mode,
# cuGetProcAddress version/flag resolution (named with dladdr), threads.
. "$ROOT/tests/sh/lib.sh"

SELF="$B/tests/progs/fake_selftest"
GPA="$B/tests/progs/fake_gpa"
LIB="$FAKE_DIR/libcuda.so.1"
for f in "$SELF" "$GPA" "$LIB"; do [ -e "$f" ] || die "missing $f (run make first)"; done
[ -e "$FAKE_DIR/libcuda.so" ] || die "missing libcuda.so symlink"

# Start from a clean environment: the fake reads these.
unset CUDA_VISIBLE_DEVICES CUDA_API_PER_THREAD_DEFAULT_STREAM FAKECUDA_DEVICES FAKECUDA_MEM \
      FAKECUDA_USED FAKECUDA_NAME FAKECUDA_CC FAKECUDA_DRIVER_VERSION FAKECUDA_STUB
export LD_LIBRARY_PATH="$FAKE_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

run() { # run NAME CMD...: output in $TMP/NAME, fail on non-zero exit
    name=$1; shift
    rc=0
    "$@" >"$TMP/$name" 2>&1 || rc=$?
    [ $rc -eq 0 ] || { cat "$TMP/$name"; die "$name: exit $rc"; }
}

# --- exports: only cu* names, and no cu* symbol bound through PLT/GOT
nm -D --defined-only "$LIB" | awk '{print $3}' >"$TMP/exports"
n=$(wc -l <"$TMP/exports")
[ "$n" -ge 180 ] || die "only $n exports"
expect_no_grep '^[^c]|^c[^u]' "$TMP/exports"
if command -v readelf >/dev/null; then
    readelf -rW "$LIB" >"$TMP/relocs"
    expect_no_grep ' cu[A-Z][A-Za-z0-9_]*' "$TMP/relocs"
fi

# --- functional checks (allocations, copies, memsets, kernels, pools, VMM, capture)
run basic "$SELF" basic
expect_grep '^OK basic$' "$TMP/basic"
run threads "$SELF" threads
expect_grep '^OK threads$' "$TMP/threads"

# --- capacity: FAKECUDA_MEM, FAKECUDA_USED, OOM exactly at the limit
FAKECUDA_MEM=64M run oom "$SELF" oom
expect_grep '^free=67108864 total=67108864$' "$TMP/oom"
expect_grep '^OK oom$' "$TMP/oom"
FAKECUDA_MEM=64M FAKECUDA_USED=16M run oom2 "$SELF" oom
expect_grep '^free=50331648 total=67108864$' "$TMP/oom2"

# --- device properties and CUDA_VISIBLE_DEVICES
run info "$SELF" info
expect_grep '^dev=0 name=Fake H200 .* pci=0000:18:00.0 mem=1073741824 cc=9.0 sms=132 pageable=0 uva=1$' "$TMP/info"
FAKECUDA_DEVICES=3 FAKECUDA_MEM=1G,2G,3G FAKECUDA_NAME="Fake X" FAKECUDA_CC=8.6 run info3 "$SELF" info
[ "$(grep -c '^dev=' "$TMP/info3")" -eq 3 ] || die "want 3 devices"
expect_grep '^dev=2 name=Fake X .* pci=0000:38:00.0 mem=3221225472 cc=8.6 ' "$TMP/info3"
phys1=$(sed -n 's/^dev=1 \(.*\)$/\1/p' "$TMP/info3" | sed 's/ mem=.*//; s/name=[^u]* //')
FAKECUDA_DEVICES=3 CUDA_VISIBLE_DEVICES=1 run cvd1 "$SELF" info
log0=$(sed -n 's/^dev=0 \(.*\)$/\1/p' "$TMP/cvd1" | sed 's/ mem=.*//; s/name=[^u]* //')
[ -n "$phys1" ] && [ "$phys1" = "$log0" ] || die "CUDA_VISIBLE_DEVICES=1: logical 0 is '$log0', physical 1 is '$phys1'"
[ "$(grep -c '^dev=' "$TMP/cvd1")" -eq 1 ] || die "CUDA_VISIBLE_DEVICES=1 must show one device"
# UUID prefix, then an invalid entry that ends the list
uuid2=$(sed -n 's/^dev=2 .*uuid=\(..\).*/\1/p' "$TMP/info3")
FAKECUDA_DEVICES=3 CUDA_VISIBLE_DEVICES="GPU-$uuid2,0,9,1" run cvd2 "$SELF" info
[ "$(grep -c '^dev=' "$TMP/cvd2")" -eq 2 ] || die "invalid entry must end the list"
expect_grep '^dev=0 .* pci=0000:38:00.0 ' "$TMP/cvd2"
expect_grep '^dev=1 .* pci=0000:18:00.0 ' "$TMP/cvd2"

# --- no device, stub library
CUDA_VISIBLE_DEVICES= run none "$SELF" init
expect_grep '^init=100 ' "$TMP/none"
FAKECUDA_DEVICES=0 run none2 "$SELF" init
expect_grep '^init=100 ' "$TMP/none2"
FAKECUDA_STUB=1 run stub "$SELF" init
expect_grep '^init=34 count=-1 count_rc=34$' "$TMP/stub"
FAKECUDA_STUB=1 run stubgpa "$GPA" stub
expect_grep '^OK stub$' "$TMP/stubgpa"

# --- cuGetProcAddress like cudart: versions, flags, dladdr names, calls
run gpa "$GPA"
expect_no_grep '^FAIL' "$TMP/gpa"
expect_grep '^ok   cuMemcpyBatchAsync@12080 flags=0 -> rc=0 status=0 cuMemcpyBatchAsync$' "$TMP/gpa"
expect_grep '^ok   calls through resolved pointers$' "$TMP/gpa"
expect_grep '^OK full$' "$TMP/gpa"
FAKECUDA_DRIVER_VERSION=12000 run gpaold "$GPA" old
expect_grep '^driver=12000$' "$TMP/gpaold"
expect_grep '^OK old$' "$TMP/gpaold"
CUDA_API_PER_THREAD_DEFAULT_STREAM=1 run gpaptds "$GPA" ptds
expect_grep '^OK ptds$' "$TMP/gpaptds"

echo "fake driver OK"
