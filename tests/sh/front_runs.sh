#!/bin/sh
# front_runs.sh - a run is a run:
#  - `-o fixed.trace` over a program of two processes, run twice: the
#    second process of each takes fixed.PID.trace, the second run's root
#    does not write over the first's (it takes fixed.PID.trace, announced),
#    and `cuprobe report` with no TRACE reports exactly the last run's two
#    processes each time;
#  - -f replaces the root's file instead;
#  - the pattern is absolute from the start: a process that changed
#    directory writes where the run said;
#  - -o naming a directory, a device or a missing directory is an error
#    before the program starts.
. "$ROOT/tests/sh/lib.sh"
[ -f "$SHIM" ] && [ -x "$ANA" ] && [ -x "$CUPROBE" ] || die "shim, analyzer or front end not built"
P="$B/tests/progs/shim_lifecycle"
R="$B/tests/progs/run_ranks"
[ -x "$P" ] && [ -x "$R" ] || die "test programs not built"
export LD_LIBRARY_PATH="$FAKE_DIR"

# pids_of FILE...: the header pids of these traces, sorted, one line
pids_of() { for f in "$@"; do "$ANA" dump "$f" | sed -n '1s/^HEADER .* pid=\([0-9]*\) .*/\1/p'; done | sort -n | tr '\n' ' '; }
# reported: the pids `cuprobe report` (no TRACE) shows, sorted, one line
reported() { "$CUPROBE" report --no-progress --no-symbolize | sed -n 's/^== pid \([0-9]*\) .*/\1/p' | sort -n | tr '\n' ' '; }

mkdir "$TMP/fx" && cd "$TMP/fx" || die "cd"
"$CUPROBE" run -o fixed.trace -- "$P" fork-cuda >/dev/null 2>"$TMP/r1.err" || die "run 1 failed"
set -- fixed*.trace
[ $# -eq 2 ] && [ -f fixed.trace ] || { ls; die "run 1: expected fixed.trace and fixed.PID.trace"; }
run1=$(pids_of fixed*.trace)
sums1=$(md5sum fixed*.trace)
expect_grep '^cuprobe: 2 traces in this directory; report: cuprobe report$' "$TMP/r1.err"
[ "$(reported)" = "$run1" ] || die "run 1: report shows pids '$(reported)', the run's are '$run1'"

"$CUPROBE" run -o fixed.trace -- "$P" fork-cuda >/dev/null 2>"$TMP/r2.err" || die "run 2 failed"
[ "$(ls fixed*.trace | wc -l)" -eq 4 ] || { ls; die "run 2: expected 4 traces in all"; }
echo "$sums1" | md5sum -c --quiet - || die "run 2 wrote over a trace of run 1"
expect_grep "trace file '$TMP/fx/fixed.trace' exists; writing '$TMP/fx/fixed\\.[0-9]+\\.trace'" "$TMP/r2.err"
expect_grep '^cuprobe: 2 traces in this directory; report: cuprobe report$' "$TMP/r2.err"
run2=$(for p in $(pids_of fixed*.trace); do
    case " $run1" in *" $p "*) ;; *) printf '%s ' "$p" ;; esac
done)
[ "$(echo "$run2" | wc -w)" -eq 2 ] || die "run 2: expected two new processes, got '$run2'"
[ "$(reported)" = "$run2" ] || die "run 2: report shows pids '$(reported)', the run's are '$run2'"
"$CUPROBE" report --no-progress --no-symbolize "$TMP/fx" >"$TMP/dir.txt" 2>&1
[ "$(sed -n 's/^== pid \([0-9]*\) .*/\1/p' "$TMP/dir.txt" | sort -n | tr '\n' ' ')" = "$run2" ] ||
    die "report DIR read other traces than the last run's"

# -f: the root's own name is replaced, not renamed.
mkdir "$TMP/f" && cd "$TMP/f" || die "cd"
"$CUPROBE" run -o one.trace -- "$R" rank 0 2>/dev/null || die "-f: run 1 failed"
"$CUPROBE" run -f -o one.trace -- "$R" rank 0 2>"$TMP/f.err" || die "-f: run 2 failed"
[ "$(ls)" = "one.trace" ] || { ls; die "-f: expected one.trace alone"; }
expect_no_grep 'exists' "$TMP/f.err"
# The manifest writes the run id as 16 hex digits; dump drops leading zeros.
id=$(sed -n 's/^run-id 0*\(.\)/\1/p' .cuprobe-last-run)
"$ANA" dump one.trace | head -1 | grep -q "run_id=0x$id\$" || die "-f: one.trace is not the last run's"

# A process that changes directory writes where the run started.
mkdir -p "$TMP/cd/sub" && cd "$TMP/cd" || die "cd"
"$CUPROBE" run -o 'c-%p.trace' -- sh -c 'cd sub && "$0" rank 0' "$R" 2>/dev/null || die "cd: run failed"
[ -z "$(ls sub)" ] || die "a trace was written where the child went: $(ls sub)"
[ "$(ls c-*.trace | wc -l)" -eq 2 ] || { ls; die "cd: expected the shell's and the rank's trace here"; }
"$CUPROBE" report --no-progress --no-symbolize >"$TMP/cd.txt" || die "cd: report failed"
expect_grep 'memory on GPU 0: peak 32.00 MiB' "$TMP/cd.txt"
expect_grep '^== pid [0-9]+ \(run_ranks\)' "$TMP/cd.txt"

# -o a directory, a device, a missing directory: refused, nothing runs.
for o in "$TMP/cd/sub" "$TMP/cd/sub/" /dev/null "$TMP/nodir/x.trace"; do
    "$CUPROBE" run -o "$o" -- sh -c ': >"$0"' "$TMP/ran" 2>"$TMP/o.err"; rc=$?
    [ $rc -eq 2 ] || die "-o $o: exit $rc, expected 2"
    [ ! -e "$TMP/ran" ] || die "-o $o: the program ran"
    expect_grep "^cuprobe: run: -o " "$TMP/o.err"
done
[ ! -e /dev/null.1 ] && [ ! -e "$TMP/cd/sub.1" ] || die "a NAME.1 was written beside a directory or device"
echo "front_runs: ok"
