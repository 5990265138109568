#!/bin/sh
# report_merge_scale.sh - the report of a run of 5,200 processes whose pids
# repeat across 650 hosts (bench/gen_summary.py) is linear in its processes:
# a process is joined to its parent and its forked child on its own host
# (host, pid, start time), and findings are merged by key, not each against
# every other.  So a parent's FORK names its child on its own host only (one
# fork-after-init finding for the 650 hosts, not one per pair of hosts), and
# the report takes at most 10 s of CPU, far above what it needs and far
# below what pairwise work costs at this size (bench/merge_scale.py gives
# the figures).  Long tier: the summary is generated in Python, and the
# report of it takes seconds on a loaded 2-core machine.
# tier: long
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
GEN="$B/bench/gen_trace"
[ -x "$ANA" ] && [ -x "$GEN" ] || die "analyzer or bench/gen_trace not built"
command -v python3 >/dev/null 2>&1 || skip "no python3"
for k in 0 1 2 3 4 5 6 7; do
    extra=""
    [ $k -eq 0 ] && extra="-c 101"
    # shellcheck disable=SC2086
    "$GEN" -n 20 -t 4 -H seedhost -p $((100 + k)) -P $([ $k -eq 0 ] && echo 1 || echo 100) \
        -T $((1 + k)) -s $((k + 1)) $extra -o "$TMP/s$k.trace" || die "gen_trace failed"
done
"$ANA" report --no-progress --summary "$TMP/seed.json" "$TMP"/s?.trace || die "seed summary failed"
python3 "$ROOT/bench/gen_summary.py" "$TMP/seed.json" "$TMP/big.json" 5200 ||
    die "gen_summary failed"
python3 - "$ANA" "$TMP/big.json" "$TMP/out" <<'PY' >"$TMP/cpu" || die "the report of 5,200 processes failed"
import os, subprocess, sys
with open(sys.argv[3], "w") as out:
    p = subprocess.Popen([sys.argv[1], "report", "--no-progress", "--list", sys.argv[2]], stdout=out)
    _, st, ru = os.wait4(p.pid, 0)
print("%.2f" % (ru.ru_utime + ru.ru_stime))
sys.exit(os.waitstatus_to_exitcode(st))
PY
echo "report --list of 5,200 processes: $(cat "$TMP/cpu") s of CPU"
awk '{ exit !($1 <= 10) }' "$TMP/cpu" || die "the report took $(cat "$TMP/cpu") s of CPU (at most 10)"
[ "$(grep -c '^fork-after-init ' "$TMP/out")" = 1 ] || { cat "$TMP/out"; die "fork-after-init is not one finding"; }
expect_grep '^fork-after-init error 650$' "$TMP/out"
[ "$(wc -l <"$TMP/out")" -le 20 ] || { cat "$TMP/out"; die "findings not merged across hosts"; }
echo "merge scale ok"
