# shim_findings.sh - what the shim itself detects: a kernel on device 0
# given device 1's memory (and not when the devices match), and an OOM with
# its snapshot.
. "$ROOT/tests/sh/lib.sh"
export LD_LIBRARY_PATH="$FAKE_DIR"
FAKECUDA_DEVICES=2 CUPROBE_OUTPUT="$TMP/x-%p.trace" LD_PRELOAD="$PRELOAD" \
    "$B/tests/progs/shim_xdev" >/dev/null || die "xdev run failed"
"$ANA" dump "$TMP"/x-*.trace >"$TMP/x.txt" || die "xdev trace incomplete"
expect_grep '^XDEV .*api=cuLaunchKernel .*dev=0 .*param_index=0 .*ptr_dev=1 .*func_name="fake_fill_u32"' "$TMP/x.txt"
[ "$(grep -c '^XDEV' "$TMP/x.txt")" = 1 ] || die "expected exactly one XDEV"
xs=$(sed -n 's/^XDEV .* stack=\([0-9]*\) .*/\1/p' "$TMP/x.txt")
[ "$xs" != 0 ] || die "the XDEV finding has no call site"

FAKECUDA_DEVICES=2 CUPROBE_OUTPUT="$TMP/c-%p.trace" LD_PRELOAD="$PRELOAD" \
    "$B/tests/progs/shim_xdev" clean >/dev/null || die "clean run failed"
"$ANA" dump "$TMP"/c-*.trace >"$TMP/c.txt" || die "clean trace incomplete"
expect_no_grep '^XDEV' "$TMP/c.txt"

FAKECUDA_MEM=1G CUPROBE_OUTPUT="$TMP/o-%p.trace" LD_PRELOAD="$PRELOAD" "$B/tests/progs/shim_oom" >"$TMP/o.out" \
    || die "oom run failed"
"$ANA" dump "$TMP"/o-*.trace >"$TMP/o.txt" || die "oom trace incomplete"
fitted=$(sed -n 's/fitted \([0-9]*\) .*/\1/p' "$TMP/o.out")
[ "$(grep -c '^ALLOC .*result=0 .*size=67108864' "$TMP/o.txt")" = "$fitted" ] || die "allocation count differs"
[ "$(grep -c '^ALLOC .*result=2 ' "$TMP/o.txt")" = 1 ] || die "expected one failed allocation"
expect_grep '^OOM .*result=2 .*requested=67108864 .*total=1073741824' "$TMP/o.txt"
echo "findings ok"
