#!/bin/sh
# report_golden.sh - `cuprobe-analyze report --json --no-symbolize` on the
# committed traces of tests/golden/ must give exactly the committed
# tests/golden/report_NAME.json.  Inputs of NAME: report_NAME.trace, or all
# of report_NAME_*.trace (several processes in one report).  The JSON is
# compared after pretty-printing with Python's json.tool; UPDATE=1
# rewrites the expected files.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
[ -x "$ANA" ] || skip "analyzer not built"
command -v python3 >/dev/null 2>&1 || skip "python3 not found (needed to compare JSON)"
cd "$ROOT" || die "no $ROOT"
n=0
for exp in tests/golden/report_*.json; do
    [ -f "$exp" ] || continue
    name=$(basename "$exp" .json)
    if [ -f "tests/golden/$name.trace" ]; then
        set -- "tests/golden/$name.trace"
    else
        set -- tests/golden/"$name"_*.trace
    fi
    "$ANA" report --json --no-symbolize "$@" >"$TMP/$name.raw"
    rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 2 ] || die "$name: exit $rc"
    python3 -m json.tool --indent 1 "$TMP/$name.raw" >"$TMP/$name.json" ||
        die "$name: invalid JSON"
    if [ "${UPDATE:-0}" = 1 ]; then
        cp "$TMP/$name.json" "$exp"
        echo "updated $exp"
    fi
    diff -u "$exp" "$TMP/$name.json" || die "$name: report differs from $exp"
    n=$((n + 1))
    echo "ok   $name"
done
[ $n -gt 0 ] || skip "no golden reports"
echo "$n golden reports match"
