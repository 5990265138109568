// link: build/interpose/hooks/cp_imap.o build/interpose/hooks/cp_ipidx.o
/*
 * test_imap.c - cuprobe's interval maps (interpose/hooks/cp_imap.c): containment
 * lookups, exact removal, replacement of stale overlapping ranges, the
 * per-device mask that gates the launch check, and 4 threads at once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "cp_imap.h"
#include "cp_unit.h"

static cp_range R(uint64_t base, uint64_t size, int dev)
{
    cp_range r = { .base = base, .size = size, .dev = dev, .mclass = 1, .kind = 1 };
    return r;
}

static void *worker(void *arg)
{
    uint64_t base = 0x100000000ull * (1 + (uintptr_t)arg);
    for (int i = 0; i < 20000; i++) {
        cp_range r = R(base + (uint64_t)(i % 64) * 4096, 4096, (int)(uintptr_t)arg);
        cp_range got;
        CHECK(cp_imap_insert(CP_IMAP_DEV, &r) >= 0, "insert");
        CHECK(cp_imap_find(CP_IMAP_DEV, r.base + 100, &got) == 0 && got.base == r.base, "find own");
        CHECK(cp_imap_remove(CP_IMAP_DEV, r.base, NULL) == 0, "remove own");
    }
    return NULL;
}

/* Lookups only, against the writers: a reader backing off from a writer
 * while that writer unlocks must not lose its count (the word would wrap
 * and every later writer spin forever: this test then times out). */
static _Atomic int writers_left;
static void *reader(void *arg)
{
    (void)arg;
    cp_range got;
    while (writers_left > 0)
        (void)cp_imap_find(CP_IMAP_DEV, 0x100000000ull + 100, &got);
    return NULL;
}

/* Random inserts (some over stale ranges), removes and lookups against a
 * plain array holding the same live ranges: the tree must agree on every
 * answer, whatever shape the random priorities gave it. */
#define MODEL_N 512
static void test_against_model(void)
{
    static cp_range model[MODEL_N];
    int live = 0, bad = 0;
    uint64_t x = 88172645463325252ull;
    for (int step = 0; step < 200000; step++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t base = 0x7f0000000000ull + (x % 4096) * 0x1000, size = 0x1000 * (1 + (x >> 20) % 3);
        cp_range got;
        switch ((x >> 40) % 4) {
        case 0: {   /* insert: the model drops what it overlaps */
            cp_range r = R(base, size, (int)((x >> 50) % 4));
            int k = 0;
            for (int i = 0; i < live; i++)
                if (model[i].base + model[i].size <= base || base + size <= model[i].base)
                    model[k++] = model[i];
            live = k;
            if (live == MODEL_N || cp_imap_insert(CP_IMAP_HOST, &r) < 0)
                break;
            model[live++] = r;
            break;
        }
        case 1: {   /* remove by exact base */
            int at = -1;
            for (int i = 0; i < live; i++)
                if (model[i].base == base)
                    at = i;
            int rc = cp_imap_remove(CP_IMAP_HOST, base, &got);
            bad += (at >= 0) != (rc == 0) || (at >= 0 && got.size != model[at].size);
            if (at >= 0)
                model[at] = model[--live];
            break;
        }
        default: {  /* containment */
            uint64_t addr = base + (x >> 24) % 0x3000;
            int at = -1;
            for (int i = 0; i < live; i++)
                if (addr >= model[i].base && addr < model[i].base + model[i].size)
                    at = i;
            int rc = cp_imap_find(CP_IMAP_HOST, addr, &got);
            bad += (at >= 0) != (rc == 0) || (at >= 0 && got.base != model[at].base);
        }
        }
    }
    CHECK(bad == 0, "the tree agrees with the model");
    /* Balanced: a treap of n random priorities is about 2 ln n deep (~15
     * for the ~1,500 live ranges here); a broken rotation or split shows
     * as a far deeper tree or as -1. */
    int h = cp_imap__check(CP_IMAP_HOST);
    CHECK(h > 0 && h < 40, "treap invariants hold, height %d for %d ranges", h, live);
    /* Half of them removed (each a cut and a join), checked again. */
    for (int i = live - 1; i >= live / 2; i--)
        CHECK(cp_imap_remove(CP_IMAP_HOST, model[i].base, NULL) == 0, "model range removable");
    live /= 2;
    CHECK(cp_imap__check(CP_IMAP_HOST) > 0, "treap invariants hold after the removals");
    for (int i = 0; i < live; i++)
        CHECK(cp_imap_remove(CP_IMAP_HOST, model[i].base, NULL) == 0, "model range removable");
    CHECK(cp_imap_find(CP_IMAP_HOST, 0x7f0000001000ull, &(cp_range){0}) == -ENOENT, "empty");
}

/* The segment watch's signal: an insert says 1 only when its device's live
 * bytes in the map reach a new high (docs/framework.md, torch.segment).
 * Devices 40 and 41 (nothing else here uses them). */
static void test_peaks(void)
{
    cp_range a = R(0x900000000ull, 0x1000, 40), b = R(0x900100000ull, 0x3000, 40);
    CHECK(cp_imap_insert(CP_IMAP_DEV, &a) == 1, "first allocation: a peak");
    CHECK(cp_imap_insert(CP_IMAP_DEV, &b) == 1, "second allocation: a peak");
    CHECK(cp_imap_remove(CP_IMAP_DEV, b.base, NULL) == 0, "free b");
    cp_range c = R(0x900200000ull, 0x2000, 40);
    CHECK(cp_imap_insert(CP_IMAP_DEV, &c) == 0, "below the peak (0x3000 live, 0x4000 was)");
    cp_range d = R(0x900300000ull, 0x1000, 40);
    CHECK(cp_imap_insert(CP_IMAP_DEV, &d) == 0, "at the peak: not a new high");
    CHECK(cp_imap_remove(CP_IMAP_DEV, d.base, NULL) == 0, "free d");
    cp_range e = R(0x900300000ull, 0x1001, 40);
    CHECK(cp_imap_insert(CP_IMAP_DEV, &e) == 1, "one byte over the peak");
    cp_range other = R(0x900400000ull, 0x10, 41);
    CHECK(cp_imap_insert(CP_IMAP_DEV, &other) == 1, "another device has its own peak");
    /* A stale range's bytes leave when the range replacing it reaches the
     * tree (cp_imap__flush, as a lookup when many wait): f over c (0x2000;
     * the same base, so c goes to the tree first) counts 0x4001 + 0x2800
     * while pending, a peak; after the lookup f has replaced c (0x4801),
     * so g bringing back 0x6801 is no new high, one byte more is. */
    cp_range f = R(0x900200000ull, 0x2800, 40), got;
    CHECK(cp_imap_insert(CP_IMAP_DEV, &f) == 1, "over a stale range: a peak while pending");
    CHECK(cp_imap_find(CP_IMAP_DEV, 0x900200000ull, &got) == 0 && got.size == 0x2800, "f found");
    cp_imap__flush();
    cp_range g = R(0x900500000ull, 0x2000, 40), h = R(0x900600000ull, 1, 40);
    CHECK(cp_imap_insert(CP_IMAP_DEV, &g) == 0, "the replaced range's bytes left");
    CHECK(cp_imap_insert(CP_IMAP_DEV, &h) == 1, "one byte over the peak");
    /* Every new physical allocation (HANDLE) is growth. */
    cp_range p = R(0x11, 1, 40), q = R(0x12, 1, 40);
    p.aux = 0x100000, q.aux = 0x1000;
    CHECK(cp_imap_insert(CP_IMAP_HANDLE, &p) == 1, "handle: growth");
    CHECK(cp_imap_remove(CP_IMAP_HANDLE, p.base, NULL) == 0, "release p");
    CHECK(cp_imap_insert(CP_IMAP_HANDLE, &q) == 1, "handle: growth again");
    /* HOST memory never says so. */
    cp_range hm = R(0x7e0000000000ull, 0x1000, 40);
    CHECK(cp_imap_insert(CP_IMAP_HOST, &hm) == 0, "host memory: no peak");
    /* Cleaned up, so main's mask checks see only their own ranges. */
    CHECK(cp_imap_remove(CP_IMAP_HOST, hm.base, NULL) == 0, "free host");
    CHECK(cp_imap_remove(CP_IMAP_HANDLE, q.base, NULL) == 0, "release q");
    CHECK(cp_imap_remove(CP_IMAP_DEV, c.base, NULL) == 0, "free f (at c's base)");
    CHECK(cp_imap_remove(CP_IMAP_DEV, c.base, NULL) == -ENOENT, "c went with f's arrival");
    const cp_range *left[] = { &a, &e, &g, &h, &other };
    for (unsigned i = 0; i < 5; i++)
        CHECK(cp_imap_remove(CP_IMAP_DEV, left[i]->base, NULL) == 0, "free %u", i);
    CHECK(cp_imap_dev_mask() == 0, "nothing held after the peak test");
    /* A forked child starts counting afresh. */
    CHECK(cp_imap_insert(CP_IMAP_DEV, &d) == 0, "below the peak before the reset");
    cp_imap_reset();
    CHECK(cp_imap_insert(CP_IMAP_DEV, &d) == 1, "after the reset: a peak again");
    CHECK(cp_imap_remove(CP_IMAP_DEV, d.base, NULL) == 0, "free d");
}

/* The DEV map against a model of its documented behaviour, the pending
 * layer included: an allocation waits in arrival order (a log of
 * CP_PEND_LOG entries) and enters the tree, replacing the ranges it
 * overlaps, before a range of the same base or of base 0, or when the log
 * is full with more than CP_PEND_KEEP live (else the freed entries leave
 * the log).  A lookup takes a waiting range that starts at the address,
 * else the newest waiting range that holds it, else the tree's; in a log
 * of more than CP_PEND_SCAN entries, not indexed yet, with as few live,
 * the freed entries leave the log first (the index: cp_ipidx.h; off again
 * when entries move or none are left).  A free of a waiting range takes
 * it out there, and freed entries at the log's end leave it.  Random
 * inserts (dense ones overlap), frees (of live bases, and of unknown
 * ones), lookups, and forks; every answer, the device mask and the peak
 * signal must agree, and the index its invariants (cp_imap__check). */
#define PEND_LOG_MAX 4096
#define DMODEL_N 8192
/* The model's log size: the map's cap (cp_imap__pend_cap), set per test. */
static int PEND_LOG = 256, PEND_KEEP = 128;
static cp_range dtree[DMODEL_N], dlog[PEND_LOG_MAX];
static int dtree_n, dlog_n;
static int didx;    /* the map's index by address is on (cp_ipidx.h) */
static uint64_t dbytes[4], dpeak[4];

static void dm_count(const cp_range *r, int delta)
{
    if (r->dev >= 0 && r->dev < 4)
        dbytes[r->dev] += delta > 0 ? r->size : -r->size;
}

static void dm_apply(const cp_range *r)
{
    int k = 0;
    for (int i = 0; i < dtree_n; i++) {
        if (dtree[i].base + dtree[i].size <= r->base || r->base + r->size <= dtree[i].base)
            dtree[k++] = dtree[i];
        else
            dm_count(&dtree[i], -1);
    }
    dtree_n = k;
    dtree[dtree_n++] = *r;
}

static void dm_flush(void)
{
    for (int i = 0; i < dlog_n; i++)
        if (dlog[i].base)
            dm_apply(&dlog[i]);
    dlog_n = didx = 0;
}

static void dm_compact(void)
{
    int k = 0;
    for (int i = 0; i < dlog_n; i++)
        if (dlog[i].base)
            dlog[k++] = dlog[i];
    dlog_n = k;
    didx = 0;
}

static int dm_live(void)
{
    int n = 0;
    for (int i = 0; i < dlog_n; i++)
        n += dlog[i].base != 0;
    return n;
}

static int dm_insert(const cp_range *r)
{
    int dup = 0;
    for (int i = 0; i < dlog_n; i++)
        dup |= r->base && dlog[i].base == r->base;
    if (!r->base || dup)
        dm_flush();
    if (!r->base) {
        dm_apply(r);
    } else {
        if (dlog_n == PEND_LOG) {
            if (dm_live() > PEND_KEEP)
                dm_flush();
            else
                dm_compact();
        }
        dlog[dlog_n++] = *r;
    }
    dm_count(r, 1);
    if (r->dev < 0 || r->dev >= 4 || dbytes[r->dev] <= dpeak[r->dev])
        return 0;
    dpeak[r->dev] = dbytes[r->dev];
    return 1;
}

static int dm_remove(uint64_t base, cp_range *got)
{
    for (int i = 0; i < dlog_n; i++) {
        if (!base || dlog[i].base != base)      /* base 0: never pending (a freed entry's) */
            continue;
        *got = dlog[i];
        dm_count(got, -1);
        dlog[i].base = 0;
        while (dlog_n && !dlog[dlog_n - 1].base)
            dlog_n--;
        didx &= dlog_n != 0;
        return 0;
    }
    for (int i = 0; i < dtree_n; i++) {
        if (dtree[i].base != base)
            continue;
        *got = dtree[i];
        dm_count(got, -1);
        dtree[i] = dtree[--dtree_n];
        return 0;
    }
    return -ENOENT;
}

#define PEND_SCAN 8
static int dm_find(uint64_t addr, cp_range *got)
{
    /* A live pending range's base: answered without a flush. */
    for (int i = 0; addr && i < dlog_n; i++) {
        if (dlog[i].base == addr) {
            *got = dlog[i];
            return 0;
        }
    }
    /* A long log not indexed yet: few live, the freed entries leave it;
     * more, it is indexed (nothing moves). */
    if (dlog_n > PEND_SCAN && !didx) {
        if (dm_live() <= PEND_SCAN)
            dm_compact();
        else
            didx = 1;
    }
    /* Then the newest pending range that holds addr, else the tree's. */
    for (int i = dlog_n - 1; i >= 0; i--) {
        if (dlog[i].base && addr >= dlog[i].base && addr < dlog[i].base + dlog[i].size) {
            *got = dlog[i];
            return 0;
        }
    }
    for (int i = 0; i < dtree_n; i++) {
        if (addr >= dtree[i].base && addr < dtree[i].base + dtree[i].size) {
            *got = dtree[i];
            return 0;
        }
    }
    return -ENOENT;
}

static uint64_t dm_mask(void)
{
    uint64_t m = 0;
    for (int d = 0; d < 4; d++)
        m |= (uint64_t)(dbytes[d] != 0) << d;
    return m;
}

/* One operation on both: the DEV map and the model must agree. */
static int dm_same_remove(uint64_t base)
{
    cp_range got = { 0 }, want = { 0 };
    int rc = cp_imap_remove(CP_IMAP_DEV, base, &got), wrc = dm_remove(base, &want);
    return rc == wrc && got.base == want.base && got.size == want.size &&
           cp_imap_dev_mask() == dm_mask();
}

static int dm_same_insert(uint64_t base, uint64_t size, int dev)
{
    cp_range r = R(base, size, dev);
    return cp_imap_insert(CP_IMAP_DEV, &r) == dm_insert(&r) && cp_imap_dev_mask() == dm_mask();
}

/* The log's two ways to make room, each taken many times: long-lived
 * ranges at its start and temporaries each freed after the next is made
 * (the freed entries are compacted away); then more long-lived ones than
 * CP_PEND_KEEP (flushed into the tree).  Stale ranges among them (every
 * 50th temporary overlaps a long-lived one). */
static void dm_use_cap(unsigned cap)
{
    cp_imap_reset();
    cp_imap__pend_cap(cap);
    PEND_LOG = (int)cap;
    PEND_KEEP = (int)cap / 2;
    dtree_n = dlog_n = didx = 0;
    for (int d = 0; d < 4; d++)
        dbytes[d] = dpeak[d] = 0;
}

static void test_dev_room(unsigned cap)
{
    dm_use_cap(cap);
    int bad = 0;
    uint64_t st[CP_IMAP_ST_N];
    uint64_t lbase = 0x600000000000ull, tbase = 0x610000000000ull;
    for (int k = 0; k < 2; k++) {
        /* Fewer long-lived ranges than half the log (compacted), then more
         * (flushed); temporaries enough to fill the log eight times. */
        int nlong = k ? PEND_KEEP + PEND_KEEP / 2 + 8 : PEND_KEEP * 3 / 4, ntemp = 8 * PEND_LOG;
        uint64_t lstep = 0x10000, lk = (uint64_t)k * PEND_LOG_MAX * 2 * lstep;
        for (int i = 0; i < nlong; i++)
            bad += !dm_same_insert(lbase + lk + (uint64_t)i * lstep, 0x8000, i % 3);
        for (int i = 0; i < ntemp; i++) {
            uint64_t b = i % 50 == 49 ? lbase + lk + (uint64_t)(i % nlong) * lstep + 0x4000
                                      : tbase + (uint64_t)i * 0x10000;
            bad += !dm_same_insert(b, 0x1000, 1);
            if (i)
                bad += !dm_same_remove(i % 50 == 0 ? lbase + lk + (uint64_t)((i - 1) % nlong) * lstep + 0x4000
                                                   : tbase + (uint64_t)(i - 1) * 0x10000);
            if (i % 97 == 0)
                bad += cp_imap__check(CP_IMAP_DEV) < 0;
        }
        cp_imap_stats(st);
        if (k == 0)
            CHECK(st[CP_IMAP_ST_COMPACT] >= 7 && st[CP_IMAP_ST_FLUSH_FULL] == 0,
                  "cap %u: a log at most half live is compacted (%llu times), not flushed (%llu)",
                  cap, (unsigned long long)st[CP_IMAP_ST_COMPACT],
                  (unsigned long long)st[CP_IMAP_ST_FLUSH_FULL]);
        else
            CHECK(st[CP_IMAP_ST_FLUSH_FULL] >= 1,
                  "cap %u: a log more than half live is flushed (%llu times)", cap,
                  (unsigned long long)st[CP_IMAP_ST_FLUSH_FULL]);
        for (int i = 0; i < nlong; i++) {
            cp_range got = { 0 }, want = { 0 };
            uint64_t a = lbase + lk + (uint64_t)i * lstep + 0x100;
            int rc = cp_imap_find(CP_IMAP_DEV, a, &got), wrc = dm_find(a, &want);
            bad += rc != wrc || got.base != want.base;
        }
    }
    CHECK(bad == 0, "cap %u: compaction and flush agree with the model (%d misses)", cap, bad);
    CHECK(cp_imap__check(CP_IMAP_DEV) > 0, "invariants after the log's rounds");
    cp_imap_reset();
    dtree_n = dlog_n = didx = 0;
    for (int d = 0; d < 4; d++)
        dbytes[d] = dpeak[d] = 0;
}

/* A training step under a stream-ordered allocator: a forward pass makes
 * `live` tensors, the backward pass frees them newest first, over
 * long-lived parameters.  With the full log none of it reaches the tree. */
static void test_dev_steps(unsigned cap, int live, int want_tree)
{
    uint64_t st[CP_IMAP_ST_N];
    dm_use_cap(cap);
    for (int p = 0; p < 300; p++) {
        cp_range r = R(0x500000000000ull + (uint64_t)p * 0x100000, 0x80000, 0);
        cp_imap_insert(CP_IMAP_DEV, &r);
    }
    cp_imap__flush();   /* the parameters: in the tree before the steps */
    cp_imap_stats(st);
    uint64_t moved0 = st[CP_IMAP_ST_MOVED];
    for (int step = 0; step < 10; step++) {
        for (int i = 0; i < live; i++) {
            cp_range r = R(0x520000000000ull + (uint64_t)i * 0x10000, 0x8000, 0);
            cp_imap_insert(CP_IMAP_DEV, &r);
        }
        for (int i = live; i-- > 0;)
            cp_imap_remove(CP_IMAP_DEV, 0x520000000000ull + (uint64_t)i * 0x10000, NULL);
    }
    cp_imap_stats(st);
    int tree = st[CP_IMAP_ST_TREE_FREES] != 0 || st[CP_IMAP_ST_MOVED] != moved0;
    CHECK(tree == want_tree,
          "cap %u, %d live a step: %llu frees from the tree, %llu ranges moved (want %s)", cap,
          live, (unsigned long long)st[CP_IMAP_ST_TREE_FREES],
          (unsigned long long)(st[CP_IMAP_ST_MOVED] - moved0), want_tree ? "some" : "none");
    CHECK(cp_imap__check(CP_IMAP_DEV) > 0, "invariants after the steps");
    cp_imap_reset();
}

/* A copy or kernel argument inside a tensor, while the log is long (a training
 * step's pattern): with few of it live the lookup
 * compacts the log; with many it indexes the log by address.  Either way
 * nothing is sent to the tree, and every answer is the model's. */
static void test_dev_inside(int live)
{
    uint64_t st[CP_IMAP_ST_N];
    int bad = 0;
    const uint64_t b0 = 0x530000000000ull, step_sz = 0x10000;
    dm_use_cap(PEND_LOG_MAX);
    for (int step = 0; step < 50; step++) {
        /* Sizes of 8 classes, 0x100 to 0x8000 bytes, and now and then one
         * of 3 MB over the next 47 (newer: they win where they overlap). */
        for (int i = 0; i < live + 16; i++) {
            uint64_t sz = i == 20 && step % 5 == 4 ? 0x300000 : 0x100ull << (i % 8);
            bad += !dm_same_insert(b0 + (uint64_t)i * step_sz, sz, 0);
        }
        for (int i = 0; i < 16; i++)
            bad += !dm_same_remove(b0 + (uint64_t)i * step_sz);
        for (int i = 0; i < 3 * live; i++) {
            uint64_t a = b0 + (uint64_t)(i % (live + 18)) * step_sz + (uint64_t)(i * 0x1d3) % 0x9000;
            cp_range got = { 0 }, want = { 0 };
            int rc = cp_imap_find(CP_IMAP_DEV, a, &got), wrc = dm_find(a, &want);
            bad += rc != wrc || got.base != want.base || got.size != want.size;
        }
        bad += cp_imap__check(CP_IMAP_DEV) < 0;
        for (int i = live + 15; i >= 16; i--)
            bad += !dm_same_remove(b0 + (uint64_t)i * step_sz);
    }
    cp_imap_stats(st);
    CHECK(bad == 0, "%d live: lookups inside pending tensors as the model (%d wrong)", live, bad);
    CHECK(st[CP_IMAP_ST_FLUSH_FULL] + st[CP_IMAP_ST_FLUSH_OTHER] == 0 && st[CP_IMAP_ST_MOVED] == 0 &&
              (live > 8 ? st[CP_IMAP_ST_INDEX] >= 50 : st[CP_IMAP_ST_COMPACT] > 0),
          "%d live: lookups inside tensors %s, never flush (%llu flushes, %llu moved, %llu "
          "compactions, %llu indexed)", live, live > 8 ? "index the log" : "compact",
          (unsigned long long)(st[CP_IMAP_ST_FLUSH_FULL] + st[CP_IMAP_ST_FLUSH_OTHER]),
          (unsigned long long)st[CP_IMAP_ST_MOVED], (unsigned long long)st[CP_IMAP_ST_COMPACT],
          (unsigned long long)st[CP_IMAP_ST_INDEX]);
    cp_imap_reset();
    dtree_n = dlog_n = didx = 0;
}

static void test_dev_against_model(void)
{
    dm_use_cap(256);
    dtree_n = dlog_n = didx = 0;
    for (int d = 0; d < 4; d++)
        dbytes[d] = dpeak[d] = 0;
    int bad = 0, first_bad = -1, checks = 0;
    uint64_t x = 0x2545f4914f6cdd1dull, st[CP_IMAP_ST_N], tot[CP_IMAP_ST_N] = { 0 };
    for (int step = 0; step < 300000 && dtree_n < DMODEL_N - 1; step++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        /* Mostly sparse bases (distinct ranges, as a driver hands out), one
         * in 16 dense ones (overlaps: stale ranges replaced). */
        uint64_t base = (x >> 60) == 0 ? 0x7f0000000000ull + (x % 512) * 0x1000
                                       : 0x7e0000000000ull + (x % 65536) * 0x100000;
        uint64_t size = 0x1000 * (1 + (x >> 20) % 3);
        int dev = (int)((x >> 50) % 5) - 1;     /* -1: not counted */
        unsigned op = (unsigned)((x >> 32) % 1000);
        /* Phases of 20,000 steps: lookups every ~40 operations (the log
         * seldom fills), rare ones (it fills with freed entries between
         * live ones: compacted), none with frees from the tree only (it
         * fills with live ones: flushed). */
        int phase = step / 20000 % 3;
        if (phase && op >= 4 && op < 30)
            op = phase == 1 && op < 5 ? 4 : 30 + op % 470;
        cp_range got = { 0 }, want = { 0 };
        int rc, wrc, live = dm_live() + dtree_n;
        if (step % 50000 == 49999) {    /* a forked child */
            cp_imap_stats(st);
            for (int i = 0; i < CP_IMAP_ST_N; i++)
                tot[i] += st[i];
            cp_imap_reset();
            dtree_n = dlog_n = didx = 0;
            for (int d = 0; d < 4; d++)
                dbytes[d] = dpeak[d] = 0;
            continue;
        } else if (op < 2) {            /* base 0 */
            cp_range r = R(0, size, dev);
            rc = cp_imap_insert(CP_IMAP_DEV, &r), wrc = dm_insert(&r);
        } else if (op < 30) {           /* a lookup: mostly inside a live range */
            uint64_t addr = base + (x >> 24) % 0x3000;
            unsigned pick = (unsigned)(x >> 8);
            if (pick % 4 && dlog_n && pick % 8 < 4 && dlog[pick / 8 % (unsigned)dlog_n].base)
                addr = dlog[pick / 8 % (unsigned)dlog_n].base +
                       ((x >> 24) % 2 ? 0 : (x >> 25) % 0x1000);   /* half at its base */
            else if (pick % 4 && dtree_n)
                addr = dtree[pick / 8 % (unsigned)dtree_n].base + (x >> 24) % 0x1000;
            rc = cp_imap_find(CP_IMAP_DEV, addr, &got), wrc = dm_find(addr, &want);
        } else if (op < (live < 300 && (phase != 1 || live - dtree_n < 90) ? 550 : 300)) {
            cp_range r = R(base, size, dev);
            rc = cp_imap_insert(CP_IMAP_DEV, &r), wrc = dm_insert(&r);
        } else {                        /* a free: of a live range (newest ones more often), or unknown */
            uint64_t b = base;
            unsigned pick = (unsigned)(x >> 8);
            if ((x >> 40) % 8 && dlog_n && (phase == 1 ? pick % 8 : pick % 2) && phase != 2) {
                int span = dlog_n < (phase == 1 ? 8 : 64) ? dlog_n : phase == 1 ? 8 : 64;
                int i = dlog_n - 1 - (int)(pick / 8 % (unsigned)span);
                b = dlog[i].base ? dlog[i].base : b;
            } else if ((x >> 40) % 8 && dtree_n) {
                b = dtree[pick % dtree_n].base;
            }
            rc = cp_imap_remove(CP_IMAP_DEV, b, &got), wrc = dm_remove(b, &want);
        }
        int miss = rc != wrc || (rc == 0 && (got.base != want.base || got.size != want.size ||
                                             got.dev != want.dev)) ||
                   cp_imap_dev_mask() != dm_mask();
        if (step % 97 == 0) {
            miss |= cp_imap__check(CP_IMAP_DEV) < 0;
            checks++;
        }
        if (miss && first_bad < 0)
            first_bad = step;
        bad += miss;
    }
    CHECK(bad == 0, "the DEV map agrees with the model (%d misses, first at step %d)", bad,
          first_bad);
    CHECK(checks > 3000, "invariants checked %d times", checks);
    cp_imap_stats(st);
    for (int i = 0; i < CP_IMAP_ST_N; i++)
        tot[i] += st[i];
    CHECK(tot[CP_IMAP_ST_INDEX] > 100 && tot[CP_IMAP_ST_COMPACT] > 100 && tot[CP_IMAP_ST_FLUSH_FULL] > 10,
          "every path taken: %llu indexed, %llu compactions, %llu flushes when full",
          (unsigned long long)tot[CP_IMAP_ST_INDEX], (unsigned long long)tot[CP_IMAP_ST_COMPACT],
          (unsigned long long)tot[CP_IMAP_ST_FLUSH_FULL]);
    cp_imap_reset();
    dtree_n = dlog_n = didx = 0;
}

int main(void)
{
    test_peaks();
    test_against_model();
    test_dev_room(256);
    test_dev_room(PEND_LOG_MAX);
    test_dev_steps(PEND_LOG_MAX, 1000, 0);
    test_dev_steps(256, 1000, 1);
    test_dev_inside(4);
    test_dev_inside(300);
    test_dev_against_model();
    cp_imap__pend_cap(PEND_LOG_MAX);
    cp_range got;
    cp_range a = R(0x1000, 0x1000, 0), b = R(0x3000, 0x2000, 1);
    CHECK(cp_imap_insert(CP_IMAP_DEV, &a) >= 0, "insert a");
    CHECK(cp_imap_insert(CP_IMAP_DEV, &b) >= 0, "insert b");
    CHECK(cp_imap_find(CP_IMAP_DEV, 0x1000, &got) == 0 && got.base == 0x1000, "first byte");
    CHECK(cp_imap_find(CP_IMAP_DEV, 0x1fff, &got) == 0 && got.base == 0x1000, "last byte");
    CHECK(cp_imap_find(CP_IMAP_DEV, 0x2000, &got) == -ENOENT, "one past the end");
    CHECK(cp_imap_find(CP_IMAP_DEV, 0x4abc, &got) == 0 && got.dev == 1, "interior of b");
    CHECK(cp_imap_find(CP_IMAP_HOST, 0x1000, &got) == -ENOENT, "maps are separate");
    CHECK(cp_imap_dev_mask() == 3, "devices 0 and 1 hold memory");
    /* Only the exact base frees a range. */
    CHECK(cp_imap_remove(CP_IMAP_DEV, 0x3100, NULL) == -ENOENT, "interior is not a base");
    CHECK(cp_imap_remove(CP_IMAP_DEV, 0x3000, &got) == 0 && got.size == 0x2000, "remove b");
    CHECK(cp_imap_dev_mask() == 1, "device 1 no longer holds memory");
    /* A range whose free we never saw is replaced by a new one over it
     * (in DEV once the new one reaches the tree: a short pending log is
     * looked through, and the stale range still found behind it). */
    cp_range c = R(0x1800, 0x100, 2);
    CHECK(cp_imap_insert(CP_IMAP_DEV, &c) >= 0, "insert over a stale range");
    CHECK(cp_imap_find(CP_IMAP_DEV, 0x1000, &got) == 0 && got.base == 0x1000, "still pending");
    cp_imap__flush();
    CHECK(cp_imap_find(CP_IMAP_DEV, 0x1000, &got) == -ENOENT, "stale range dropped");
    CHECK(cp_imap_find(CP_IMAP_DEV, 0x1850, &got) == 0 && got.dev == 2, "new range found");
    CHECK(cp_imap_dev_mask() == 4, "mask follows the replacement");
    CHECK(cp_imap_remove(CP_IMAP_DEV, 0x1800, NULL) == 0, "remove c");
    CHECK(cp_imap_dev_mask() == 0, "nothing held");

    pthread_t t[4], rd[2];
    writers_left = 4;
    for (uintptr_t i = 0; i < 2; i++)
        pthread_create(&rd[i], NULL, reader, NULL);
    for (uintptr_t i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        writers_left--;
    }
    for (int i = 0; i < 2; i++)
        pthread_join(rd[i], NULL);
    CHECK(cp_imap_dev_mask() == 0, "all threads' ranges removed");
    printf("imap ok\n");
    return 0;
}
