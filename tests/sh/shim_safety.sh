# shim_safety.sh - the shim never gets in the way: an unwritable output
# directory gives one warning and an untraced run with the same results; a
# process without any libcuda records the loader's error; the library
# depends only on libc and exports only what it must.
. "$ROOT/tests/sh/lib.sh"
export LD_LIBRARY_PATH="$FAKE_DIR"
P="$B/tests/progs/shim_routes"
"$P" dlsym >"$TMP/plain" || die "plain run failed"
CUPROBE_OUTPUT=/nonexistent-dir/x-%p.trace LD_PRELOAD="$PRELOAD" "$P" dlsym >"$TMP/out" 2>"$TMP/err" \
    || die "program failed when the output was unwritable"
cmp -s "$TMP/plain" "$TMP/out" || die "results changed with an unwritable output"
[ "$(grep -c cuprobe "$TMP/err")" = 1 ] || die "expected exactly one warning, got: $(cat "$TMP/err")"
expect_grep '/nonexistent-dir/x-[0-9]+\.trace' "$TMP/err"

# No driver at all: the program's own dlopen fails as it would, and the
# trace says what the loader said.
mkdir "$TMP/empty"
LD_LIBRARY_PATH="$TMP/empty" CUPROBE_OUTPUT="$TMP/n-%p.trace" LD_PRELOAD="$PRELOAD" "$P" dlsym \
    >/dev/null 2>"$TMP/nerr"; rc=$?
[ $rc = 12 ] || die "without libcuda the program must fail its own way (12), got $rc"
expect_grep 'dlopen: libcuda.so.1: cannot open shared object file' "$TMP/nerr"
"$ANA" dump "$TMP"/n-*.trace >"$TMP/n.txt" || die "no-driver trace incomplete"
expect_grep '^DLOPEN .*requested="libcuda.so.1" .*ok=0 .*error="libcuda.so.1: cannot open shared object file.*lib_kind=not_found' "$TMP/n.txt"

# A stub-like driver: every call says CUDA_ERROR_STUB_LIBRARY.
FAKECUDA_STUB=1 CUPROBE_OUTPUT="$TMP/s-%p.trace" LD_PRELOAD="$PRELOAD" "$B/tests/progs/shim_routes_plt" \
    >/dev/null 2>&1
"$ANA" dump "$TMP"/s-*.trace >"$TMP/s.txt" || die "stub trace incomplete"
expect_grep '^CALL .*api=cuInit result=34' "$TMP/s.txt"

# Dependencies and exports.
ldd "$SHIM" >"$TMP/ldd"
if grep -v -E 'linux-vdso|libc\.so|ld-linux|libdl\.so|libpthread\.so|libm\.so|librt\.so' "$TMP/ldd" | grep -q .; then
    cat "$TMP/ldd"; die "libcuprobe.so depends on more than libc"
fi
nm -D --defined-only "$SHIM" | awk '{print $3}' | sort >"$TMP/exports"
if grep -v -E '^(cu[A-Z]|dlsym$|dlopen$|_exit$|_Exit$|quick_exit$|exec|fork$|__libc_start_main$|signal$|sigaction$|cuprobe_)' "$TMP/exports" | grep -q .; then
    grep -v -E '^(cu[A-Z]|dlsym$|dlopen$|_exit$|_Exit$|quick_exit$|exec|fork$|__libc_start_main$|signal$|sigaction$|cuprobe_)' "$TMP/exports"
    die "unexpected exports"
fi
if grep -q -i -E 'zstd|unw' "$TMP/exports"; then die "static libraries leak symbols"; fi
n=$(grep -c '^cu[A-Z]' "$TMP/exports")
[ "$n" -ge 153 ] || die "expected the 151 table rows + 2 resolvers exported, got $n"
echo "safety ok"
