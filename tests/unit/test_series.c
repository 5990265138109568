// link: build/analyzer/model/cp_series.o build/analyzer/model/cp_model.o build/analyzer/util/cp_zpool.o build/analyzer/model/cp_live.o build/analyzer/model/cp_model_end.o build/analyzer/model/cp_model_meta.o build/analyzer/model/cp_model_host.o build/analyzer/util/cp_format.o build/analyzer/util/cp_map.o build/analyzer/model/cp_fw.o build/analyzer/symbols/cp_sym.o build/analyzer/symbols/cp_debuginfo.o build/analyzer/symbols/cp_libs.o build/analyzer/decode/cp_names.o build/analyzer/decode/cp_decode.o build/analyzer/util/cp_file.o build/analyzer/decode/cp_decode_fields.o
// link: build/analyzer/decode/cp_decode_note.o build/analyzer/decode/cp_decode_ring.o build/analyzer/decode/cp_decode_defer.o build/analyzer/decode/cp_decode_window.o build/analyzer/model/cp_backward.o
/*
 * test_series.c - the model's bucketed timeline (cp_series) fed synthetic
 * records: it stays within CP_SER_N buckets over a long run (buckets merge),
 * its highest bucket is the device's peak, the peak bucket lists the
 * largest live allocation first, a free of a listed allocation is noticed,
 * memory freed before the end shows as the last bucket's minimum, copies
 * are counted by class with the time blocked in synchronous ones, the
 * eighths of the run (the text report's line) see the growth, and memory
 * allocated from inside a CUDA library is that holder's until it is freed;
 * a lean series (cp_series_lean) keeps the same most held per bucket.
 */
#include <stdio.h>
#include <string.h>

#define CP_UNIT_COUNT
#include "cp_unit.h"
#include "cp_model.h"
#include "cp_series.h"

/* A process with a timeline, as the analyzer makes one (cp_analyze.c). */
static cp_proc *proc_new(const char *file, int index)
{
    cp_proc *p = cp_proc_new(file, index);
    if (p && (!(p->series = cp_series_new()) || cp_series_start(p->series) != 0)) {
        cp_series_free(p->series);
        cp_proc_free(p);
        return NULL;
    }
    return p;
}

static void proc_free(cp_proc *p)
{
    if (p)
        cp_series_free(p->series);
    cp_proc_free(p);
}

/* r into p as the analyzer's record loop feeds it: the timeline sees a
 * FREE before the model, the rest after.  @return : 0, or -ENOMEM. */
static int feed(cp_proc *p, const cp_record *r)
{
    if (r->type == CP_REC_FREE)
        cp_series_pre(p->series, r, cp_model_freeing(p, r));
    int rc = cp_model_feed(p, NULL, r);
    return rc ? rc : cp_series_feed(p->series, p, r, p->made);
}

static cp_record rec(int type, uint64_t ts)
{
    cp_record r;
    memset(&r, 0, sizeof r);
    r.type = (uint8_t)type;
    r.ts = ts;
    r.ev.dev = 0;
    return r;
}

/* 4000 allocations over 40 s into p, each freed except every 4th (growth),
 * one of 512 MiB (*biggest at *big_ptr); 100 synchronous pageable copies of
 * 1 ms and 50 async pinned ones; then the big one is freed. */
static void feed_growth(cp_proc *p, uint64_t *biggest, uint64_t *big_ptr)
{
    uint64_t ts = 1000000000ull, ms = 1000000ull;
    for (uint64_t i = 0; i < 4000; i++) {
        cp_record r = rec(CP_REC_ALLOC, ts += 10 * ms);
        r.u.alloc.kind = CP_MK_DEVICE;
        r.u.alloc.ptr = 0x10000000ull + i * 0x100000;
        r.u.alloc.size = (1 + i % 7) << 20;
        if (i == 2500) {
            r.u.alloc.size = 512ull << 20;
            *biggest = r.u.alloc.size;
            *big_ptr = r.u.alloc.ptr;
        }
        r.ev.stack = 1 + i % 5;
        CHECK(feed(p, &r) == 0);
        if (i % 4 && i != 2500) {
            cp_record f = rec(CP_REC_FREE, ts += ms);
            f.u.free.kind = CP_MK_DEVICE;
            f.u.free.ptr = r.u.alloc.ptr;
            CHECK(feed(p, &f) == 0);
        }
    }
    for (int i = 0; i < 150; i++) {
        cp_record c = rec(CP_REC_COPY, ts += ms);
        c.u.copy.bytes = 4096;
        c.u.copy.src_class = i < 100 ? CP_MC_PAGEABLE : CP_MC_PINNED;
        c.u.copy.dst_class = CP_MC_DEVICE;
        c.u.copy.flags = i < 100 ? 0 : CP_CF_ASYNC;
        c.ev.dur_ns = ms;
        CHECK(feed(p, &c) == 0);
    }
    cp_record f = rec(CP_REC_FREE, ts += ms);
    f.u.free.kind = CP_MK_DEVICE;
    f.u.free.ptr = *big_ptr;
    CHECK(feed(p, &f) == 0);
}

/* A lean series (the text and JSON reports') fed the same records has the
 * same buckets and the same most held in each (the "over time" line), and
 * none of what only the page and the export read. */
static void check_lean(const cp_series *full)
{
    cp_proc *q = proc_new("lean", 0);
    CHECK(q && q->series);
    if (!q)
        return;
    cp_series_lean(q->series);
    uint64_t biggest = 0, big_ptr = 0;
    feed_growth(q, &biggest, &big_ptr);
    const cp_series *s = q->series;
    CHECK(cp_series_n(s) == cp_series_n(full) && s->width == full->width);
    for (int k = 0; k < 8; k++)
        CHECK(cp_series_max_in(s, 0, k / 8.0, (k + 1) / 8.0) ==
              cp_series_max_in(full, 0, k / 8.0, (k + 1) / 8.0));
    const cp_ser_dev *v = cp_series_dev(s, 0), *w = cp_series_dev(full, 0);
    CHECK(v && w);
    for (int i = 0; v && w && i < cp_series_n(s); i++) {
        CHECK(v[i].max_held == w[i].max_held);
        CHECK(v[i].n_top == 0);
        CHECK(s->b[i].copies[CP_CC_PAGEABLE] == 0 && s->b[i].blocked_ns == 0);
    }
    CHECK(s->now[0].n_top == 0 && s->lib_stack.n == 0);
    proc_free(q);
}

int main(void)
{
    cp_proc *p = proc_new("synthetic", 0);
    CHECK(p && p->series);
    uint64_t ms = 1000000ull;
    uint64_t biggest = 0, big_ptr = 0;
    feed_growth(p, &biggest, &big_ptr);

    const cp_series *s = p->series;
    int n = cp_series_n(s);
    CHECK(n >= CP_SER_N / 2 && n <= CP_SER_N);
    CHECK(s->width > 1000);                     /* it merged */
    const cp_ser_dev *v = cp_series_dev(s, 0);
    CHECK(v != NULL);
    uint64_t top = 0;
    int at = -1;
    for (int i = 0; v && i < n; i++) {
        CHECK(v[i].used);
        CHECK(v[i].min_held <= v[i].max_held);
        if (v[i].max_held > top) {
            top = v[i].max_held;
            at = i;
        }
    }
    CHECK(top == p->mem[0].peak_total);
    CHECK(at >= 0 && v[at].n_top > 0 && v[at].top[0].size == biggest);
    /* Holders add up to what was held (no framework, no library here). */
    uint64_t sum = 0;
    for (int k = 0; at >= 0 && k < CP_HD_N; k++)
        sum += v[at].hold[k];
    CHECK(sum == top);
    CHECK(v[n - 1].min_held == p->mem[0].held_total);
    CHECK(v[n - 1].min_held + biggest <= v[n - 1].max_held);
    /* The list after the free no longer names the freed allocation. */
    for (int k = 0; k < s->now[0].n_top; k++)
        CHECK(s->now[0].top[k].size != biggest);
    uint64_t copies[CP_CC_N] = { 0 }, blocked = 0;
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < CP_CC_N; c++)
            copies[c] += s->b[i].copies[c];
        blocked += s->b[i].blocked_ns;
    }
    CHECK(copies[CP_CC_PAGEABLE] == 100 && copies[CP_CC_PINNED] == 50 && copies[CP_CC_PEER] == 0);
    CHECK(blocked == 100 * ms);
    /* The eighths: growth means the last eighth holds more than the first. */
    CHECK(cp_series_max_in(s, 0, 0, 1) == top);
    CHECK(cp_series_max_in(s, 0, 7 / 8.0, 1) > cp_series_max_in(s, 0, 0, 1 / 8.0));
    printf("series: %d buckets of %llu ns, peak %llu bytes\n", n, (unsigned long long)s->width,
           (unsigned long long)top);
    check_lean(s);
    proc_free(p);

    /* A time jump to 2^64 - 5 (a damaged or hostile trace): the buckets merge
     * until the width would overflow and the last bucket takes the rest;
     * this spun forever before (the report fuzzer's timeout). */
    cp_proc *q = proc_new("jump", 0);
    CHECK(q && q->series);
    cp_record a = rec(CP_REC_ALLOC, 1000);
    a.u.alloc.kind = CP_MK_DEVICE;
    a.u.alloc.ptr = 0x10000000ull;
    a.u.alloc.size = 1 << 20;
    CHECK(feed(q, &a) == 0);
    cp_record b = rec(CP_REC_ALLOC, UINT64_MAX - 5);
    b.u.alloc.kind = CP_MK_DEVICE;
    b.u.alloc.ptr = 0x20000000ull;
    b.u.alloc.size = 1 << 20;
    CHECK(feed(q, &b) == 0);
    CHECK(cp_series_n(q->series) <= CP_SER_N);
    proc_free(q);

    /* The "CUDA libraries" holder: what is allocated from inside cuBLAS is
     * counted at its ALLOC and taken off at its FREE (the live entry keeps
     * the answer), also when the same pointer comes back later from the
     * program's own code; plain allocations never count. */
    cp_proc *l = proc_new("libs", 0);
    CHECK(l && l->series);
    const char *lib = "/usr/lib/libcublas.so.12";
    CHECK(cp_stacks_module(&l->stacks, 0x7f0000000000ull, 0x100000, 0, lib, strlen(lib),
                           "", 0) == 0);
    uint64_t in_lib = 0x7f0000000100ull, in_prog = 0x400100ull;
    CHECK(cp_stacks_add(&l->stacks, 7, 1, &in_lib, 0, NULL) == 0);
    CHECK(cp_stacks_add(&l->stacks, 8, 1, &in_prog, 0, NULL) == 0);
    uint64_t lt = 1000;
    for (int pass = 0; pass < 3; pass++) {
        cp_record la = rec(CP_REC_ALLOC, lt += ms);
        la.u.alloc.kind = CP_MK_DEVICE;
        la.u.alloc.ptr = 0x30000000ull;
        la.u.alloc.size = 3 << 20;
        la.ev.stack = pass == 1 ? 8 : 7;       /* pass 1: the program's own */
        CHECK(feed(l, &la) == 0);
        cp_record pa = rec(CP_REC_ALLOC, lt += ms);
        pa.u.alloc.kind = CP_MK_DEVICE;
        pa.u.alloc.ptr = 0x40000000ull + (uint64_t)pass * 0x1000000;
        pa.u.alloc.size = 1 << 20;
        pa.ev.stack = 8;
        CHECK(feed(l, &pa) == 0);
        CHECK(l->series->now[0].lib_held == (pass == 1 ? 0 : 3u << 20));
        cp_record lf = rec(CP_REC_FREE, lt += ms);
        lf.u.free.kind = CP_MK_DEVICE;
        lf.u.free.ptr = la.u.alloc.ptr;
        CHECK(feed(l, &lf) == 0);
        CHECK(l->series->now[0].lib_held == 0);
        CHECK(l->mem[0].held_total == (uint64_t)(pass + 1) << 20);
    }
    proc_free(l);
    return g_fail ? 1 : 0;
}
