#!/bin/sh
# host_killed.sh - a process holding pinned and malloc'd host memory is
# SIGKILLed (tests/progs/host_mem.c: 112 MiB pinned at the end, 64 + 32
# cuMemAllocHost/cuMemHostAlloc, 16 registered, 8 allocated and freed; MB
# MiB malloc'd and touched).  The writer thread's HOSTINFO/HOSTMEM records
# survive the kill and the report of the killed process (exit 0) says:
#   - on the real /proc: HOSTINFO's MemTotal is this machine's, the last
#     HOSTMEM's pinned is exactly 112 MiB and its RSS holds all of it;
#   - with CUPROBE_PROCFS_ROOT/CUPROBE_SYSFS_ROOT pointing at fake trees
#     (meminfo, self/cgroup, a Slurm-like job cgroup above the step):
#     plenty of memory gives "host memory was not short"; the job's cgroup
#     at its limit gives "consistent with the host OOM killer (the cgroup
#     /job_7 was at its limit)", in the text and in the JSON (process
#     block and the finding's details);
#   - the report from a summary of the trace equals the direct one.
. "$ROOT/tests/sh/lib.sh"
P="$B/tests/progs/host_mem"
[ -f "$SHIM" ] && [ -x "$ANA" ] && [ -x "$P" ] || skip "shim, analyzer or host_mem not built"
command -v python3 >/dev/null 2>&1 || skip "no python3 (JSON checks)"
MIB=1048576

# run NAME MB [VAR=VALUE...]: host_mem under the shim, killed once ready;
# the trace is $TMP/NAME.trace.
run() {
    name=$1 mb=$2; shift 2
    env "$@" CUPROBE_OUTPUT="$TMP/$name-%p.trace" CUPROBE_FLUSH_MS=20 LD_PRELOAD="$PRELOAD" \
        LD_LIBRARY_PATH="$FAKE_DIR" "$P" "$mb" >"$TMP/$name.out" 2>&1 &
    pid=$!
    wait_line ready "$TMP/$name.out" $pid 600 "$name: host_mem never got ready"
    sleep 0.2   # several flushes after the last sample
    kill -9 $pid
    wait $pid 2>/dev/null
    mv "$TMP/$name-$pid.trace" "$TMP/$name.trace" || die "$name: no trace"
    "$ANA" report --no-progress "$TMP/$name.trace" >"$TMP/$name.txt" 2>&1 ||
        { cat "$TMP/$name.txt"; die "$name: report exit $?"; }
    "$ANA" report --no-progress --json "$TMP/$name.trace" >"$TMP/$name.json" 2>/dev/null ||
        die "$name: report --json failed"
    "$ANA" dump "$TMP/$name.trace" >"$TMP/$name.dump" 2>/dev/null
    expect_grep "^warning +\[killed\]" "$TMP/$name.txt"
}
# last FIELD REC NAME: FIELD of the last REC record of NAME's dump
last() { grep "^$2 " "$TMP/$3.dump" | tail -n 1 | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }

# 1. The real /proc.
run real 128
total=$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)
[ "$(last mem_total HOSTINFO real)" = $((total * 1024)) ] ||
    die "HOSTINFO mem_total $(last mem_total HOSTINFO real), /proc/meminfo says $total kB"
[ "$(last pinned HOSTMEM real)" = $((112 * MIB)) ] ||
    die "last HOSTMEM pinned $(last pinned HOSTMEM real), expected $((112 * MIB))"
rss=$(last rss HOSTMEM real)
[ "$rss" -ge $(((112 + 128) * MIB)) ] || die "last HOSTMEM rss $rss: less than what was touched"
expect_grep "Host memory at the last sample \(\+[0-9.]+ m?s\): RSS [0-9.]+ MiB of [0-9.]+ GiB total \(MemAvailable [0-9.]+ [MG]iB\).*, pinned 112.00 MiB\." "$TMP/real.txt"
expect_grep "Peak RSS [0-9.]+ MiB at \+" "$TMP/real.txt"
expect_grep "^  Verdict: " "$TMP/real.txt"

# 2. Fake trees: no shortage, then the job's cgroup at its limit.
F="$TMP/fake"
mkdir -p "$F/proc/self" "$F/sys/fs/cgroup/job_7/step_0"
printf 'MemTotal:       65843412 kB\nMemFree: 1 kB\nMemAvailable:   60000000 kB\nSwapTotal: 0 kB\n' \
    >"$F/proc/meminfo"
echo "0::/job_7/step_0" >"$F/proc/self/cgroup"
echo max >"$F/sys/fs/cgroup/job_7/step_0/memory.max"
echo 1000 >"$F/sys/fs/cgroup/job_7/step_0/memory.current"
echo max >"$F/sys/fs/cgroup/job_7/memory.max"
echo 209715200 >"$F/sys/fs/cgroup/job_7/memory.current"
run roomy 64 CUPROBE_PROCFS_ROOT="$F/proc" CUPROBE_SYSFS_ROOT="$F/sys"
expect_grep "RSS [0-9.]+ MiB of 62.79 GiB total \(MemAvailable 57.22 GiB\), pinned 112.00 MiB\." "$TMP/roomy.txt"
expect_grep "Verdict: host memory was not short: another signal source \(a scheduler's time limit, kill -9\)\." "$TMP/roomy.txt"
expect_no_grep "Verdict: consistent" "$TMP/roomy.txt"

echo 268435456 >"$F/sys/fs/cgroup/job_7/memory.max"      # 256 MiB
echo 266338304 >"$F/sys/fs/cgroup/job_7/memory.current"  # 254 MiB
run full 64 CUPROBE_PROCFS_ROOT="$F/proc" CUPROBE_SYSFS_ROOT="$F/sys"
expect_grep "\), cgroup 254.00 MiB of 256.00 MiB limit, pinned 112.00 MiB\." "$TMP/full.txt"
expect_grep "Verdict: consistent with the host OOM killer \(the cgroup /job_7 was at its limit\)\." "$TMP/full.txt"
[ "$(last cg_limit HOSTINFO full)" = 268435456 ] || die "HOSTINFO cg_limit $(last cg_limit HOSTINFO full)"
grep -q '^HOSTINFO .*cg_path="/job_7"' "$TMP/full.dump" || die "HOSTINFO cg_path is not the job's"

python3 - "$TMP/full.json" "$TMP/roomy.json" <<'EOF' || die "JSON checks failed"
import json, sys
for path, verdict in ((sys.argv[1], "oom_killer_cgroup"), (sys.argv[2], "not_short")):
    r = json.load(open(path))
    hm = r["processes"][0]["host_memory"]
    assert hm["pinned_bytes"] == 112 << 20, hm
    assert hm["rss_bytes"] >= (112 + 64) << 20, hm
    assert hm["peak_rss_bytes"] >= hm["rss_bytes"], hm
    k = [f for f in r["findings"] if f["check"] == "killed"]
    assert len(k) == 1, k
    d = k[0]["details"]["host_memory"]
    assert d["verdict"] == verdict, (path, d)
    assert d["pinned_bytes"] == 112 << 20, d
EOF

# 3. A summary carries it all: the merged report equals the direct one.
"$ANA" report --no-progress --summary "$TMP/s.json" "$TMP/full.trace" || die "summary failed"
for fmt in "" --json; do
    "$ANA" report --no-progress $fmt "$TMP/s.json" >"$TMP/merged" 2>&1
    "$ANA" report --no-progress $fmt "$TMP/full.trace" >"$TMP/direct" 2>&1
    cmp -s "$TMP/merged" "$TMP/direct" || { diff "$TMP/direct" "$TMP/merged"; die "summary report differs ($fmt)"; }
done
echo "host_killed: pinned 112 MiB, RSS $((rss / MIB)) MiB recorded before SIGKILL; both verdicts"
