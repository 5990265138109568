#!/bin/sh
# accuracy_table: the accuracy suite's judging and its table
# (tests/gpu/accuracy/run.py) count right on canned report JSON: found at
# the marked line, elsewhere, missed, false alarms in clean and bug runs,
# skipped, not run and failed workloads, shards merged; and every workload
# of the real suite compiles and carries one `# EXPECT:` marker naming
# known checks; and with cuprobe and the fake driver built, run.py runs a
# program under cuprobe and tables it (tests/py/accuracy_table.py says
# which cases).
. "$ROOT/tests/sh/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
# With the front end and the fake driver built, a run on the fake driver too.
set --
[ -x "$CUPROBE" ] && [ -f "$SHIM" ] && [ -f "$FAKE_DIR/libcuda.so.1" ] && set -- "$CUPROBE" "$FAKE_DIR"
TMPDIR="$TMP" python3 "$ROOT/tests/py/accuracy_table.py" "$@" || die "tests/py/accuracy_table.py failed"
