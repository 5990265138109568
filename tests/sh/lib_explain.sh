# tests/sh/lib_explain.sh - for the explain_*.sh tests; source it after
# lib.sh: . "$ROOT/tests/sh/lib_explain.sh"
# Installs the stand-in frameworks of tests/py/standins under
# $TMP/venvs/torch/lib/python3/site-packages, as pip puts real ones (a
# virtualenv named "torch", as many are: its path holds "/torch/"), and runs
# tests/py/explain_prog.py there under the shim on the fake driver.
PROG="$ROOT/tests/py/explain_prog.py"
SITE="$TMP/venvs/torch/lib/python3/site-packages"
mkdir -p "$SITE" && cp -R "$ROOT/tests/py/standins/." "$SITE/" || die "cannot install the stand-ins"
rm -f "$SITE/README.md"
# line_of MARK: the line of explain_prog.py that ends with "# MARK"
line_of() { grep -n "# $1\$" "$PROG" | cut -d: -f1; }
# explain NAME [VAR=VALUE...] -- ARGS...: run explain_prog.py ARGS; trace
# $TMP/NAME.trace, output $TMP/NAME.out/.err, status $TMP/NAME.rc, reports
# $TMP/NAME.report (text) and $TMP/NAME.json.  VALUEs must not hold spaces.
explain() {
    name_=$1; shift
    env_=""
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do env_="$env_ $1"; shift; done
    [ $# -gt 0 ] && shift
    rm -f "$TMP/$name_".*trace
    # shellcheck disable=SC2086
    env -u CUPROBE_FRAMEWORK_SINK $env_ PYTHONPATH="$ROOT/scripts/python:$SITE" \
        PYTHONDONTWRITEBYTECODE=1 LD_PRELOAD="$SHIM" LD_LIBRARY_PATH="$FAKE_DIR" \
        CUPROBE_OUTPUT="$TMP/$name_.trace" FAKECUDA_MEM=1G \
        python3 "$PROG" "$@" >"$TMP/$name_.out" 2>"$TMP/$name_.err"
    echo $? >"$TMP/$name_.rc"
    "$ANA" report --no-progress "$TMP/$name_.trace" >"$TMP/$name_.report" 2>&1
    "$ANA" report --json --no-progress "$TMP/$name_.trace" >"$TMP/$name_.json" 2>&1
}
# rc_is NAME STATUS
rc_is() { [ "$(cat "$TMP/$1.rc")" = "$2" ] || { cat "$TMP/$1.err"; die "$1: exit status $(cat "$TMP/$1.rc"), expected $2"; }; }
# has PATTERN NAME / has_not PATTERN NAME: in NAME's text report
has() { expect_grep "$1" "$TMP/$2.report"; }
has_not() { expect_no_grep "$1" "$TMP/$2.report"; }
