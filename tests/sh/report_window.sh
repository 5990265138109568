#!/bin/sh
# report_window.sh - --since and --until: one part of a run looked at alone,
# in report (text, JSON, page), export, stats and dump.
# tests/progs/window_phases.c works in three phases a pause apart (1, 2 and
# 4 copies and failing frees: any set of phases is known by its sum) and
# prints when each began and ended; the windows cut in the pauses.
#  1. Counts are the window's: the failing frees (cuda-errors), the copies
#     (stats, Perfetto slices, dump's COPY records).
#  2. Memory starts from what is held when the window opens: phase 2 holds
#     the 80 MiB of phase 1 and adds 8 (peak 88 MiB, 1 allocation), and the
#     page's and Perfetto's memory starts at 80 MiB at the window's start.
#  3. A leak at exit is the window's only when its allocation is: from
#     phase 2 on, C (8 MiB); B (16 MiB, phase 1) is not; no window that
#     ends before the exit has one, and its trace is "read to the window's
#     end".
#  4. The run's start is the earliest process start: in a run of a shell
#     and two programs one after the other, a window after the first
#     program keeps only the second.  A process alive but quiet through a
#     window is kept, with what it held.  A fatal CUDA error before the
#     window explains a death in it.
#  5. Bad values are refused naming the option and the value, exit 2; so
#     is a window past the run's end, or a summary to cut.
. "$ROOT/tests/sh/lib.sh"
P="$B/tests/progs/window_phases"
[ -f "$SHIM" ] && [ -x "$ANA" ] && [ -x "$CUPROBE" ] && [ -x "$P" ] || die "not built"
command -v python3 >/dev/null 2>&1 || skip "no python3 (reads the JSON)"
export LD_LIBRARY_PATH="$FAKE_DIR"
r() { "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }

mkdir "$TMP/run" && cd "$TMP/run" || die "cd"
"$CUPROBE" run -- "$P" >"$TMP/marks" 2>"$TMP/run.err" || { cat "$TMP/run.err"; die "run failed"; }
T=$(ls *.trace)
t0=$("$ANA" dump "$T" | sed -n '1s/^HEADER ts=\([0-9.]*\) .*/\1/p')
[ -n "$t0" ] || die "no HEADER time in $T"
# c1, c2: the middles of the two pauses, in seconds from the start, with at
# most 3 decimals and none at the end (as the report writes them back).
cut() { awk -v t0="$t0" -v a="$1" -v b="$2" '$1 == "end" && $2 == a { e = $3 }
        $1 == "begin" && $2 == b { s = $3 } END { printf "%.3f", (e + s) / 2 - t0 }' "$TMP/marks" |
        sed 's/0*$//; s/\.$//'; }
c1=$(cut 1 2)
c2=$(cut 2 3)

# report --json over a window: "ERRORS ALLOCS PEAK_MIB END_MIB LEAKS LEAK_MIB CUT SINCE UNTIL"
jr() {
    "$ANA" report --json --no-progress "$@" >"$TMP/w.json" 2>"$TMP/w.err" ||
        { cat "$TMP/w.err"; die "report --json $*: exit $?"; }
    python3 - "$TMP/w.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["processes"][0]
m = p["memory"][0]
err = sum(f["count"] for f in d["findings"] if f["check"] == "cuda-errors")
leak = [f for f in d["findings"] if f["check"] == "leak" and " leaked in " in f["title"]]
w = d.get("window")
print(err, m["allocations"], m["peak_bytes"] >> 20, m["held_at_end_bytes"] >> 20,
      sum(f["count"] for f in leak), sum(f["bytes"] for f in leak) >> 20,
      int(p["trace_status"].get("window_cut", False)),
      w["since_ns"] if w else "-", w["until_ns"] if w else "-")
EOF
}
ns() { awk -v s="$1" 'BEGIN { printf "%d", s * 1e9 + 0.5 }'; }
check() { # check WANT ARGS...: the fields of jr
    want=$1; shift
    got=$(jr "$@")
    [ "$got" = "$want" ] || die "report $*: got '$got', want '$want'"
}
#       errors allocs peak end leaks leakMiB cut since until
check "7 4 88 24 2 24 0 - -"
check "1 2 80 80 0 0 1 0 $(ns "$c1")" --until "$c1"
check "2 1 88 24 0 0 1 $(ns "$c1") $(ns "$c2")" --since "$c1" --until "$c2"
check "4 1 28 24 0 0 0 $(ns "$c2") None" --since "$c2"
check "6 2 88 24 1 8 0 $(ns "$c1") None" --since "$c1"

# The text says which window it shows, and that a cut trace was cut.
r "$ANA" report --no-progress --since "$c1" --until "$c2"
[ $rc -eq 0 ] || { cat "$TMP/err"; die "text report: exit $rc"; }
expect_grep "^window: $c1 s – $c2 s of the run \(from the earliest process start\)" "$TMP/out"
expect_grep "read to the window's end" "$TMP/out"
expect_grep "peak 88.00 MiB, 24.00 MiB held at the end, 1 allocations" "$TMP/out"
r "$ANA" report --no-progress --since "$c2"
expect_grep "^window: $c2 s – the end of the run" "$TMP/out"
r "$ANA" report --no-progress
expect_no_grep "^window:" "$TMP/out"

# A window in a pause: the process was there, doing nothing; what it held
# then is the window's, and nothing happened.
q1=$(awk -v a="$c1" 'BEGIN { printf "%.3f", a - 0.05 }')
q2=$(awk -v a="$c1" 'BEGIN { printf "%.3f", a + 0.05 }')
check "0 0 80 80 0 0 1 $(ns "$q1") $(ns "$q2")" --since "$q1" --until "$q2"

# stats: the copies of each window; the site tables start from what is held.
copies() { "$ANA" stats --csv --table api --no-progress "$@" | awk -F, '$1 == "cuMemcpyHtoD_v2" { print $2 }'; }
[ "$(copies)" = 7 ] || die "stats: $(copies) copies in the run, want 7"
[ "$(copies --until "$c1")" = 1 ] || die "stats --until: $(copies --until "$c1") copies, want 1"
[ "$(copies --since "$c1" --until "$c2")" = 2 ] || die "stats window 2: copies"
[ "$(copies --since "$c2")" = 4 ] || die "stats --since: copies"
r "$ANA" stats --no-progress --table peak --since "$c1" --until "$c2"
expect_grep "^window: $c1 s – $c2 s of the run" "$TMP/out"
# One site makes every allocation: 88 MiB at the peak, of which 80 were
# held when the window opened, and 1 allocation.
expect_grep "88.00 MiB +100.0% +1  main \(tests/progs/window_phases.c" "$TMP/out"

# dump: the records of the window only.
"$ANA" dump --since "$c1" --until "$c2" "$T" >"$TMP/dump" || die "dump window: exit $?"
[ "$(grep -c '^COPY ' "$TMP/dump")" = 2 ] || die "dump window: not 2 COPY records"
awk -v lo="$t0" -v a="$c1" -v b="$c2" '{ sub(/^[A-Z_]* ts=/, ""); t = $1 - lo
     if (t < a || t >= b) { print "outside: " $0; bad = 1 } } END { exit bad }' "$TMP/dump" ||
    die "dump window: a record outside it"

# export: slices of the window only, memory from what was held at its start.
r "$ANA" export --no-progress --slow-us 0 --perfetto "$TMP/w.pf.json" --since "$c1" --until "$c2"
[ $rc -eq 0 ] || { cat "$TMP/err"; die "export window: exit $rc"; }
python3 - "$TMP/w.pf.json" "$c1" "$c2" <<'EOF' || die "export window"
import json, sys
d = json.load(open(sys.argv[1]))
lo, hi = float(sys.argv[2]) * 1e6, float(sys.argv[3]) * 1e6
ev = [e for e in d["traceEvents"] if "ts" in e]
copies = [e for e in ev if e.get("ph") == "X" and e["name"] == "cuMemcpyHtoD_v2"]
assert len(copies) == 2, "copies: %d, want 2" % len(copies)
out = [e for e in ev if not lo - 1 <= e["ts"] <= hi]
assert not out, "events outside the window: %s" % out[:3]
held = [e for e in ev if e.get("ph") == "C" and e["name"] == "GPU 0 held"]
assert held and abs(held[0]["ts"] - lo) < 1 and held[0]["args"]["bytes"] == 80 << 20, held[:2]
assert d["otherData"]["window"].startswith(sys.argv[2] + " s"), d["otherData"]
EOF

# The page: the window said, its time axis from the window's start.
r "$ANA" report --no-progress --since "$c1" --until "$c2" --html "$TMP/w.html"
[ $rc -eq 0 ] || die "report --html window: exit $rc"
expect_grep "window: $c1 s – $c2 s of the run" "$TMP/w.html"
expect_grep "\"start\":$c1" "$TMP/w.html"

# 4. Three processes one after the other: the window is the run's.
mkdir "$TMP/three" && cd "$TMP/three" || die "cd"
"$CUPROBE" run -- sh -c "'$P' 100 >a.marks; sleep 0.4; '$P' 100 >b.marks" 2>"$TMP/run.err" ||
    { cat "$TMP/run.err"; die "run of three failed"; }
first=$(for f in *.trace; do "$ANA" dump "$f" | sed -n '1s/^HEADER ts=\([0-9.]*\) .*/\1/p'; done |
        sort -n | head -1)
x=$(awk -v t0="$first" '$1 == "end" && $2 == 3 { e = $3 } END { print e }' a.marks)
x=$(awk -v t0="$first" -v e="$x" '$1 == "begin" && $2 == 1 { printf "%.3f", (e + $3) / 2 - t0 }' b.marks |
   sed 's/0*$//; s/\.$//')
progs() { # the window_phases processes a window keeps, by their marks' files
    "$ANA" report --json --no-progress "$@" | python3 -c '
import json, sys
print(sum(1 for p in json.load(sys.stdin)["processes"] if p["exe"].endswith("/window_phases")))'
}
[ "$(progs)" = 2 ] || die "the run: $(progs) programs, want 2"
[ "$(progs --since "$x")" = 1 ] || die "--since $x (after the first program): $(progs --since "$x"), want 1"
[ "$(progs --until "$x")" = 1 ] || die "--until $x: $(progs --until "$x"), want 1"
r "$ANA" report --no-progress --list --since "$x"
expect_grep "^cuda-errors info 7$" "$TMP/out"
r "$ANA" report --no-progress --list
expect_grep "^cuda-errors info 14$" "$TMP/out"

# A fatal error before the window stays the process's: a death in the
# window is explained by it; a window that ends before the death has none,
# and memory allocated before the window is not its leak.
mkdir "$TMP/fatal" && cd "$TMP/fatal" || die "cd"
FAKECUDA_DEVICES=2 FAKECUDA_FAIL_LAUNCH=20 "$CUPROBE" run -- "$B/tests/progs/demo_train" \
    >/dev/null 2>&1
"$ANA" dump >"$TMP/fatal.dump" || die "dump of the fatal run"
fs=$(awk 'NR == 1 { sub(/^HEADER ts=/, ""); t0 = $1 } /^ASYNC_ERROR / { sub(/^ASYNC_ERROR ts=/, "");
     printf "%.6f", $1 - t0 + 0.000001; exit }' "$TMP/fatal.dump")
fe=$(awk 'NR == 1 { sub(/^HEADER ts=/, ""); t0 = $1 } /^END / { sub(/^END ts=/, "");
     printf "%.6f", $1 - t0 - 0.000001 }' "$TMP/fatal.dump")
[ -n "$fs" ] && [ -n "$fe" ] || die "no ASYNC_ERROR or END in the fatal run"
r "$ANA" report --no-progress --list
expect_grep "^fatal-error error 1$" "$TMP/out"
r "$ANA" report --no-progress --since "$fs"
expect_grep "fatal-error\] pid [0-9]+ died \(status 10\) after an asynchronous CUDA error" "$TMP/out"
expect_grep "CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/out"
expect_no_grep "\[leak\]" "$TMP/out"
r "$ANA" report --no-progress --list --since "$fs" --until "$fe"
expect_no_grep "^fatal-error" "$TMP/out"

# 5. Bad values, a window past the end, a summary.
cd "$TMP/run" || die "cd"
for cmd in report stats dump "export --perfetto $TMP/bad.json"; do
    for v in abc -1 1e3 "" 1.2.3 1,5 +2 0x10 inf; do
        # shellcheck disable=SC2086
        r "$ANA" $cmd --since "$v" "$T"
        [ $rc -eq 2 ] || die "$cmd --since '$v': exit $rc, want 2"
        grep -qxF -- "${cmd%% *}: --since takes seconds from the run's start, such as 12 or 12.5, not '$v'" \
            "$TMP/err" || { cat "$TMP/err"; die "$cmd --since '$v': not the message naming it"; }
    done
    # shellcheck disable=SC2086
    r "$ANA" $cmd --since 2 --until 1.5 "$T"
    [ $rc -eq 2 ] || die "$cmd --until before --since: exit $rc"
    expect_grep "until 1.5 is not after --since 2" "$TMP/err"
    # shellcheck disable=SC2086
    r "$ANA" $cmd --until "$T"
    [ $rc -eq 2 ] || die "$cmd --until with no number: exit $rc"
done
[ ! -e "$TMP/bad.json" ] || die "export wrote a file on a usage error"
r "$ANA" report --no-progress --since 1000.5
[ $rc -eq 2 ] || die "a window past the end: exit $rc"
expect_grep "no process of these traces ran in the window \(1000.5 s – the end of the run; the run lasted" "$TMP/err"
r "$ANA" report --no-progress --summary "$TMP/s.json" "$T"
r "$ANA" report --no-progress --since 0.1 "$TMP/s.json"
[ $rc -eq 2 ] || die "a summary cut by --since: exit $rc"
expect_grep "s.json is a summary: .*--since/--until cannot cut" "$TMP/err"
exit 0
