#!/bin/sh
# cli_grammar.sh - one command-line grammar for the analyzer's commands:
#  - options after the trace are options (`report TRACE --json` is JSON),
#    and `--` ends them;
#  - export and dump find traces as report does (a directory, or none:
#    the last run);
#  - --fail-on names the finding that failed the gate, --error-exitcode
#    sets the status;
#  - every file written is named; options that would do nothing together
#    are refused;
#  - --pid and --rank keep one process in report, --html and export.
. "$ROOT/tests/sh/lib.sh"
[ -f "$SHIM" ] && [ -x "$ANA" ] && [ -x "$CUPROBE" ] || die "shim, analyzer or front end not built"
P="$B/tests/progs/shim_lifecycle"
[ -x "$P" ] || die "test programs not built"
export LD_LIBRARY_PATH="$FAKE_DIR"
GOLD="$ROOT/tests/golden/report_oom_torch.trace"
r() { "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }
isjson() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1"; }

# Options after the trace.
r "$CUPROBE" report "$GOLD" --json --no-symbolize
[ $rc -eq 0 ] || { cat "$TMP/err"; die "report TRACE --json: exit $rc"; }
isjson "$TMP/out" || die "report TRACE --json did not write JSON"
expect_no_grep "No such file" "$TMP/err"
r "$CUPROBE" report --no-symbolize "$GOLD" --list
expect_grep "^oom error 1$" "$TMP/out"
# After `--` an option's name is a file name.
r "$CUPROBE" report --no-symbolize -- "$GOLD" --json
[ $rc -eq 2 ] || die "report -- TRACE --json: exit $rc, expected 2 (no file --json)"

# The gate: one line naming the finding, the status chosen.
r "$CUPROBE" report --no-symbolize --list "$GOLD" --fail-on warning
[ $rc -eq 3 ] || die "--fail-on warning: exit $rc"
[ "$(grep -c 'failed the gate' "$TMP/err")" -eq 1 ] || die "--fail-on: no single line"
expect_grep "^cuprobe: --fail-on warning: oom \(error\) failed the gate; exit 3$" "$TMP/err"
r "$CUPROBE" report --no-symbolize --list --error-exitcode 42 --fail-on error "$GOLD"
[ $rc -eq 42 ] || die "--error-exitcode 42: exit $rc"
expect_grep "exit 42$" "$TMP/err"
r "$CUPROBE" report --no-symbolize --list --error-exitcode 42 "$GOLD"
[ $rc -eq 2 ] || die "--error-exitcode without --fail-on: exit $rc"
expect_grep "give --fail-on too" "$TMP/err"
r "$CUPROBE" report --no-symbolize --error-exitcode 1 --fail-on error "$GOLD"
[ $rc -eq 2 ] || die "--error-exitcode 1 accepted: exit $rc"

# Files written are named; a combination that would do nothing is refused.
r "$CUPROBE" report --no-symbolize --html "$TMP/x.html" "$GOLD"
[ $rc -eq 0 ] && [ -s "$TMP/x.html" ] || die "--html: exit $rc"
expect_grep "^cuprobe: wrote $TMP/x.html$" "$TMP/err"
r "$CUPROBE" report --no-symbolize --summary "$TMP/s.json" --html "$TMP/y.html" "$GOLD"
[ $rc -eq 2 ] || die "--summary with --html: exit $rc"
[ ! -e "$TMP/y.html" ] && [ ! -e "$TMP/s.json" ] || die "--summary with --html wrote a file"
expect_grep "--html does nothing with it" "$TMP/err"
r "$CUPROBE" report --no-symbolize --json --list "$GOLD"
[ $rc -eq 2 ] || die "--json with --list: exit $rc"
r "$CUPROBE" report --no-symbolize --summary "$TMP/s.json" "$GOLD"
[ $rc -eq 0 ] && [ -s "$TMP/s.json" ] || die "--summary: exit $rc"
expect_grep "^cuprobe: wrote $TMP/s.json$" "$TMP/err"
r "$CUPROBE" export --help
expect_grep "^usage: cuprobe export " "$TMP/out"
expect_no_grep "cuprobe-analyze" "$TMP/out"

# A run of two processes: export and dump find it as report does.
mkdir "$TMP/run" && cd "$TMP/run" || die "cd"
RANK=5 "$CUPROBE" run -o r.trace -- "$P" fork-cuda >/dev/null 2>"$TMP/run.err" || die "run failed"
set -- r*.trace
[ $# -eq 2 ] || { ls; die "expected 2 traces"; }
r "$CUPROBE" dump
[ $rc -eq 0 ] || { cat "$TMP/err"; die "dump with no argument: exit $rc"; }
[ "$(grep -c '^==> ' "$TMP/out")" -eq 2 ] || die "dump with no argument: not the run's 2 traces"
r "$CUPROBE" export --perfetto "$TMP/x.json" "$TMP/run" --no-progress
[ $rc -eq 0 ] || { cat "$TMP/err"; die "export --perfetto x.json DIR: exit $rc"; }
isjson "$TMP/x.json" || die "export DIR: not JSON"
expect_grep "^cuprobe: wrote $TMP/x.json$" "$TMP/err"
r "$CUPROBE" export --perfetto "$TMP/y.json"
[ $rc -eq 0 ] && [ -s "$TMP/y.json" ] || die "export with no TRACE: exit $rc"

# Filters: one process of the two.
pids=$("$CUPROBE" report --no-progress --no-symbolize | sed -n 's/^== .*pid \([0-9]*\) .*/\1/p')
[ "$(echo "$pids" | wc -l)" -eq 2 ] || die "report: expected 2 processes, got '$pids'"
one=$(echo "$pids" | tail -1)
r "$CUPROBE" report --no-progress --no-symbolize --pid "$one"
got=$(sed -n 's/^== .*pid \([0-9]*\) .*/\1/p' "$TMP/out")
[ "$got" = "$one" ] || die "--pid $one: reported '$got'"
r "$CUPROBE" report --no-progress --no-symbolize --json --rank 5
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["processes"]))' "$TMP/out")
[ "$n" -eq 2 ] || die "--rank 5 (both processes inherit RANK=5): $n processes"
r "$CUPROBE" report --no-progress --no-symbolize --rank 6
[ $rc -eq 2 ] || die "--rank 6 kept nothing but exit $rc"
expect_grep "no process of these traces matches" "$TMP/err"
r "$CUPROBE" export --no-progress --perfetto "$TMP/p.json" --pid "$one"
[ $rc -eq 0 ] || die "export --pid: exit $rc"
np=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); ev=d["traceEvents"] if isinstance(d,dict) else d
print(len({e.get("pid") for e in ev if e.get("ph")=="M" and e.get("name")=="process_name"}))' "$TMP/p.json")
[ "$np" -eq 1 ] || die "export --pid: $np processes in the page"
r "$CUPROBE" report --no-progress --no-symbolize --pid "$one" --html "$TMP/p.html"
[ $rc -eq 0 ] && [ -s "$TMP/p.html" ] || die "report --pid --html: exit $rc"
exit 0
