#!/bin/sh
# tiers.sh - no test is dropped: every test is in exactly one tier of
# tests/run.sh, and CI runs both tiers.
#  - a tier line in tests/sh/*.sh is exactly "# tier: long" (a misspelt one
#    would leave the test in the quick tier unnoticed), at most one a file;
#  - `run.sh --list` of TIER=quick and of TIER=long together name every
#    unit test of tests/unit/test_*.c and every tests/sh/*.sh but lib*.sh,
#    each once, and TIER=all names the same;
#  - make test runs the quick tier, make check-long the long one and
#    check-san, and .ci/run runs check-long, then make test last.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
cd "$ROOT" || die "no $ROOT"

grep -c '^#[[:space:]]*tier[[:space:]]*:' tests/sh/*.sh | awk -F: '$2 > 1' >"$TMP/many"
[ ! -s "$TMP/many" ] || die "more than one tier line: $(cat "$TMP/many")"
grep -H '^#[[:space:]]*tier[[:space:]]*:' tests/sh/*.sh | grep -v ':# tier: long$' >"$TMP/bad"
[ ! -s "$TMP/bad" ] || die "a tier line is not '# tier: long': $(cat "$TMP/bad")"

# What there is: the unit tests (the sources, so that one not built is
# missed too) and the shell tests.
for c in tests/unit/test_*.c; do c=${c##*/}; echo "unit/${c%.c}"; done >"$TMP/want"
for t in tests/sh/*.sh; do
    t=${t##*/}
    case "$t" in lib*.sh) continue ;; esac
    echo "sh/${t%.sh}"
done >>"$TMP/want"
sort -o "$TMP/want" "$TMP/want"
[ "$(wc -l <"$TMP/want")" -gt 10 ] || die "too few tests found: $(cat "$TMP/want")"

for tier in quick long all; do
    env -u TESTS -u TESTS_SKIP TIER=$tier sh tests/run.sh --list >"$TMP/$tier" ||
        die "run.sh --list failed for TIER=$tier"
done
[ -s "$TMP/quick" ] && [ -s "$TMP/long" ] || die "a tier is empty"
sort "$TMP/quick" "$TMP/long" >"$TMP/both"
dup=$(uniq -d "$TMP/both")
[ -z "$dup" ] || die "in both tiers: $dup"
diff -u "$TMP/want" "$TMP/both" >"$TMP/diff" || { cat "$TMP/diff"; die "the tiers do not list every test once"; }
sort "$TMP/all" | diff -u "$TMP/want" - >"$TMP/diff" || { cat "$TMP/diff"; die "TIER=all differs"; }
grep -qx 'sh/tiers' "$TMP/quick" || die "this test is not in the quick tier"

# The Makefile's targets and CI.
rule() { sed -n "/^$1:/,/^\$/p" Makefile; }
rule test | grep -q 'sh tests/run.sh' || die "make test does not run tests/run.sh"
rule test | grep -q 'TIER=' && die "make test picks a tier: it must run the default, quick"
rule check-long | grep -q 'TIER=long sh tests/run.sh' || die "make check-long does not run the long tier"
rule check-long | grep -q 'check-san' || die "make check-long does not run check-san"
grep -q '^make .*check-long' .ci/run || die ".ci/run does not run make check-long"
[ "$(grep -v '^exit' .ci/run | grep '^make ' | tail -n 1)" = "make test" ] ||
    die ".ci/run's last make is not 'make test'"
echo "tiers: $(wc -l <"$TMP/quick") quick, $(wc -l <"$TMP/long") long, every test once"
