#!/bin/sh
# pystack_threads.sh - per-thread call-site state goes with its thread:
# 3,000 short-lived Python threads, each with a walk-memo table (cp_stack.c,
# 24 KiB: 72 MB if kept), must not raise the peak RSS by more than 30 MB
# over 200 threads (a memo that kept every table would add about 72 MB).
# Needs a CPython 3.12-3.13 (the code watcher, hence the memo).
. "$ROOT/tests/sh/lib.sh"
need_py_fake
py=
for p in /usr/bin/python3.1[23] "${HOME:-/root}"/.pyenv/versions/3.1[23].*/bin/python3.1[23]; do
    [ -x "$p" ] && { py=$p; break; }
done
[ -n "$py" ] || skip "no CPython 3.12-3.13 found"
run() {
    LD_PRELOAD="$PRELOAD" LD_LIBRARY_PATH="$FAKE_DIR" CUPROBE_LOG=2 \
        CUPROBE_OUTPUT="$TMP/t$1-%p.trace" "$py" "$ROOT/tests/py/thread_churn.py" "$1" \
        >"$TMP/out$1" 2>&1 || { cat "$TMP/out$1"; die "thread_churn.py $1 failed"; }
    expect_grep "^code watcher: on" "$TMP/out$1"
    expect_grep "python chains repeated [1-9]" "$TMP/out$1"
}
run 200
run 3000
a=$(sed -n 's/^maxrss_kib //p' "$TMP/out200")
b=$(sed -n 's/^maxrss_kib //p' "$TMP/out3000")
echo "peak RSS: 200 threads $a KiB, 3000 threads $b KiB"
[ $((b - a)) -lt 30720 ] || die "3000 threads kept $((b - a)) KiB more than 200: per-thread state leaks"
