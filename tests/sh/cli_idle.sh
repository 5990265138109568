#!/bin/sh
# cli_idle.sh - an option that would do nothing in the combination given is
# refused (exit 2), naming it and the option that made it idle, and nothing
# is written; each of them still works where it acts.  The table below is
# every such combination of the commands' option tables: an option that
# changes only outputs another option ruled out (--brief, --verbose,
# --sites with --json or --list; everything a report is with --summary),
# one that needs another (--error-exitcode without --fail-on), two formats
# of one output, doctor's machine checks with --kernel-log, and a file or a
# filter given twice (only one would be used).
. "$ROOT/tests/sh/lib.sh"
[ -x "$ANA" ] && [ -x "$CUPROBE" ] || die "analyzer or front end not built"
cd "$TMP" || die "cd"
cp "$ROOT/tests/golden/report_oom_torch.trace" T || die "no golden trace"
"$ANA" report --no-progress --no-symbolize --summary S T 2>/dev/null || die "no summary"
: >L
# NAMES (the options the message must name, comma-separated) | COMMAND LINE
# (T: a trace, S: a summary, L: a kernel log; X and Y must not be written)
while IFS='|' read -r names line; do
    case "$names" in ''|'#'*) continue ;; esac
    rm -f X Y
    # shellcheck disable=SC2086
    set -- $line
    case "$1" in run) bin=$CUPROBE ;; *) bin=$ANA ;; esac
    "$bin" "$@" >out 2>err
    rc=$?
    [ $rc -eq 2 ] || { cat err; die "'$line': exit $rc, want 2"; }
    for n in $(echo "$names" | tr ',' ' '); do
        grep -q -F -- "$n" err || { cat err; die "'$line': the message does not name $n"; }
    done
    grep -q -E "does nothing|given twice|do not go|two formats" err ||
        { cat err; die "'$line': not said why"; }
    [ ! -e X ] && [ ! -e Y ] || die "'$line': wrote a file"
    n=$((${n_idle:-0} + 1)); n_idle=$n
done <<'EOF'
# report: what changes the text (and the page) only
--brief,--json          | report --brief --json T
--brief,--list          | report --brief --list T
--verbose,--json        | report --verbose --json T
-v,--verbose,--list     | report -v --list T
--sites,--json          | report --sites 3 --json T
--sites,--list          | report --sites 3 --list T
--sites,--json          | report --sites 3 --json --html X T
# report: a summary instead of a report
--html,--summary        | report --html X --summary S T
--json,--summary        | report --json --summary S T
--list,--summary        | report --list --summary S T
--fail-on,--summary     | report --fail-on error --summary S T
--brief,--summary       | report --brief --summary S T
--verbose,--summary     | report --verbose --summary S T
--sites,--summary       | report --sites 3 --summary S T
--pid,--summary         | report --pid 1 --summary S T
--rank,--summary        | report --rank 0 --summary S T
--since,--summary       | report --since 1 --summary S T
--until,--summary       | report --until 1 --summary S T
# report: needs, apart
--error-exitcode,--fail-on | report --error-exitcode 4 T
--json,--list           | report --json --list T
# stats
--json,--csv            | stats --json --csv T
--table,--json          | stats --json --table api T
--top,--table           | stats --table api --top 3 T
--no-symbolize,--table  | stats --table devices --no-symbolize T
# doctor: --kernel-log checks no machine
--python,--kernel-log   | doctor --kernel-log L --python
--python,--kernel-log   | doctor --kernel-log L --python=python3
--min-cuda,--kernel-log | doctor --kernel-log L --min-cuda 12.0
--timeout,--kernel-log  | doctor --timeout 5 --kernel-log L
--bw-mib,--kernel-log   | doctor --kernel-log L --bw-mib 4
# a file or a filter twice
--html                  | report --html X --html Y T
--summary               | report --summary X --summary Y T
--pid                   | report --pid 1 --pid 2 T
--rank                  | report --rank 1 --rank 2 T
--since                 | report --since 1 --since 2 T
--until                 | report --until 1 --until 2 T
--perfetto              | export --perfetto X --perfetto Y T
--pid                   | export --pid 1 --pid 2 --perfetto X T
--since                 | export --since 1 --since 2 --perfetto X T
--pid                   | stats --pid 1 --pid 2 T
--until                 | stats --until 1 --until 2 T
--since                 | dump --since 1 --since 2 T
--kernel-log            | doctor --kernel-log L --kernel-log L
-o                      | run -o X -o Y -- true
EOF
[ "${n_idle:-0}" -ge 40 ] || die "the table was not read (${n_idle:-0} lines)"

# Each works where it acts: alone, or with the output it changes.
while IFS='|' read -r want line; do
    case "$want" in ''|'#'*) continue ;; esac
    # shellcheck disable=SC2086
    set -- $line
    "$ANA" "$@" >out 2>err
    rc=$?
    case " $want " in *" $rc "*) ;; *) cat err; die "'$line': exit $rc, want $want" ;; esac
done <<'EOF'
0 3 | report --no-progress --brief T
0 3 | report --no-progress --brief --json --html X T
0 3 | report --no-progress -v --list --html X T
0 3 | report --no-progress --sites 3 --html X T
3   | report --no-progress --fail-on error --error-exitcode 3 --list T
0 3 | report --no-progress --since 0.0001 --until 100 T
0   | stats --no-progress --table peak --top 3 T
0   | stats --no-progress --csv --table api --table oom --no-symbolize T
0   | stats --no-progress --json --top 3 T
0   | export --no-progress --perfetto X --since 0.0001 T
0   | doctor --kernel-log L
EOF
exit 0
