#!/bin/sh
# report_fifo_module.sh - a trace whose MODULE paths name a FIFO (or a
# directory, or /dev/zero) must not hang or confuse the symbolizer: the
# report finishes, with module+offset frames.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
GEN="$B/tests/unit/test_decode"
[ -x "$ANA" ] && [ -x "$GEN" ] || die "analyzer or test_decode not built"
command -v python3 >/dev/null 2>&1 || skip "python3 not found (rewrites the module paths)"
mkfifo "$TMP/fifo" || skip "mkfifo failed"
mkdir "$TMP/dir"
for target in "$TMP/fifo" "$TMP/dir" /dev/zero; do
    python3 - "$ROOT/tests/fuzz/report_corpus/leak.raw" "$TMP/m.raw" "$target" <<'PY' ||
import sys
def uv(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
def pu(v):
    o = bytearray()
    while True:
        c = v & 0x7f; v >>= 7
        if v: o.append(c | 0x80)
        else: o.append(c); return bytes(o)
raw = open(sys.argv[1], 'rb').read()
path = sys.argv[3].encode()
out, i, n = bytearray(), 0, 0
while i < len(raw):
    t = raw[i]; ln, j = uv(raw, i + 1); p = raw[j:j + ln]; i = j + ln
    if t == 3:   # MODULE: u ts, u tid, u base, u size, u file_offset, str path, str build_id
        k = 0
        for _ in range(5): _, k = uv(p, k)
        sl, k2 = uv(p, k)
        p = p[:k] + pu(len(path)) + path + p[k2 + sl:]
        n += 1
    out += bytes([t]) + pu(len(p)) + p
assert n > 0, "no MODULE record"
open(sys.argv[2], 'wb').write(out)
PY
        die "cannot rewrite the seed"
    "$GEN" pack "$TMP/m.raw" "$TMP/m.trace" || die "pack failed"
    timeout 20 "$ANA" report "$TMP/m.trace" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    [ $rc -eq 124 ] && die "report hangs on a trace whose module path is $target"
    [ $rc -eq 0 ] || { cat "$TMP/err"; die "report on module path $target: exit $rc"; }
    expect_grep '\[leak\]' "$TMP/out"
    echo "ok   module path $target"
done
echo "fifo module ok"
