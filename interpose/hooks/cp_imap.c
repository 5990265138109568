/*
 * cp_imap.c - interval maps: one treap (a binary search tree kept balanced
 * by random priorities) per map, ordered by base, guarded by a small
 * reader-writer spinlock.  Live ranges never overlap, so "contains" is a
 * total order on them and a descent answers containment queries directly.
 *
 * Cost (every allocation inserts, every free removes, under
 * cudaMallocAsync once per tensor): glibc's tsearch/tdelete took a malloc
 * and a free for their own node, a comparison through a function pointer
 * at every level and a pthread rwlock's two atomic sections; about 800
 * instructions for an insert and a remove (BENCHMARKS.md 1, issue 16).
 * Here nodes come from a per-map free list, comparisons are inline, and
 * a writer takes the lock with one atomic OR and drops it with a store.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cp_imap.h"
#include "cp_spin.h"

/* One cache line per node: a descent reads a node's base, size, kids and
 * priority, and 16-byte aligned 56-byte nodes from malloc straddled two
 * lines three times in four. */
typedef struct cp_tnode {
    _Alignas(64) cp_range r;
    struct cp_tnode *kid[2];    /* lower, higher bases; on the free list kid[0] links */
    uint32_t prio;
} cp_tnode;

/* One device's accounts in the DEV map: the bytes of its live ranges and
 * their highest value since the start (or the fork), for the companion's
 * segment watch.  The device's bit in cp_dev_mask is set while its bytes
 * are not 0 (the driver refuses allocations of 0 bytes). */
typedef struct cp_devacct {
    uint64_t bytes, peak;
} cp_devacct;

#define CP_IMAP_SPARE_MAX 4096  /* free nodes kept per map; more go to free() */
#define CP_LOCK_WRITER 1u
#define CP_LOCK_READER 2u

typedef struct cp_imap {
    _Alignas(64) atomic_uint lock;  /* CP_LOCK_WRITER bit | readers * CP_LOCK_READER */
    cp_tnode *root;                 /* under the lock */
    cp_tnode *spare;                /* under the lock (write) */
    unsigned n_spare;
    uint32_t seed;                  /* priorities (xorshift), under the lock (write) */
    /* Per device, under the lock (write): beside the lock word, whose line
     * every insert and remove takes anyway, so that device 0's accounts
     * cost no second line. */
    cp_devacct dev[64];
} cp_imap;

static cp_imap cp_maps[CP_IMAP_N];
static atomic_uint_fast64_t cp_dev_mask;

/* --- the lock: held for a tree descent, never across a call out ----------- */

static inline void cp_wlock(cp_imap *m)
{
    unsigned spins = 0;
    /* Take the writer bit first: readers arriving after it back off, so a
     * stream of readers cannot starve a writer. */
    while (atomic_fetch_or_explicit(&m->lock, CP_LOCK_WRITER, memory_order_acquire) &
           CP_LOCK_WRITER) {
        /* Another writer has it: wait for its store before trying again. */
        do {
            cp_spin_pause(&spins, 100);
        } while (atomic_load_explicit(&m->lock, memory_order_relaxed) & CP_LOCK_WRITER);
    }
    /* Then wait for the readers already inside to leave. */
    while (atomic_load_explicit(&m->lock, memory_order_acquire) != CP_LOCK_WRITER)
        cp_spin_pause(&spins, 100);
}

static inline void cp_wunlock(cp_imap *m)
{
    /* A store, not a read-modify-write (a locked instruction is ~5.5 ns
     * here, and every allocation and free takes this lock once): while the
     * writer bit is set the word is exactly CP_LOCK_WRITER.  Readers have
     * left (cp_wlock waited for them), a reader enters only by a CAS from
     * a word without the bit (cp_rlock), and another writer's fetch_or
     * leaves a word with the bit unchanged. */
    atomic_store_explicit(&m->lock, 0, memory_order_release);
}

static inline void cp_rlock(cp_imap *m)
{
    unsigned spins = 0;
    unsigned v = atomic_load_explicit(&m->lock, memory_order_relaxed);
    for (;;) {
        /* Never touch the word while a writer holds or waits for it (see
         * cp_wunlock): a CAS from a word without the writer bit. */
        if (v & CP_LOCK_WRITER) {
            cp_spin_pause(&spins, 100);
            v = atomic_load_explicit(&m->lock, memory_order_relaxed);
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(&m->lock, &v, v + CP_LOCK_READER,
                                                  memory_order_acquire, memory_order_relaxed))
            return;
    }
}

static inline void cp_runlock(cp_imap *m)
{
    atomic_fetch_sub_explicit(&m->lock, CP_LOCK_READER, memory_order_release);
}

/* --- the treap ------------------------------------------------------------- */

static inline uint64_t cp_end(const cp_range *r)
{
    return r->base + (r->size ? r->size : 1);
}

/* The tree is shared by every thread that allocates or frees (PyTorch's
 * forward pass allocates on the main thread, its backward pass frees on the
 * autograd thread), so each operation writes only the links it changes:
 * a store to a node, even of the value it held, takes that node's line
 * from the other threads' caches, and the recursive version of these
 * operations stored into every node on the path (about 11 of them for 300
 * live ranges).  Descents read; the split below the insertion point and
 * the join of a removed node's subtrees write, and both are O(1) long on
 * average in a treap. */

/* Store v into *link unless it is already there. */
static inline void cp_t_set(cp_tnode **link, cp_tnode *v)
{
    if (*link != v)
        *link = v;
}

/* Hang t at **link and move *link to t's kid on `side`: @return that kid
 * (the next node to place).  The split and the join below are made of
 * this step. */
static inline cp_tnode *cp_t_hang(cp_tnode ***link, cp_tnode *t, int side)
{
    cp_t_set(*link, t);
    *link = &t->kid[side];
    return t->kid[side];
}

/* Put n at *link (every node above has a priority at least n's, every node
 * of the subtree there a lower one): split that subtree around n's base
 * into n's two kids. */
static void cp_t_place(cp_tnode **link, cp_tnode *n)
{
    uint64_t key = n->r.base;
    cp_tnode *t = *link, **lo = &n->kid[0], **hi = &n->kid[1];
    while (t)
        t = t->r.base < key ? cp_t_hang(&lo, t, 1) : cp_t_hang(&hi, t, 0);
    cp_t_set(lo, NULL);
    cp_t_set(hi, NULL);
    *link = n;
}

/* Replace the node at *link by the join of its two subtrees. */
static cp_tnode *cp_t_cut(cp_tnode **link)
{
    cp_tnode *old = *link, *a = old->kid[0], *b = old->kid[1];
    while (a && b) {
        if (a->prio > b->prio)
            a = cp_t_hang(&link, a, 1);
        else
            b = cp_t_hang(&link, b, 0);
    }
    cp_t_set(link, a ? a : b);
    return old;
}

/* The link that holds the node containing addr, or the empty link where
 * the descent ended: a lookup reads it, a removal cuts there. */
static cp_tnode **cp_t_link_to(cp_tnode **link, uint64_t addr)
{
    for (cp_tnode *t; (t = *link) != NULL;) {
        if (addr < t->r.base)
            link = &t->kid[0];
        else if (addr >= cp_end(&t->r))
            link = &t->kid[1];
        else
            break;
    }
    return link;
}

/* --- nodes and the device mask (write lock held) ---------------------------- */

/* Account r's arrival in the DEV map.  @return 1 when it raised its
 * device's bytes to a new peak.  Inline, as cp_count_out: out of line the
 * two calls cost the pair 31 instructions (callgrind). */
static inline __attribute__((always_inline)) int cp_count_in(cp_imap *m, const cp_range *r)
{
    if ((unsigned)r->dev >= 64)
        return 0;
    cp_devacct *d = &m->dev[r->dev];
    uint64_t was = d->bytes, now = was + r->size;
    d->bytes = now;
    /* Only a device's first and last live bytes flip its bit: a locked
     * read-modify-write on every allocation would cost more than the rest
     * of the bookkeeping (the mask changes only under this map's lock). */
    if (was == 0)
        atomic_fetch_or(&cp_dev_mask, 1ull << r->dev);
    if (now <= d->peak)
        return 0;
    d->peak = now;
    return 1;
}

/* Account r's departure from the DEV map. */
static inline __attribute__((always_inline)) void cp_count_out(cp_imap *m, const cp_range *r)
{
    if ((unsigned)r->dev >= 64)
        return;
    cp_devacct *d = &m->dev[r->dev];
    if ((d->bytes -= r->size) == 0)
        atomic_fetch_and(&cp_dev_mask, ~(1ull << r->dev));
}

static cp_tnode *cp_node_get(cp_imap *m, const cp_range *r)
{
    cp_tnode *n = m->spare;
    if (n) {
        m->spare = n->kid[0];
        m->n_spare--;
    } else {
        n = aligned_alloc(_Alignof(cp_tnode), sizeof(*n));
        if (!n)
            return NULL;
    }
    n->r = *r;
    n->kid[0] = n->kid[1] = NULL;
    uint32_t x = m->seed ? m->seed : 0x9e3779b9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    m->seed = x;
    n->prio = x;
    return n;
}

static void cp_node_put(cp_imap *m, cp_tnode *n)
{
    if (m->n_spare >= CP_IMAP_SPARE_MAX) {
        free(n);
        return;
    }
    n->kid[0] = m->spare;
    m->spare = n;
    m->n_spare++;
}

/* --- the API ------------------------------------------------------------------ */

/* The bodies of cp_imap_insert and cp_imap_remove, inlined once for the DEV
 * map (dev = 1: device accounts) and once for the others: with `which` a
 * variable, its tests and the map's address were recomputed around the
 * accounts (callgrind, async pair with defaults: 1,499 shim instructions
 * that way, 1,479 with the copies, 1,486 before the byte accounts). */
static inline __attribute__((always_inline)) int cp_insert(cp_imap *m, int dev,
                                                           const cp_range *r)
{
    cp_wlock(m);
    cp_tnode *n = cp_node_get(m, r);
    if (!n) {
        cp_wunlock(m);
        return -ENOMEM;
    }
    /* One descent along n's search path finds both a stale range that
     * overlaps the new one (its free was never seen: dropped, and the
     * descent starts again) and where n goes: the first node of lower
     * priority, or the leaf. */
    uint64_t lo = r->base, hi = cp_end(r);
    for (;;) {
        cp_tnode **link = &m->root, **at = NULL, *t;
        while ((t = *link) != NULL) {
            if (!at && t->prio < n->prio)
                at = link;
            if (hi <= t->r.base)
                link = &t->kid[0];
            else if (cp_end(&t->r) <= lo)
                link = &t->kid[1];
            else
                break;
        }
        if (!t) {
            cp_t_place(at ? at : link, n);
            break;
        }
        cp_tnode *old = cp_t_cut(link);
        if (dev)
            cp_count_out(m, &old->r);
        cp_node_put(m, old);
    }
    int grew = dev ? cp_count_in(m, &n->r) : 0;
    cp_wunlock(m);
    return grew;
}

static inline __attribute__((always_inline)) int cp_remove(cp_imap *m, int dev, uint64_t base,
                                                           cp_range *out)
{
    cp_wlock(m);
    cp_tnode **link = cp_t_link_to(&m->root, base), *old = NULL;
    if (*link && (*link)->r.base == base)   /* a range starting there, not one inside */
        old = cp_t_cut(link);
    if (old) {
        if (dev)
            cp_count_out(m, &old->r);
        if (out)
            *out = old->r;
        cp_node_put(m, old);
    }
    cp_wunlock(m);
    return old ? 0 : -ENOENT;
}

int cp_imap_insert(int which, const cp_range *r)
{
    if (which == CP_IMAP_DEV)
        return cp_insert(&cp_maps[CP_IMAP_DEV], 1, r);
    int rc = cp_insert(&cp_maps[which], 0, r);
    /* A new physical allocation (HANDLE) is always growth: expandable
     * segments take them as they grow, not in a steady step. */
    return rc < 0 ? rc : which == CP_IMAP_HANDLE;
}

int cp_imap_remove(int which, uint64_t base, cp_range *out)
{
    if (which == CP_IMAP_DEV)
        return cp_remove(&cp_maps[CP_IMAP_DEV], 1, base, out);
    return cp_remove(&cp_maps[which], 0, base, out);
}

int cp_imap_find(int which, uint64_t addr, cp_range *out)
{
    cp_imap *m = &cp_maps[which];
    int rc = -ENOENT;
    cp_rlock(m);
    const cp_tnode *hit = *cp_t_link_to(&m->root, addr);
    if (hit) {
        *out = hit->r;
        rc = 0;
    }
    cp_runlock(m);
    return rc;
}

/* Order, heap and overlap checks of a subtree whose bases lie in [lo, hi):
 * @return its height, or -1 when broken. */
static int cp_t_check(const cp_tnode *t, uint64_t lo, uint64_t hi)
{
    if (!t)
        return 0;
    if (t->r.base < lo || cp_end(&t->r) > hi)
        return -1;
    for (int s = 0; s < 2; s++)
        if (t->kid[s] && t->kid[s]->prio > t->prio)
            return -1;
    int a = cp_t_check(t->kid[0], lo, t->r.base), b = cp_t_check(t->kid[1], cp_end(&t->r), hi);
    return a < 0 || b < 0 ? -1 : 1 + (a > b ? a : b);
}

int cp_imap__check(int which)
{
    cp_imap *m = &cp_maps[which];
    cp_rlock(m);
    int h = cp_t_check(m->root, 0, UINT64_MAX);
    cp_runlock(m);
    return h;
}

uint64_t cp_imap_dev_mask(void)
{
    return atomic_load_explicit(&cp_dev_mask, memory_order_relaxed);
}

void cp_imap_reset(void)
{
    /* After fork only the calling thread exists: no lock holder can be
     * waiting.  The nodes are leaked on purpose (the parent's tree pages
     * are shared copy-on-write; walking them to free costs more). */
    for (int i = 0; i < CP_IMAP_N; i++) {
        atomic_store(&cp_maps[i].lock, 0);
        cp_maps[i].root = NULL;
        cp_maps[i].spare = NULL;
        cp_maps[i].n_spare = 0;
        for (int d = 0; d < 64; d++)
            cp_maps[i].dev[d] = (cp_devacct){ 0 };
    }
    atomic_store(&cp_dev_mask, 0);
}
