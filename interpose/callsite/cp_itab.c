/*
 * cp_itab.c - intern tables (see cp_itab.h).
 *
 * Why entries are published by pointer and never changed (except their
 * epoch): readers run without any lock on every hooked call, so an entry must
 * be complete before a reader can see it.  The writer fills it, writes the
 * defining record, then stores the pointer with release order; a reader that
 * loads the pointer with acquire order sees a complete entry whose record is
 * already committed.
 *
 * Why an epoch instead of clearing: a new trace file (a forked child) must
 * see every id defined again, but threads may be reading the table right
 * then.  Each entry remembers the epoch in which its record was last written;
 * an entry from an older epoch is announced again (same id, same content) by
 * whoever meets it first, under the lock.
 */
#include "cp_itab.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "cp_rec.h"

struct cp_itab_ent {
    uint64_t hash;
    uint64_t id;
    _Atomic uint64_t epoch;     /* epoch of the file that holds its record */
    uint64_t len;               /* 64-bit: keeps key[] 8-aligned for u64 keys */
    uint8_t key[];
};

#define CP_ARENA_CHUNK (1u << 20)
#define CP_ARENA_CAP (64u << 20)

static _Atomic uint32_t g_file_counter = 1;
static pthread_mutex_t g_arena_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *g_arena, *g_arena_end;
static size_t g_arena_total;

/* The current file epoch: the recorder's generation (a new file) combined
 * with our own counter, bumped by the new-file callback and at fork, so that
 * a forked child re-announces even before its first record switches files. */
uint64_t cp_itab_epoch(void)
{
    return ((uint64_t)cp_rec_generation() << 32) |
           atomic_load_explicit(&g_file_counter, memory_order_acquire);
}

void cp_itab_new_file(void)
{
    atomic_fetch_add_explicit(&g_file_counter, 1, memory_order_acq_rel);
}

void cp_itab_atfork_child(struct cp_itab *t)
{
    pthread_mutex_init(&t->lock, NULL);
    pthread_mutex_init(&g_arena_lock, NULL);
    cp_itab_new_file();
}

uint64_t cp_itab_hash(const void *key, size_t len)
{
    /* A word-at-a-time multiply/rotate mix: stacks are arrays of u64, so this
     * is one multiply per frame; quality only has to beat linear probing. */
    const uint8_t *p = key;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (len * 0xff51afd7ed558ccdull);
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xc2b2ae3d27d4eb4full;
        h = (h << 31) | (h >> 33);
        p += 8;
        len -= 8;
    }
    if (len) {
        uint64_t w = 0;
        memcpy(&w, p, len);
        h = (h ^ w) * 0xc2b2ae3d27d4eb4full;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return h ? h : 1;
}

void *cp_itab_alloc(size_t n)
{
    void *r = NULL;
    n = (n + 7) & ~(size_t)7;
    if (n > CP_ARENA_CHUNK)
        return NULL;
    pthread_mutex_lock(&g_arena_lock);
    if ((size_t)(g_arena_end - g_arena) < n) {
        /* Whole chunks from mmap: the caches live until exit, so a bump
         * allocator that never frees is all we need, and mmap keeps us off
         * the host's malloc. */
        void *m;
        if (g_arena_total + CP_ARENA_CHUNK > CP_ARENA_CAP)
            goto out_unlock;
        m = mmap(NULL, CP_ARENA_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            goto out_unlock;
        g_arena_total += CP_ARENA_CHUNK;
        g_arena = m;
        g_arena_end = g_arena + CP_ARENA_CHUNK;
    }
    r = g_arena;
    g_arena += n;
out_unlock:
    pthread_mutex_unlock(&g_arena_lock);
    return r;
}

/* Linear probe for key.  @return : the entry, or NULL with *hole set to the
 * first empty slot (or -1 when the probe ran through the whole table). */
static struct cp_itab_ent *itab_find(_Atomic(struct cp_itab_ent *) *slots, unsigned log2,
                                     uint64_t h, const void *key, size_t len, long *hole)
{
    size_t mask = ((size_t)1 << log2) - 1;
    for (size_t i = 0; i <= mask; i++) {
        size_t idx = (h + i) & mask;
        struct cp_itab_ent *e = atomic_load_explicit(&slots[idx], memory_order_acquire);
        if (!e) {
            *hole = (long)idx;
            return NULL;
        }
        if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0)
            return e;
    }
    *hole = -1;
    return NULL;
}

/* Announce e under the lock.  @return : its id, 0 when the record failed. */
static uint64_t itab_announce_locked(struct cp_itab_ent *e, cp_itab_announce_fn announce,
                                     void *ctx)
{
    if (announce(ctx, e->id, e->key, e->len) != 0)
        return 0;
    /* Read the epoch after the record: if writing it started a new file, the
     * record is in that file, so that is the epoch it belongs to. */
    atomic_store_explicit(&e->epoch, cp_itab_epoch(), memory_order_release);
    return e->id;
}

uint64_t cp_itab_intern(struct cp_itab *t, const void *key, size_t len,
                        cp_itab_announce_fn announce, void *ctx)
{
    return cp_itab_intern_ref(t, key, len, announce, ctx, NULL);
}

uint64_t cp_itab_intern_ref(struct cp_itab *t, const void *key, size_t len,
                            cp_itab_announce_fn announce, void *ctx, const void **stored)
{
    uint64_t h = cp_itab_hash(key, len);
    _Atomic(struct cp_itab_ent *) *slots =
        (_Atomic(struct cp_itab_ent *) *)atomic_load_explicit(
            (_Atomic(void *) *)&t->slots, memory_order_acquire);
    struct cp_itab_ent *e = NULL;
    uint64_t id = 0;
    long hole = -1;

    if (len > UINT32_MAX)
        return 0;
    if (slots) {
        e = itab_find(slots, t->cap_log2, h, key, len, &hole);
        if (e && atomic_load_explicit(&e->epoch, memory_order_acquire) == cp_itab_epoch()) {
            if (stored)
                *stored = e->key;
            return e->id;
        }
    }

    pthread_mutex_lock(&t->lock);
    if (!t->slots) {
        size_t bytes = sizeof(*t->slots) << t->cap_log2;
        /* MAP_NORESERVE: only the pages that slots land in are touched. */
        void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            goto out_unlock;
        atomic_store_explicit((_Atomic(void *) *)&t->slots, m, memory_order_release);
    }
    slots = t->slots;
    /* Probe again under the lock: another thread may have added or
     * re-announced it since our lock-free look. */
    e = itab_find(slots, t->cap_log2, h, key, len, &hole);
    if (e) {
        id = e->id;
        if (atomic_load_explicit(&e->epoch, memory_order_acquire) != cp_itab_epoch())
            id = itab_announce_locked(e, announce, ctx);
        goto out_unlock;
    }
    if (hole < 0 || t->count >= (3u << t->cap_log2) / 4) {
        if (!t->full_logged) {
            t->full_logged = 1;
            cp_log(1, "%s table full (%u entries): new ones are not recorded", t->name, t->count);
        }
        goto out_unlock;
    }
    e = cp_itab_alloc(sizeof(*e) + len);
    if (!e)
        goto out_unlock;
    e->hash = h;
    e->id = t->next_id++;
    atomic_init(&e->epoch, 0);
    e->len = len;
    memcpy(e->key, key, len);
    id = itab_announce_locked(e, announce, ctx);
    /* Publish even when the record failed (epoch stays old): the id is
     * taken, and the next use retries the announcement. */
    atomic_store_explicit(&slots[hole], e, memory_order_release);
    t->count++;
out_unlock:
    pthread_mutex_unlock(&t->lock);
    if (stored)
        *stored = id ? e->key : NULL;
    return id;
}
