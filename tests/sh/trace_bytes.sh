# trace_bytes.sh - what repeats is recorded once: a loop that
# asks cuDriverGetVersion 2,580 times leaves at most two DRIVER records (the
# device section's and the first answer), and each of 64 long kernel names
# appears in one LAUNCH_COUNT only, while every launch is still counted.
. "$ROOT/tests/sh/lib.sh"
export LD_LIBRARY_PATH="$FAKE_DIR"
# 60 steps of bench/bytes_workload.c: 94 launches and 43 version queries each.
CUPROBE_OUTPUT="$TMP/t.trace" LD_PRELOAD="$PRELOAD" "$B/bench/bytes_workload" 60 0 >"$TMP/out" 2>&1 \
    || die "program failed: $(cat "$TMP/out")"
"$ANA" dump "$TMP/t.trace" >"$TMP/d" || die "trace incomplete"
n=$(grep -c '^DRIVER ' "$TMP/d")
[ "$n" -ge 1 ] && [ "$n" -le 2 ] || die "expected 1 or 2 DRIVER records for one answer, got $n"
expect_grep '^DRIVER .*driver_version=13000 result=0' "$TMP/d"
n=$(grep '^LAUNCH_COUNT' "$TMP/d" | sed 's/.*count=\([0-9]*\).*/\1/' | awk '{s+=$1} END {print s}')
[ "$n" = 5640 ] || die "expected 5640 launches counted, got $n"
# Per function: exactly one record names it, and it is the first.
grep '^LAUNCH_COUNT' "$TMP/d" | awk '
    { f = ""; named = 0
      for (i = 1; i <= NF; i++) {
          if ($i ~ /^func=/) f = $i
          if ($i ~ /^name="fake_noop@/) named = 1
      }
      recs[f]++
      if (named) { names[f]++; if (recs[f] != 1) late++ } }
    END { for (f in recs) { nf++; if (names[f] != 1) bad++ }
          printf "%d functions, %d records\n", nf, NR
          exit (nf == 64 && NR > 64 && !bad && !late) ? 0 : 1 }' >"$TMP/lc" \
    || die "kernel names not given exactly once, first: $(cat "$TMP/lc")"
cat "$TMP/lc"
"$ANA" report --no-symbolize "$TMP/t.trace" >"$TMP/r" || die "report failed: $(cat "$TMP/r")"
echo "DRIVER and LAUNCH_COUNT names recorded once"
