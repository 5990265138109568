#!/bin/sh
# readme_setup.sh - the README's setup step installs exactly the packages
# .ci/run installs, and does not assume sudo ("as root, or with sudo").
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
# Package names from an `apt-get install ...` command (continuation lines
# joined; options, redirections and the command words dropped).
pkgs() {
    sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1" | grep -E '^[[:space:]]*(sudo )?apt-get install' |
        head -n 1 | tr ' ' '\n' |
        grep -vE '^(sudo|apt-get|install|-.*|>.*|)$' | sort -u
}
pkgs "$ROOT/.ci/run" >"$TMP/ci"
pkgs "$ROOT/README.md" >"$TMP/readme"
[ -s "$TMP/ci" ] || die "no apt-get install line in .ci/run"
diff -u "$TMP/ci" "$TMP/readme" || die "README.md and .ci/run install different packages"
expect_no_grep '^[[:space:]]*sudo apt-get' "$ROOT/README.md"
expect_grep 'as root, or with sudo' "$ROOT/README.md"
echo "README setup matches .ci/run ($(wc -l <"$TMP/ci") packages)"
