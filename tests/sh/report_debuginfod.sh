#!/bin/sh
# report_debuginfod.sh - DEBUGINFOD_URLS alone never makes the report use
# the network: a stripped module whose debug information is nowhere here,
# with DEBUGINFOD_URLS naming a server, is reported from its symbol table
# and the server sees no connection (elfutils' own search would ask it, and
# wait for a slow one module by module).  With --debuginfod the report does
# ask, and says so.  The server notes each connection and closes it, so
# that a request fails at once instead of at the client's timeout.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/sh/lib_module.sh"
[ -x "$ANA" ] || die "analyzer not built"

D="$TMP/mod"
modlib_build "$D"
objcopy --strip-debug "$D/libcpmod.so" || die "objcopy"
modlib_trace "$D/libcpmod.so" "$D/m.trace"

# A server that takes connections, notes each, and closes it unanswered.
python3 - "$TMP/port" "$TMP/conns" <<'PY' &
import os, socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
s.settimeout(0.5)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
end = time.time() + 120
while time.time() < end:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    with open(sys.argv[2], "a") as f:
        f.write("connection\n")
    c.close()
PY
SERVER=$!
i=0
while [ ! -s "$TMP/port" ]; do
    i=$((i + 1))
    [ $i -lt 100 ] || die "the silent server did not start"
    sleep 0.1
done
export DEBUGINFOD_URLS="http://127.0.0.1:$(cat "$TMP/port")"
export DEBUGINFOD_CACHE_PATH="$TMP/cache" DEBUGINFOD_TIMEOUT=2
: >"$TMP/conns"

timeout 20 "$ANA" report --no-progress "$D/m.trace" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 124 ] && die "report stalls behind DEBUGINFOD_URLS without --debuginfod"
[ $rc -eq 0 ] || { cat "$TMP/err"; die "report exits $rc"; }
[ -s "$TMP/conns" ] && die "report contacted DEBUGINFOD_URLS without --debuginfod"
expect_grep 'cp_mod_work \(libcpmod\.so\)' "$TMP/out"
echo "ok   DEBUGINFOD_URLS set, no --debuginfod: no connection"

timeout 60 "$ANA" report --no-progress --debuginfod "$D/m.trace" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] || { cat "$TMP/err"; die "report --debuginfod exits $rc"; }
[ -s "$TMP/conns" ] || die "report --debuginfod did not ask the server"
expect_grep 'asking debuginfod .* libcpmod\.so' "$TMP/err"
echo "ok   --debuginfod asks the server, and says so"
kill "$SERVER" 2>/dev/null
echo "debuginfod ok"
