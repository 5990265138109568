#!/bin/sh
# report_scenarios.sh - every tests/scenarios/NAME.c runs under the shim on
# the fake driver; `cuprobe-analyze report --list` over the traces it left
# must give exactly the findings (check, severity, count) that
# tests/scenarios/NAME.expected lists, in any order, and the text report
# must contain every "grep: TEXT" line of it.
#
# Directives in NAME.expected:
#   # env: VAR=value ...     environment of the run (empty values allowed)
#   # traces: N              number of trace files the run must leave (1)
#   # helper: c10            build tests/scenarios/lib/fake_c10.c as
#                            libc10_cuda.so, path in SC_C10
#   # nodriver               run with no libcuda on the library path (skipped
#                            when the machine has a system-wide libcuda)
# SCENARIOS="a b" runs only those.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
[ -x "$ANA" ] || skip "analyzer not built"
[ -f "$SHIM" ] || skip "shim not built"
[ -f "$FAKE_DIR/libcuda.so.1" ] || skip "fake driver not built"
cd "$ROOT" || die "no $ROOT"

fails=0
ran=0
fail() { echo "FAIL $name: $*"; fails=$((fails + 1)); }

for exp in tests/scenarios/*.expected; do
    name=$(basename "$exp" .expected)
    if [ -n "${SCENARIOS:-}" ]; then
        case " $SCENARIOS " in *" $name "*) ;; *) continue ;; esac
    fi
    prog="$B/tests/scenarios/$name"
    [ -x "$prog" ] || { fail "$prog not built"; continue; }
    dir="$TMP/$name"
    mkdir -p "$dir/empty"
    envs=$(sed -n 's/^# env: //p' "$exp")
    ntraces=$(sed -n 's/^# traces: //p' "$exp")
    libpath="$FAKE_DIR"
    if grep -q '^# nodriver' "$exp"; then
        if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
            echo "skip $name: this machine has a system libcuda"
            continue
        fi
        libpath="$dir/empty"
    fi
    if grep -q '^# helper: c10' "$exp"; then
        ${CC:-cc} -shared -fPIC -g -O1 -fno-omit-frame-pointer \
            -o "$dir/libc10_cuda.so" tests/scenarios/lib/fake_c10.c \
            -L"$FAKE_DIR" -lcuda || { fail "cannot build the c10 stand-in"; continue; }
        envs="$envs SC_C10=$dir/libc10_cuda.so"
    fi
    # shellcheck disable=SC2086  # word splitting of VAR=value pairs is wanted
    env $envs CUPROBE_OUTPUT="$dir/t-%p.trace" LD_PRELOAD="$PRELOAD" \
        LD_LIBRARY_PATH="$libpath" "$prog" >"$dir/out" 2>&1
    rc=$?
    [ $rc -eq 0 ] || { cat "$dir/out"; fail "program exited $rc"; continue; }
    got_n=$(ls "$dir"/t-*.trace 2>/dev/null | wc -l)
    [ "$got_n" -eq "${ntraces:-1}" ] || { fail "$got_n traces, expected ${ntraces:-1}"; continue; }
    "$ANA" report --list "$dir"/t-*.trace | sort >"$dir/got"
    rc=$?
    grep -v -e '^#' -e '^grep: ' -e '^$' "$exp" | sort >"$dir/want"
    if ! diff -u "$dir/want" "$dir/got" >"$dir/diff"; then
        cat "$dir/diff"
        "$ANA" report "$dir"/t-*.trace
        fail "findings differ"
        continue
    fi
    "$ANA" report "$dir"/t-*.trace >"$dir/text" 2>&1
    grep '^grep: ' "$exp" | sed 's/^grep: //' >"$dir/greps"
    while IFS= read -r pat; do
        grep -qF -- "$pat" "$dir/text" || { cat "$dir/text"; fail "no '$pat' in the report"; }
    done <"$dir/greps"
    # The JSON form of the same report must be valid where python is
    # around (read below, all in one interpreter).
    "$ANA" report --json "$dir"/t-*.trace >"$dir/json"
    echo "$name" >>"$TMP/json.list"
    ran=$((ran + 1))
    echo "ok   $name"
done
if [ -f "$TMP/json.list" ] && command -v python3 >/dev/null 2>&1; then
    python3 - "$TMP" >"$TMP/json.bad" <<'PY' || die "cannot check the JSON reports"
import json, sys
for name in open(sys.argv[1] + "/json.list").read().split():
    try:
        json.load(open("%s/%s/json" % (sys.argv[1], name)))
    except ValueError as e:
        print(name, e)
PY
    while read -r name why; do
        ran=$((ran - 1))
        fail "invalid JSON: $why"
    done <"$TMP/json.bad"
fi
[ $fails -eq 0 ] || die "$fails scenario(s) failed"
[ $ran -gt 0 ] || skip "no scenario ran"
echo "$ran scenarios passed"
