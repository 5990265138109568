#!/bin/sh
# report_debuglink_fifo.sh - the report never blocks on a module's separate
# debug information: a .gnu_debuglink naming a FIFO, and a debug file whose
# dwz file (.gnu_debugaltlink) is a FIFO, are passed over (elfutils' own
# search opens both blocking and waits forever for a writer); the site is
# still named from the module's symbol table.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/sh/lib_module.sh"
[ -x "$ANA" ] || die "analyzer not built"

check() {   # WHAT: the report of $TMP/$1/m.trace ends and names cp_mod_work
    timeout 20 "$ANA" report --no-progress "$TMP/$1/m.trace" >"$TMP/$1/out" 2>"$TMP/$1/err"
    rc=$?
    [ $rc -eq 124 ] && die "report hangs: $2"
    [ $rc -eq 0 ] || { cat "$TMP/$1/err"; die "report exits $rc: $2"; }
    expect_grep '\[leak\]' "$TMP/$1/out"
    expect_grep 'cp_mod_work \(libcpmod\.so\)' "$TMP/$1/out"
    echo "ok   $2"
}

# The debug link names a FIFO: the debug file was replaced by one.
D="$TMP/link"
modlib_build "$D"
objcopy --only-keep-debug "$D/libcpmod.so" "$D/libcpmod.so.debug" || die "objcopy"
objcopy --strip-debug --add-gnu-debuglink="$D/libcpmod.so.debug" "$D/libcpmod.so" || die "objcopy"
rm "$D/libcpmod.so.debug"
mkfifo "$D/libcpmod.so.debug" || skip "mkfifo failed"
modlib_trace "$D/libcpmod.so" "$D/m.trace"
check link "the module's .gnu_debuglink names a FIFO"

# The debug file is there; the dwz file its DWARF refers to is a FIFO.
D="$TMP/dwz"
modlib_build "$D"
objcopy --only-keep-debug "$D/libcpmod.so" "$D/libcpmod.so.debug" || die "objcopy"
printf 'cpmod.dwz\0\001\002\003\004\005\006\007\010\011\012\013\014\015\016\017\020\021\022\023\024' \
    >"$D/altlink"
objcopy --add-section .gnu_debugaltlink="$D/altlink" "$D/libcpmod.so.debug" ||
    die "objcopy --add-section"
objcopy --strip-debug --add-gnu-debuglink="$D/libcpmod.so.debug" "$D/libcpmod.so" || die "objcopy"
mkfifo "$D/cpmod.dwz" || skip "mkfifo failed"
mkdir -p "$D/.debug" && mkfifo "$D/.debug/cpmod.dwz"
modlib_trace "$D/libcpmod.so" "$D/m.trace"
check dwz "the debug file's dwz file (.gnu_debugaltlink) is a FIFO"
echo "debuglink fifo ok"
