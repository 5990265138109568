#!/bin/sh
# framework_shim: the companion's records reach the trace through
# libcuprobe.so's exported cuprobe_framework_record/_log (ctypes), and the
# analyzer's dump shows them.  Uses the stand-in PyTorch 2.11 of
# tests/py/standins; skipped until the shim and the analyzer are built.
. "$ROOT/tests/sh/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
[ -f "$SHIM" ] || skip "no $SHIM"
[ -x "$ANA" ] || skip "no $ANA"
nm -D --defined-only "$SHIM" | grep -q ' cuprobe_framework_record$' ||
    skip "$SHIM does not export cuprobe_framework_record (interpose/exports.map)"

PP="$ROOT/scripts/python:$ROOT/tests/py/standins"
# same_stderr A B: equal once the shim's own "[cuprobe PID] ..." lines (which
# name the pid) are left out: only the program's stderr is compared.
same_stderr() {
    grep -v '^\[cuprobe [0-9]*\]' "$1" >"$1.prog"
    grep -v '^\[cuprobe [0-9]*\]' "$2" >"$2.prog"
    cmp -s "$1.prog" "$2.prog" || { echo "--- $1"; cat "$1"; echo "--- $2"; cat "$2"; return 1; }
}
run_prog() { # run_prog TRACE SCENARIO [VAR=VALUE...]
    trace=$1; scenario=$2; shift 2
    env -u CUPROBE_FRAMEWORK_SINK "$@" PYTHONPATH="$PP" PYTHONDONTWRITEBYTECODE=1 \
        LD_PRELOAD="$SHIM" CUPROBE_OUTPUT="$trace" \
        python3 "$ROOT/tests/py/framework_prog.py" "$scenario"
}

# 1. The fragmentation OOM: three torch.oom records and torch.exit in the trace.
run_prog "$TMP/frag.cuprobe" frag >"$TMP/out" 2>"$TMP/err" || die "frag run failed"
expect_grep '^init by: program$' "$TMP/out"
"$ANA" dump "$TMP/frag.cuprobe" >"$TMP/dump" 2>&1 || die "dump failed"
n=$(grep -c 'torch\.oom' "$TMP/dump")
[ "$n" -ge 3 ] || { cat "$TMP/dump"; die "expected 3 torch.oom records, found $n"; }
expect_grep 'torch\.exit' "$TMP/dump"
expect_grep 'largest_free_block.{1,4}6291456' "$TMP/dump"
expect_grep 'request_bytes.{1,4}268435456' "$TMP/dump"
expect_grep 'companion\.info' "$TMP/dump"

# 2. Output and exit status do not depend on the companion.
run_prog "$TMP/off.cuprobe" frag CUPROBE_FRAMEWORK=0 >"$TMP/out0" 2>"$TMP/err0" ||
    die "run without the companion failed"
same_stderr "$TMP/err" "$TMP/err0" || die "stderr differs with the companion"
cmp -s "$TMP/out" "$TMP/out0" || die "stdout differs with the companion"
# With no record at all the shim may not create the file.
if [ -f "$TMP/off.cuprobe" ]; then
    "$ANA" dump "$TMP/off.cuprobe" >"$TMP/dump0" 2>&1 || die "dump failed"
    expect_no_grep 'FRAMEWORK' "$TMP/dump0"
fi

# 3. A failure inside the companion: one log line in the trace, nothing after.
run_prog "$TMP/fail.cuprobe" frag STANDIN_TORCH_FAIL=snapshot >"$TMP/out1" 2>"$TMP/err1" ||
    die "failing run failed"
cmp -s "$TMP/out" "$TMP/out1" || die "stdout differs after a companion failure"
same_stderr "$TMP/err" "$TMP/err1" || die "stderr differs after a companion failure"
"$ANA" dump "$TMP/fail.cuprobe" >"$TMP/dump1" 2>&1 || die "dump failed"
n=$(grep -c 'companion disabled' "$TMP/dump1")
[ "$n" -eq 1 ] || { cat "$TMP/dump1"; die "expected one 'companion disabled' line, found $n"; }
expect_no_grep 'torch\.exit' "$TMP/dump1"
# 4. A payload over 256 KiB arrives in parts; one over 16 MiB is refused.
LD_PRELOAD="$SHIM" CUPROBE_OUTPUT="$TMP/parts.cuprobe" python3 -c '
import ctypes
f = ctypes.CDLL(None).cuprobe_framework_record
f.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t)
d = b"{\"x\":\"" + b"a" * 600000 + b"\"}"
print(f(b"torch.exit", d, len(d)), f(b"big", b"", 17 << 20), f(b"", b"{}", 2))
' >"$TMP/rc" 2>&1 || die "ctypes call failed"
expect_grep '^0 -7 -22$' "$TMP/rc"
"$ANA" dump "$TMP/parts.cuprobe" >"$TMP/dump2" 2>&1 || die "dump failed"
[ "$(grep -c 'kind="torch.exit#[0-2]/3"' "$TMP/dump2")" -eq 3 ] ||
    { cat "$TMP/dump2"; die "expected the payload in 3 parts"; }
echo "ok"
