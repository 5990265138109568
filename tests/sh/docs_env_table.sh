#!/bin/sh
# Every CUPROBE_ variable the shim, the analyzer or the front end reads has
# a row in the manual's table of environment variables (docs/manual.md):
# a variable a user cannot look up is one nobody sets on purpose.  Names
# are taken from the C sources' string literals ("CUPROBE_KMSG"), which is
# how getenv() and the tables of names spell them.
. "$ROOT/tests/sh/lib.sh"
MANUAL="$ROOT/docs/manual.md"
[ -f "$MANUAL" ] || die "no $MANUAL"
(cd "$ROOT" && find interpose analyzer frontend include -name '*.[ch]' -exec cat {} +) |
    grep -o '"CUPROBE_[A-Z0-9_]*[A-Z0-9]"' | tr -d '"' | sort -u >"$TMP/used"
[ -s "$TMP/used" ] || die "no CUPROBE_ variable found in the sources"
grep -q '^CUPROBE_OUTPUT$' "$TMP/used" || die "CUPROBE_OUTPUT not found: the scan is broken"
missing=""
while read -r v; do
    grep -q "^| \`$v\` |" "$MANUAL" || missing="$missing $v"
done <"$TMP/used"
[ -z "$missing" ] || die "read by cuprobe, no row in docs/manual.md's environment table:$missing"
echo ok
