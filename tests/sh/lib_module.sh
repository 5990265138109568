# tests/sh/lib_module.sh - for tests of how the report reads a module's debug
# information; source it after lib.sh.
#   modlib_build DIR    DIR/libcpmod.so: one function, cp_mod_work, whose
#                       code covers the file offsets of the leak scenario's
#                       call sites, with DWARF and a build id
#   modlib_trace LIB OUT  a trace of the leak scenario whose program is LIB
#                       (no build id recorded): its call sites symbolize in LIB
# Skips the test when a C compiler, objcopy or python3 is missing.
command -v "${CC:-gcc}" >/dev/null 2>&1 || skip "no C compiler"
command -v objcopy >/dev/null 2>&1 || skip "no objcopy"
command -v python3 >/dev/null 2>&1 || skip "no python3"
[ -x "$B/tests/unit/test_decode" ] || die "test_decode not built"

modlib_build() {
    mkdir -p "$1"
    python3 - >"$1/m.c" <<'PY'
print("volatile int v;\nint cp_mod_work(int x)\n{")
for i in range(96):
    print("    v = v * 31 + x + %d;" % i)
print("    return v;\n}")
PY
    "${CC:-gcc}" -g -O0 -shared -fPIC -Wl,--build-id -o "$1/libcpmod.so" "$1/m.c" ||
        die "cannot build $1/libcpmod.so"
}

modlib_trace() {
    python3 "$ROOT/tests/sh/module_path.py" "$ROOT/tests/fuzz/report_corpus/leak.raw" \
        "$TMP/modlib.raw" "$1" --first --no-build-id || die "cannot rewrite the seed"
    "$B/tests/unit/test_decode" pack "$TMP/modlib.raw" "$2" || die "pack failed"
}
