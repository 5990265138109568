# shim_routes.sh - every route to the driver gives the program the same
# results with and without the shim, and the trace names the exact variant.
. "$ROOT/tests/sh/lib.sh"
export LD_LIBRARY_PATH="$FAKE_DIR"
P="$B/tests/progs"
for mode in plt dlsym gpa gpa1 ptsz; do
    if [ $mode = plt ]; then prog="$P/shim_routes_plt"; arg=""; else prog="$P/shim_routes"; arg=$mode; fi
    $prog $arg >"$TMP/plain.$mode" || die "$mode: plain run failed"
    CUPROBE_OUTPUT="$TMP/$mode-%p.trace" LD_PRELOAD="$PRELOAD" $prog $arg >"$TMP/traced.$mode" 2>"$TMP/err.$mode" \
        || die "$mode: traced run failed: $(cat "$TMP/err.$mode")"
    cmp -s "$TMP/plain.$mode" "$TMP/traced.$mode" || die "$mode: output changed under the shim"
    [ ! -s "$TMP/err.$mode" ] || die "$mode: the shim wrote to stderr: $(cat "$TMP/err.$mode")"
    "$ANA" dump "$TMP"/$mode-*.trace >"$TMP/dump.$mode" || die "$mode: trace does not decode completely"
    d="$TMP/dump.$mode"
    expect_grep '^ALLOC .*api=cuMemAlloc_v2 result=0 .*kind=device .*size=262144' "$d"
    expect_grep '^ALLOC .*api=cuMemHostAlloc result=0 .*kind=host_pinned' "$d"
    expect_grep '^COPY .*src_class=pinned ' "$d"
    expect_grep '^COPY .*src_class=pageable ' "$d"
    expect_grep '^COPY .*api=cuMemcpyDtoH_v2 .*dst_class=pageable .*src_class=device src_dev=0' "$d"
    expect_grep '^FREE .*api=cuMemFree_v2 .*size=262144' "$d"
    expect_grep '^LAUNCH_COUNT .*count=10 .*name="fake_fill_u32"' "$d"
    expect_grep '^DEVICE .*name="Fake H200"' "$d"
    [ "$(grep -c '^COPY .*HtoDAsync' "$d")" = 2 ] || die "$mode: expected exactly 2 HtoD copies"
done
# The per-thread route must reach the per-thread variant, the legacy routes
# the legacy one.
expect_grep 'api=cuMemcpyHtoDAsync_v2_ptsz ' "$TMP/dump.ptsz"
expect_no_grep 'api=cuMemcpyHtoDAsync_v2 ' "$TMP/dump.ptsz"
expect_grep 'api=cuMemcpyHtoDAsync_v2 ' "$TMP/dump.gpa"
# cudart's bootstrap: "cuGetProcAddress" asked at 11030 and 12000, answered
# with our wrappers.
expect_grep '^RESOLVE .*symbol="cuGetProcAddress" cuda_version=11030 .*handed_out=1' "$TMP/dump.gpa"
expect_grep '^RESOLVE .*symbol="cuGetProcAddress" cuda_version=12000 .*handed_out=1' "$TMP/dump.gpa"
expect_grep '^API .*elf_name="cuMemAlloc_v2" routes=gpa2' "$TMP/dump.gpa"
expect_grep '^API .*elf_name="cuMemAlloc_v2" routes=dlsym' "$TMP/dump.dlsym"
expect_grep '^API .*elf_name="cuMemAlloc_v2" routes=gpa1?( |$)' "$TMP/dump.gpa1"
expect_grep '^DLOPEN .*requested="libcuda.so.1" .*ok=1 .*lib_kind=driver' "$TMP/dump.dlsym"
echo "all routes recorded"
