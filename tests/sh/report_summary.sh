#!/bin/sh
# report_summary.sh - a run's report from summaries of its parts,
# on the fake driver with four GPUs: a launching sh and four ranks, ranks 0
# and 1 both on GPU 0 (rank-placement), each rank leaking a different
# amount from the same lines (2 to 9 MiB of a 64 MiB card: every rank's leak
# is a warning for its share of the card).
#   - `report --summary` of three parts, merged, gives byte for byte the
#     report of the traces (text, JSON, --list, HTML), also mixed with
#     traces and as a summary of summaries, and the same `stats`;
#   - rank-placement comes out of the merged report;
#   - the leaks of the four ranks are one finding: the ranks, the range per
#     process and the sums;
#   - one thread or several (--jobs, CUPROBE_JOBS) give the same bytes
#     (report_parallel.sh: the same on the golden traces, also under TSan);
#   - a damaged, truncated or foreign summary is refused naming the file and
#     the byte offset; an unreadable trace is carried through a summary.
. "$ROOT/tests/sh/lib.sh"
[ -f "$SHIM" ] && [ -x "$ANA" ] && [ -x "$CUPROBE" ] || skip "shim, analyzer or front end not built"
P="$B/tests/progs/run_ranks"
[ -x "$P" ] || die "$P not built"
export LD_LIBRARY_PATH="$FAKE_DIR" FAKECUDA_DEVICES=4 FAKECUDA_MEM=64M P
R="$TMP/run"
mkdir -p "$R"
"$CUPROBE" run -o "$R/t-%p.trace" -- sh -c '
    RANK=0 LOCAL_RANK=0 WORLD_SIZE=4 "$P" leak 0 2 &
    RANK=1 LOCAL_RANK=1 WORLD_SIZE=4 "$P" leak 0 3 &
    RANK=2 LOCAL_RANK=2 WORLD_SIZE=4 "$P" leak 2 5 &
    RANK=3 LOCAL_RANK=3 WORLD_SIZE=4 "$P" leak 3 9 & wait' 2>/dev/null || die "run failed"
set -- "$R"/t-*.trace
[ $# -eq 5 ] || die "expected 5 traces (sh and four ranks), got $#"
report() { "$ANA" report --no-progress "$@"; }
cd "$TMP" || die "no $TMP"

# The parts: 2 + 2 + 1 traces, each summarised on its own.
report --summary s1.json "$1" "$2" || die "summary 1 failed"
report --summary s2.json "$3" "$4" || die "summary 2 failed"
report --summary s3.json "$5" || die "summary 3 failed"
report --summary all.json s1.json s2.json s3.json || die "summary of summaries failed"
same() {  # same NAME ARGS-A -- ARGS-B: the two reports are byte-equal
    name=$1; shift
    a=""; while [ "$1" != "--" ]; do a="$a $1"; shift; done; shift
    for fmt in text json list; do
        opt=""; [ $fmt = json ] && opt=--json; [ $fmt = list ] && opt=--list
        # shellcheck disable=SC2086
        report $opt $a >"$name.a.$fmt" 2>"$name.a.err"; ra=$?
        report $opt "$@" >"$name.b.$fmt" 2>"$name.b.err"; rb=$?
        [ $ra -eq $rb ] || die "$name ($fmt): exit $ra vs $rb"
        cmp "$name.a.$fmt" "$name.b.$fmt" >/dev/null ||
            { diff "$name.a.$fmt" "$name.b.$fmt" | head -20; die "$name ($fmt): reports differ"; }
    done
    echo "ok   $name"
}
T="$1 $2 $3 $4 $5"
# shellcheck disable=SC2086
same merged $T -- s1.json s2.json s3.json
# shellcheck disable=SC2086
same mixed $T -- "$1" "$2" s2.json "$5"
# shellcheck disable=SC2086
same nested $T -- all.json
# shellcheck disable=SC2086
same serial $T -- --jobs 1 $T
# shellcheck disable=SC2086
CUPROBE_JOBS=1 report $T >env1.txt && report --jobs 4 $T >j4.txt && cmp env1.txt j4.txt ||
    die "CUPROBE_JOBS=1 and --jobs 4 differ"
# shellcheck disable=SC2086
report --html d.html $T >/dev/null && report --html m.html s1.json s2.json s3.json >/dev/null &&
    cmp d.html m.html || die "HTML pages differ"
# shellcheck disable=SC2086
"$ANA" stats --json $T >st.a.json && "$ANA" stats --json s1.json s2.json s3.json >st.b.json &&
    cmp st.a.json st.b.json || die "stats of the traces and of the summaries differ"
ls -l s1.json s2.json s3.json all.json | awk '{ print "     " $5 " bytes  " $9 }'

# rank-placement from the merged report.
expect_grep '^rank-placement error 2$' merged.b.list
expect_grep 'ranks 0, 1 on host .* all work on GPU 0' merged.b.text

# One leak finding for four ranks of different sizes: ranks, range, sums.
[ "$(grep -c '^leak ' merged.b.list)" -eq 1 ] || { cat merged.b.list; die "expected one leak finding"; }
expect_grep '^leak warning 19$' merged.b.list
expect_grep '^  Cost: 2.00 MiB held for nothing until exit: 3.12% of GPU 0.s 64.00 MiB' merged.b.text
expect_grep '^  ranks 0-3 on host ' merged.b.text
expect_grep 'Per process \(4\): count 2 to 9, 19 in all; bytes 2.00 MiB to 9.00 MiB, 19.00 MiB in all' merged.b.text
expect_grep '^ +15x +15.00 MiB  main \(tests/progs/run_ranks.c' merged.b.text
python3 - merged.b.json <<'PY' || die "merged leak in JSON"
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["check"] == "leak"]
assert len(f) == 1, f
f = f[0]
assert f["count"] == 19 and f["bytes"] == 19 << 20, (f["count"], f["bytes"])
also = sorted((a["rank"], a["count"], a["bytes"]) for a in f["also"])
assert also == [(1, 3, 3 << 20), (2, 5, 5 << 20), (3, 9, 9 << 20)], also
assert f["rank"] == 0
PY

# Summaries that cannot be used: the file and the offset are named.
bad() {  # bad NAME PATTERN: the report of NAME fails with PATTERN on stderr
    report "$1" >/dev/null 2>"$1.err"; rc=$?
    [ $rc -eq 2 ] || { cat "$1.err"; die "$1: exit $rc, expected 2"; }
    expect_grep "$2" "$1.err"
}
size=$(wc -c <s2.json)
head -c $((size / 2)) s2.json >cut.json
bad cut.json '^report: cut.json: offset [0-9]+: .*(truncated|ends here)'
sed 's/"p":\[\([0-9]*\),/"p":["x",/' s2.json >typed.json
bad typed.json '^report: typed.json: offset [0-9]+: value 0 of this array has the wrong type'
sed 's/"version":[0-9]*,/"version":99,/' s1.json >ver.json
bad ver.json '^report: ver.json: offset [0-9]+: summary format version 99'
printf '{"schema":"other"}\n' >other.json
bad other.json '^report: other.json: offset 10: not a cuprobe summary'
sed 's/"dev":\[\[/"dev":[[7,/' s2.json >short.json
bad short.json '^report: short.json: offset [0-9]+: cp_devinfo should have 12 values, not 13'

# A trace that cannot be read goes through a summary as it is.
printf 'not a trace at all\n' >junk.trace
# shellcheck disable=SC2086
report --summary sj.json junk.trace "$1" 2>/dev/null; [ $? -eq 2 ] || die "summary of an unreadable trace: expected exit 2"
same unreadable junk.trace "$1" -- sj.json
expect_grep 'junk.trace: not a cuprobe trace' unreadable.b.err

echo "report_summary: ok"
