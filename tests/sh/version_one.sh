#!/bin/sh
# version_one.sh - the version lives in one place, the Makefile's VERSION:
# the front end (`cuprobe version`), the analyzer (`cuprobe-analyze
# version`) and the shim (the shim_version of a trace's HEADER) all say it,
# and the Python companion's record-format version ("v") is assigned once.
. "$ROOT/tests/sh/lib.sh"
want=$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")
[ -n "$want" ] || die "no VERSION := line in the Makefile"
[ -x "$CUPROBE" ] && [ -x "$ANA" ] && [ -f "$SHIM" ] || die "build/ not built"

got=$("$CUPROBE" version)
[ "$got" = "cuprobe $want" ] || die "cuprobe version says '$got', the Makefile '$want'"
got=$("$ANA" version)
case $got in "cuprobe-analyze $want "*) ;; *) die "cuprobe-analyze version says '$got', the Makefile '$want'" ;; esac

# The shim's own idea, as every trace records it.
[ -f "$FAKE_DIR/libcuda.so.1" ] || die "fake driver not built"
LD_PRELOAD="$PRELOAD" LD_LIBRARY_PATH="$FAKE_DIR" CUPROBE_OUTPUT="$TMP/v.trace" \
    "$B/tests/progs/shim_kinds" >/dev/null 2>&1
[ -s "$TMP/v.trace" ] || die "the shim wrote no trace"
"$ANA" dump "$TMP/v.trace" | head -1 >"$TMP/hdr"
expect_grep "^HEADER .* shim_version=\"$want\" " "$TMP/hdr"

# The front end's sources name no version: the build passes CP_VERSION.
if grep -n '"[0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*"' "$ROOT"/frontend/*.[ch] >"$TMP/fv"; then
    cat "$TMP/fv"
    die "frontend/ spells a version of its own"
fi

# The companion's record format version: one assignment, the others import it.
n=$(grep -l '^VERSION *=' "$ROOT"/scripts/python/cuprobe_companion/*.py | wc -l)
[ "$n" = 1 ] || die "the companion assigns VERSION in $n modules, not one: $(grep -l '^VERSION *=' "$ROOT"/scripts/python/cuprobe_companion/*.py | tr '\n' ' ')"
# Scripts that print which cuprobe they measured ask the build, never git
# (a bench once printed a commit id as "cuprobe b59faf5").
if grep -n 'cuprobe \$(git ' "$ROOT"/tests/gpu/*.sh "$ROOT"/bench/*.sh 2>/dev/null >"$TMP/git"; then
    cat "$TMP/git"
    die "a script prints git's commit as cuprobe's version (use \"\$B/cuprobe\" version)"
fi
echo "version: $want everywhere"
