#!/bin/sh
# front_manifest.sh - the run manifest (DIR/.cuprobe-last-run) is
# bookkeeping: whatever is in its place, the program runs, there is one
# warning, nothing hangs and no file but the manifest is written:
#  - a directory, a FIFO, a symlink to a victim file under the name;
#  - another user's manifest in a sticky directory (the run as nobody,
#    through setpriv; skipped unless root), which nobody's report does not
#    read either;
# and an ordinary run replaces the manifest with one naming its traces.
. "$ROOT/tests/sh/lib.sh"
[ -f "$SHIM" ] && [ -x "$CUPROBE" ] || die "shim or front end not built"
M=.cuprobe-last-run
echo "victim" >"$TMP/victim"

# hostile NAME SETUP [RUNNER...]: make $TMP/NAME, plant $M there with
# SETUP (run in it), start a run that touches $TMP/NAME.ran, check.
hostile() {
    name=$1 setup=$2; shift 2
    d="$TMP/$name"
    mkdir "$d" && (cd "$d" && eval "$setup") || die "$name: setup"
    before=$(ls -la "$d/$M" 2>&1; [ -f "$d/$M" ] && md5sum <"$d/$M")
    timeout 20 "$@" "$CUPROBE" run -o "$d/t-%p.trace" -- sh -c ': >"$0"' "$d/ran" \
        >"$TMP/$name.out" 2>"$TMP/$name.err"; rc=$?
    [ $rc -ne 124 ] || die "$name: the run hung"
    [ $rc -eq 0 ] || { cat "$TMP/$name.err"; die "$name: exit $rc, the program's is 0"; }
    [ -e "$d/ran" ] || die "$name: the program did not run"
    n=$(grep -c "$M" "$TMP/$name.err")
    [ "$n" -eq 1 ] || { cat "$TMP/$name.err"; die "$name: $n warnings about $M, expected one"; }
    after=$(ls -la "$d/$M" 2>&1; [ -f "$d/$M" ] && md5sum <"$d/$M")
    [ "$before" = "$after" ] || die "$name: $M was changed: '$before' -> '$after'"
    [ "$(cat "$TMP/victim")" = victim ] || die "$name: the victim file was written"
    left=$(ls -A "$d" | grep -v -x -e "$M" -e ran -e 't-[0-9]*\.trace')
    [ -z "$left" ] || die "$name: files left behind: $left"
    echo "$name: ok ($(grep "$M" "$TMP/$name.err"))"
}

hostile dir "mkdir $M"
hostile fifo "mkfifo $M"
hostile symlink "ln -s '$TMP/victim' $M"
# The report reads the directory without waiting on the FIFO.
timeout 20 "$ANA" report --no-progress --no-symbolize "$TMP/fifo" >"$TMP/fifo.rep" 2>&1; rc=$?
[ $rc -eq 0 ] || { cat "$TMP/fifo.rep"; die "report of the FIFO manifest's directory: exit $rc"; }

# Another user's manifest in a sticky directory: nobody cannot replace
# root's file.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
    chmod 755 "$TMP"
    AS_NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
    $AS_NOBODY true 2>/dev/null || AS_NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
    hostile sticky "chmod 1777 . && echo 'theirs' >$M && chmod 644 $M" $AS_NOBODY
    # ... and nobody's report of that directory does not take root's
    # manifest for its own: every trace there instead.
    $AS_NOBODY "$ANA" report --no-progress --no-symbolize "$TMP/sticky" >"$TMP/sticky.rep" \
        2>"$TMP/sticky.rerr" || { cat "$TMP/sticky.rerr"; die "sticky: report failed"; }
    expect_grep "$M belongs to another user in a shared directory: not read" "$TMP/sticky.rerr"
    expect_grep '^cuprobe report.*: 1 trace$' "$TMP/sticky.rep"
else
    echo "not root: another user's manifest is not tried"
fi

# An ordinary run: the manifest names the run's traces, is a regular file
# made by rename (no temporary left), and CUPROBE_LOG=0 keeps quiet.
mkdir "$TMP/ok" && cd "$TMP/ok" || die "cd"
CUPROBE_LOG=0 "$CUPROBE" run -o 'o-%p.trace' -- true 2>"$TMP/ok.err" || die "ok: run failed"
[ ! -s "$TMP/ok.err" ] || die "CUPROBE_LOG=0 still printed: $(cat "$TMP/ok.err")"
[ -f "$M" ] && [ ! -L "$M" ] || die "no manifest written"
expect_grep '^cuprobe-run 1$' "$M"
expect_grep '^run-id [0-9a-f]{16}$' "$M"
expect_grep "^trace o-[0-9]+\\.trace\$" "$M"
[ "$(ls -A | grep -c "^$M")" -eq 1 ] || die "a temporary manifest was left: $(ls -A)"
echo "front_manifest: ok"
