// link: build/interpose/hooks/cp_imap.o
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
    /* A stale range's bytes leave when a new range replaces it: c (0x2000)
     * replaced by f (0x2800) brings 0x4001 to 0x4801, a new high; g
     * replaces f and e at once (a + g live), h replaces g (a + h live). */
    cp_range f = R(0x900200000ull, 0x2800, 40);
    CHECK(cp_imap_insert(CP_IMAP_DEV, &f) == 1, "replacement: only the difference counts");
    cp_range g = R(0x900200000ull, 0x104000, 40);
    CHECK(cp_imap_insert(CP_IMAP_DEV, &g) == 1, "replacing two, growing");
    cp_range h = R(0x900200000ull, 0x100, 40);
    CHECK(cp_imap_insert(CP_IMAP_DEV, &h) == 0, "replacing by a smaller one: no peak");
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
    CHECK(cp_imap_remove(CP_IMAP_DEV, a.base, NULL) == 0, "free a");
    CHECK(cp_imap_remove(CP_IMAP_DEV, h.base, NULL) == 0, "free h");
    CHECK(cp_imap_remove(CP_IMAP_DEV, other.base, NULL) == 0, "free other");
    CHECK(cp_imap_dev_mask() == 0, "nothing held after the peak test");
    /* A forked child starts counting afresh. */
    CHECK(cp_imap_insert(CP_IMAP_DEV, &d) == 0, "below the peak before the reset");
    cp_imap_reset();
    CHECK(cp_imap_insert(CP_IMAP_DEV, &d) == 1, "after the reset: a peak again");
    CHECK(cp_imap_remove(CP_IMAP_DEV, d.base, NULL) == 0, "free d");
}

int main(void)
{
    test_peaks();
    test_against_model();
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
    /* A range whose free we never saw is replaced by a new one over it. */
    cp_range c = R(0x1800, 0x100, 2);
    CHECK(cp_imap_insert(CP_IMAP_DEV, &c) >= 0, "insert over a stale range");
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
