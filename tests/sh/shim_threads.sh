# shim_threads.sh - 16 threads x 200 rounds: nothing lost, nothing doubled.
. "$ROOT/tests/sh/lib.sh"
export LD_LIBRARY_PATH="$FAKE_DIR"
CUPROBE_OUTPUT="$TMP/t-%p.trace" LD_PRELOAD="$PRELOAD" "$B/tests/progs/shim_threads" >"$TMP/out" \
    || die "program failed: $(cat "$TMP/out")"
expect_grep 'threads ok: 16 x 200' "$TMP/out"
"$ANA" dump "$TMP"/t-*.trace >"$TMP/d" || die "trace incomplete"
for what in '^ALLOC .*api=cuMemAlloc_v2 result=0' '^FREE .*api=cuMemFree_v2 result=0' \
            '^COPY .*api=cuMemcpyHtoDAsync_v2 ' '^COPY .*api=cuMemcpyDtoHAsync_v2 ' \
            '^SYNC .*api=cuStreamSynchronize '; do
    n=$(grep -c -E "$what" "$TMP/d")
    [ "$n" = 3200 ] || die "expected 3200 of /$what/, got $n"
done
n=$(grep '^LAUNCH_COUNT' "$TMP/d" | sed 's/.*count=\([0-9]*\).*/\1/' | awk '{s+=$1} END {print s}')
[ "$n" = 3200 ] || die "expected 3200 launches counted, got $n"
# Every free must come after the allocation of the same pointer (time order
# across threads): replay the dump.
awk '/^ALLOC .*api=cuMemAlloc_v2/ { for (i=1;i<=NF;i++) if ($i ~ /^ptr=/) live[$i]=1 }
     /^FREE .*api=cuMemFree_v2/ { for (i=1;i<=NF;i++) if ($i ~ /^ptr=/) { if (!live[$i]) bad++; delete live[$i] } }
     END { exit bad ? 1 : 0 }' "$TMP/d" || die "a free came before its allocation"
[ "$(grep -c '^THREAD' "$TMP/d")" -ge 17 ] || die "expected at least 17 threads announced"
echo "16 threads recorded exactly"
