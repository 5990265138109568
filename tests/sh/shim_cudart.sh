# shim_cudart.sh - a real cudart program (NVIDIA's libcudart) under the shim,
# against the toolkit's stub libcuda and with no libcuda at all.  Needs a
# CUDA toolkit (headers + libcudart); skips without one.
. "$ROOT/tests/sh/lib.sh"
CUDA=${CUDA_HOME:-/usr/local/cuda}
[ -f "$CUDA/include/cuda_runtime_api.h" ] && [ -f "$CUDA/lib64/libcudart.so" ] \
    || skip "no CUDA toolkit at $CUDA"
STUB=$(ls "$CUDA"/lib64/stubs/libcuda.so "$CUDA"/lib/stubs/libcuda.so 2>/dev/null | head -n 1)
cc -I"$CUDA/include" -o "$TMP/probe" "$ROOT/tests/cudart/cudart_probe.c" \
    -L"$CUDA/lib64" -lcudart -Wl,-rpath,"$CUDA/lib64" || die "cannot build the cudart probe"

# Run the probe with $TMP/$1 as the library path, under the shim (trace
# $TMP/$1-PID.trace, output $TMP/$1.out) and without it: cudart must give
# the same answers.  $2: what the failure message adds.
probe_both() {
    LD_LIBRARY_PATH="$TMP/$1" CUPROBE_OUTPUT="$TMP/$1-%p.trace" LD_PRELOAD="$SHIM" "$TMP/probe" \
        >"$TMP/$1.out" 2>&1
    LD_LIBRARY_PATH="$TMP/$1" "$TMP/probe" >"$TMP/$1.plain" 2>&1
    cmp -s "$TMP/$1.out" "$TMP/$1.plain" || die "cudart's answer changed under the shim$2"
}

# No libcuda anywhere on the search path.
mkdir "$TMP/none"
probe_both none ""
expect_grep 'cudaGetDeviceCount: 35 ' "$TMP/none.out"     # cudaErrorInsufficientDriver
"$ANA" dump "$TMP"/none-*.trace >"$TMP/none.txt" || die "trace incomplete"
expect_grep '^DLOPEN .*requested="libcuda.so.1" .*ok=0 .*lib_kind=not_found' "$TMP/none.txt"

# The toolkit's stub, found as libcuda.so.1.
[ -n "$STUB" ] || skip "no stub libcuda in the toolkit"
mkdir "$TMP/stub" && ln -s "$STUB" "$TMP/stub/libcuda.so.1"
probe_both stub " (stub)"
expect_grep 'cudaGetDeviceCount: 34 ' "$TMP/stub.out"     # cudaErrorStubLibrary
"$ANA" dump "$TMP"/stub-*.trace >"$TMP/stub.txt" || die "stub trace incomplete"
expect_grep '^DLOPEN .*ok=1 .*found_path=".*stub.*lib_kind=stub' "$TMP/stub.txt"
echo "cudart ok: $(cat "$TMP/none.out") / $(cat "$TMP/stub.out")"
