#!/bin/sh
# bench/callgrind_pair.sh - instructions per cuMemAllocAsync+cuMemFreeAsync
# pair on the fake driver, by part: a load-independent measure of the
# allocation path (the ns figures of run_calls.sh move with the machine's
# load).  Counts are callgrind's inclusive counts under run_async_pair
# divided by the pairs it ran (bench_calls runs N/10 pairs in 100 batches
# plus one warm-up batch).
#   Usage: B=build sh bench/callgrind_pair.sh SHIM.so [N]
#   CUPROBE_STACK_DEPTH etc. pass through; FN=run_async_live measures the
#   pairs with 256 other live ranges (bench_calls async_live), FN=run_async_step
#   a training step's lifetimes beside them (async_step).  Needs valgrind.
SHIM=${1:?usage: callgrind_pair.sh SHIM.so [N]}
N=${2:-20000}
B=${B:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# A long flush interval: the producer never helps the writer inside the
# measured loop (that is the writer's work, not the pair's).
LD_LIBRARY_PATH="$B/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" CUPROBE_FLUSH_MS=10000 \
    CUPROBE_OUTPUT="$T/t-%p.trace" LD_PRELOAD="$SHIM" \
    valgrind --tool=callgrind --callgrind-out-file="$T/cg" --toggle-collect=${FN:-run_async_pair} \
    "$B/bench/bench_calls" "$N" >/dev/null 2>"$T/log" || { cat "$T/log"; exit 1; }
# From /: with the sources under the working directory callgrind_annotate
# lists code inlined from headers as functions of its own, outside the
# inclusive count of the function it was inlined into.
(cd / && callgrind_annotate --inclusive=yes "$T/cg" 2>/dev/null) | sed 's/,//g' | grep -v '=>' |
awk -v fn="${FN:-run_async_pair}" -v pairs=$((N / 10 / 100 * 101)) '
    function add(k, v) { if (!(k in seen)) { seen[k] = 1; part[k] = v } }
    $0 ~ (":" fn " ")                             { add("total", $1) }
    /fk_pool.c:cuMemAllocAsync /                  { add("fake_a", $1) }
    /fk_pool.c:cuMemFreeAsync /                   { add("fake_f", $1) }
    /:cp_stack_capture /                          { add("stack", $1) }
    # The first (outermost: the list is by inclusive count) of the names
    # LTO leaves: cp_imap_insert, or cp_dev_insert (DEV) with it inlined.
    /:cp_imap_insert[ .]|:cp_dev_insert[ .]/      { add("imap_i", $1) }
    /:cp_imap_remove[ .]|:cp_dev_remove[ .]/      { add("imap_r", $1) }
    /:cp_ev_begin /                               { add("begin", $1) }
    /:cp_rec_commit_at |:cp_rec_commit /          { add("commit", $1) }
    /:cp_now_ns /                                 { add("clock", $1) }
    /fk_ctx.c:cuCtxGetCurrent /                   { add("fake_ctx", $1) }
    /:cp_ev_ctx /                                 { add("ctx", $1) }
    END {
        fake = part["fake_a"] + part["fake_f"]
        printf "pairs %d; instructions per pair:\n", pairs
        printf "  %-44s %7.0f\n", "shim total (all but the fake driver)", (part["total"] - fake) / pairs
        printf "  %-44s %7.0f\n", "call site (cp_stack_capture)", part["stack"] / pairs
        printf "  %-44s %7.0f\n", "interval map insert + remove", (part["imap_i"] + part["imap_r"]) / pairs
        printf "  %-44s %7.0f\n", "records (cp_ev_begin + commit, 2 records)", (part["begin"] + part["commit"]) / pairs
        printf "  %-44s %7.0f\n", "context lookup, shim side (2 calls)", (part["ctx"] - part["stack"] - part["fake_ctx"]) / pairs
        printf "  %-44s %7.0f\n", "clock reads (cp_now_ns)", part["clock"] / pairs
        printf "  %-44s %7.0f\n", "fake driver (both calls)", fake / pairs
    }'
