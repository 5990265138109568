/*
 * cp_imap.c - interval maps: one treap (a binary search tree kept balanced
 * by random priorities) per map, ordered by base, guarded by a small
 * reader-writer spinlock (cp_rwspin.h).  Live ranges never overlap, so
 * "contains" is a total order on them and a descent answers containment
 * queries directly.
 *
 * Cost (under cudaMallocAsync every tensor inserts and removes): nodes
 * come from a per-map free list, comparisons are inline, and a writer
 * takes the lock with one atomic OR and drops it with a store (glibc's
 * tsearch cost several times as much).  The
 * DEV map has a pending layer in front of its treap (below): a training
 * step's tensors are freed within the step, and never touch the tree.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cp_hot.h"
#include "cp_imap.h"
#include "cp_ipidx.h"
#include "cp_rwspin.h"

/* One cache line per node (a descent reads base, size, kids and priority;
 * 56-byte nodes from malloc straddled two lines three times in four). */
typedef struct cp_tnode {
    _Alignas(64) cp_range r;
    struct cp_tnode *kid[2];    /* lower, higher bases; on the free list kid[0] links */
    uint32_t prio;
} cp_tnode;

/* A device's accounts in the DEV map: live bytes and their high since the
 * start or fork (segment watch); its cp_dev_mask bit is set while not 0. */
typedef struct cp_devacct {
    uint64_t bytes, peak;
} cp_devacct;

#define CP_IMAP_SPARE_MAX 4096  /* free nodes kept per map; more go to free() */

typedef struct cp_imap {
    _Alignas(64) atomic_uint lock;  /* cp_rwspin.h; held for a descent, never across a call out */
    unsigned n_spare;
    cp_tnode *root;                 /* under the lock */
    cp_tnode *spare;                /* under the lock (write) */
    uint32_t seed;                  /* priorities (xorshift), under the lock (write) */
    /* The DEV map's pending layer, under the lock: entries of cp_plog in
     * use (live or freed), live ones (in cp_pslots), most in use. */
    unsigned n_log, n_live, pend_cap;
    /* Per device, under the lock (write): beside the lock word, whose line
     * every insert and remove takes anyway (device 0's: no second line). */
    cp_devacct dev[64];
    uint64_t stat[CP_IMAP_ST_N];    /* under the lock (write), off the fast paths' line */
} cp_imap;

/* The pending layer (DEV map only): allocations are appended to a log in
 * arrival order, their bases in an open-addressing hash table (linear
 * probing, at most half full, no tombstones); a free of a pending base
 * takes it out there.  The live entries enter the treap in order (flush),
 * each replacing the stale ranges it overlaps, when the log is full with
 * over half live.  A lookup takes a live base from the table; else the
 * newest pending range holding the address, from a short log looked
 * through or, in a log of over CP_PEND_SCAN, from the index by address
 * (cp_ipidx.h; with as few live the log is compacted instead); else the
 * tree's.  The difference: a pending range replaces nothing yet, so a
 * stale range (a missed free) it overlaps stays findable, outside it,
 * until a range that reaches the tree overlaps it.  Sized for a step:
 * GPT-2 small keeps hundreds of activations live from the forward pass to
 * the backward. */
#define CP_PEND_LOG 4096    /* log entries (cp_maps[DEV].pend_cap, the same) */
#define CP_PEND_SLOT_BITS 13
#define CP_PEND_SLOTS (1u << CP_PEND_SLOT_BITS)     /* hash slots, twice the log */
#define CP_PEND_SCAN 8      /* a lookup looks through a log this short */
_Static_assert(CP_PEND_LOG <= CP_IPIDX_CAP, "the index covers the log");

typedef struct cp_pslot {
    uint64_t base;          /* 0: empty */
    uint32_t at;            /* its entry in cp_plog */
} cp_pslot;

static _Alignas(64) cp_pslot cp_pslots[CP_PEND_SLOTS];
static _Alignas(64) cp_range cp_plog[CP_PEND_LOG];      /* base 0: freed */

static cp_imap cp_maps[CP_IMAP_N] = { [CP_IMAP_DEV] = { .pend_cap = CP_PEND_LOG } };
static atomic_uint_fast64_t cp_dev_mask;

/* --- the treap ------------------------------------------------------------- */

static inline uint64_t cp_end(const cp_range *r)
{
    return r->base + (r->size ? r->size : 1);
}

/* The tree is shared by the threads that allocate and free (PyTorch: main
 * and autograd), so an operation writes only the links it changes: a store,
 * even of the same value, takes the node's line from the others' caches.
 * The split and the join write O(1) on average. */

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
 * device's bytes to a new peak.  Inline, as cp_count_out: these run on every
 * allocation and free. */
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
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
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

/* --- entering the tree (write lock held) ---------------------------------- */

/* Enter node n in the tree.  One descent along n's search path finds both
 * a stale range that overlaps the new one (its free was never seen:
 * dropped, and the descent starts again) and where n goes: the first node
 * of lower priority, or the leaf.  dev: the DEV map (device accounts; n's
 * own arrival is the caller's to count). */
static inline __attribute__((always_inline)) void cp_t_insert(cp_imap *m, int dev, cp_tnode *n)
{
    uint64_t lo = n->r.base, hi = cp_end(&n->r);
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
            return;
        }
        cp_tnode *old = cp_t_cut(link);
        if (dev)
            cp_count_out(m, &old->r);
        cp_node_put(m, old);
    }
}

/* --- the pending layer (DEV map, write lock held) ---------------------------- */

static inline unsigned cp_p_home(uint64_t base)
{ return (unsigned)((base * 0x9e3779b97f4a7c15ull) >> (64 - CP_PEND_SLOT_BITS)); }

/* The slot holding base, or the empty slot where its probe ended. */
static inline unsigned cp_p_probe(uint64_t base)
{
    unsigned h = cp_p_home(base);
    while (cp_pslots[h].base && cp_pslots[h].base != base)
        h = (h + 1) & (CP_PEND_SLOTS - 1);
    return h;
}

/* Empty slot h: the later members of its run whose probe passes h move
 * back, so that every probe still reaches its base before an empty slot. */
CP_HOT static void cp_p_unslot(unsigned h)
{
    for (unsigned j = h;;) {
        j = (j + 1) & (CP_PEND_SLOTS - 1);
        if (!cp_pslots[j].base)
            break;
        unsigned home = cp_p_home(cp_pslots[j].base);
        if (((j - home) & (CP_PEND_SLOTS - 1)) >= ((j - h) & (CP_PEND_SLOTS - 1))) {
            cp_pslots[h] = cp_pslots[j];
            h = j;
        }
    }
    cp_pslots[h].base = 0;
}

/* Move the live entries into the tree, oldest first. */
static void cp_p_flush(cp_imap *m, int why)
{
    if (m->n_live) {
        m->stat[why]++;
        m->stat[CP_IMAP_ST_MOVED] += m->n_live;
    }
    for (unsigned i = 0; i < m->n_log; i++) {
        cp_range *r = &cp_plog[i];
        if (!r->base)
            continue;
        cp_p_unslot(cp_p_probe(r->base));
        cp_tnode *n = cp_node_get(m, r);
        if (n)
            cp_t_insert(m, 1, n);
        else
            cp_count_out(m, r);     /* not known any more: not counted */
    }
    m->n_log = m->n_live = 0;
    cp_ipidx_off();
}

/* Slide the live entries to the log's start (slots keep, indices follow). */
static void cp_p_compact(cp_imap *m)
{
    m->stat[CP_IMAP_ST_COMPACT]++;
    unsigned k = 0;
    for (unsigned i = 0; i < m->n_log; i++) {
        if (!cp_plog[i].base)
            continue;
        if (k != i) {
            cp_plog[k] = cp_plog[i];
            cp_pslots[cp_p_probe(cp_plog[k].base)].at = k;
        }
        k++;
    }
    m->n_log = k;
    cp_ipidx_off();     /* entries moved: rebuilt when a lookup needs it */
}

/* --- the API ------------------------------------------------------------------ */

/* Insert into a map without the pending layer (HOST, HANDLE).  DEV has its
 * own: with `which` a variable, the map's address would be recomputed
 * around the device accounts on every allocation. */
CP_HOT static int cp_insert(cp_imap *m, const cp_range *r)
{
    cp_rw_wlock(&m->lock);
    cp_tnode *n = cp_node_get(m, r);
    if (n)
        cp_t_insert(m, 0, n);
    cp_rw_wunlock(&m->lock);
    return n ? 0 : -ENOMEM;
}

/* Remove from the tree (write lock held). */
static inline __attribute__((always_inline)) int cp_remove(cp_imap *m, int dev, uint64_t base,
                                                           cp_range *out)
{
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
    return old ? 0 : -ENOENT;
}

/* DEV: into the pending layer, unless its base is 0 (an empty slot's) or
 * already pending (a free never seen: flushed first, so the new range
 * replaces it in the tree). */
CP_HOT static int cp_dev_insert(const cp_range *r)
{
    cp_imap *m = &cp_maps[CP_IMAP_DEV];
    cp_rw_wlock(&m->lock);
    unsigned h = cp_p_probe(r->base);
    if (!r->base || cp_pslots[h].base) {
        cp_p_flush(m, CP_IMAP_ST_FLUSH_OTHER);
        h = cp_p_probe(r->base);
    }
    if (!r->base) {
        cp_tnode *n = cp_node_get(m, r);
        if (!n) {
            cp_rw_wunlock(&m->lock);
            return -ENOMEM;
        }
        cp_t_insert(m, 1, n);
    } else {
        if (m->n_log >= m->pend_cap) {     /* room: over half live go to the tree */
            if (m->n_live > m->pend_cap / 2)
                cp_p_flush(m, CP_IMAP_ST_FLUSH_FULL);
            else
                cp_p_compact(m);
            h = cp_p_probe(r->base);
        }
        cp_plog[m->n_log] = *r;
        cp_pslots[h] = (cp_pslot){ .base = r->base, .at = m->n_log };
        cp_ipidx_add(m->n_log, r);
        m->n_log++;
        m->n_live++;
    }
    int grew = cp_count_in(m, r);
    cp_rw_wunlock(&m->lock);
    return grew;
}

CP_HOT static int cp_dev_remove(uint64_t base, cp_range *out)
{
    cp_imap *m = &cp_maps[CP_IMAP_DEV];
    int rc;
    cp_rw_wlock(&m->lock);
    unsigned h;
    if (m->n_live && cp_pslots[h = cp_p_probe(base)].base) {
        cp_range *r = &cp_plog[cp_pslots[h].at];
        cp_count_out(m, r);
        cp_ipidx_del(cp_pslots[h].at, r);
        if (out)
            *out = *r;
        r->base = 0;
        cp_p_unslot(h);
        m->n_live--;
        /* Freed entries at the log's end leave it (a LIFO pattern then
         * reuses them; the last live one gone empties it). */
        while (m->n_log && !cp_plog[m->n_log - 1].base)
            m->n_log--;
        if (!m->n_log)
            cp_ipidx_off();     /* nothing to index: cheaper off */
        rc = 0;
    } else {
        rc = cp_remove(m, 1, base, out);
        m->stat[CP_IMAP_ST_TREE_FREES] += rc == 0;
    }
    cp_rw_wunlock(&m->lock);
    return rc;
}

CP_HOT int cp_imap_insert(int which, const cp_range *r)
{
    if (which == CP_IMAP_DEV)
        return cp_dev_insert(r);
    int rc = cp_insert(&cp_maps[which], r);
    /* A new physical allocation (HANDLE) is always growth: expandable
     * segments take them as they grow, not in a steady step. */
    return rc < 0 ? rc : which == CP_IMAP_HANDLE;
}

CP_HOT int cp_imap_remove(int which, uint64_t base, cp_range *out)
{
    if (which == CP_IMAP_DEV)
        return cp_dev_remove(base, out);
    cp_imap *m = &cp_maps[which];
    cp_rw_wlock(&m->lock);
    int rc = cp_remove(m, 0, base, out);
    cp_rw_wunlock(&m->lock);
    return rc;
}

int cp_imap_find(int which, uint64_t addr, cp_range *out)
{
    cp_imap *m = &cp_maps[which];
    int rc = -ENOENT, w = 0;
    cp_rw_rlock(&m->lock);
    /* The pending layer changes only under the write lock: the read lock
     * keeps it steady.  Nothing moves for a lookup (a flush before one
     * would make an allocation followed by a memset into it pay for both
     * layers).  First the start of a pending range (a memset or copy into
     * a tensor just made: training steps do it many times). */
    unsigned h;
    if (m->n_live && addr && cp_pslots[h = cp_p_probe(addr)].base == addr) {
        *out = cp_plog[cp_pslots[h].at];
        cp_rw_runlock(&m->lock);
        return 0;
    }
    if (m->n_log > CP_PEND_SCAN && !cp_ipidx_on()) {
        /* A long log, as a writer: with few of it live compact it, else
         * index it by address (flushing it would send a step's live
         * tensors through the treap, and their frees with them). */
        cp_rw_runlock(&m->lock);
        cp_rw_wlock(&m->lock);
        w = 1;
        if (m->n_log > CP_PEND_SCAN && !cp_ipidx_on()) {     /* (again, as a writer) */
            if (m->n_live <= CP_PEND_SCAN) {
                cp_p_compact(m);
            } else {
                m->stat[CP_IMAP_ST_INDEX]++;
                cp_ipidx_build(cp_plog, m->n_log);
            }
        }
    }
    if (m->n_log > CP_PEND_SCAN) {      /* the index is on */
        unsigned at = cp_ipidx_find(addr, cp_plog);
        if (at != CP_IPIDX_NONE) {
            *out = cp_plog[at];
            rc = 0;
            goto out_unlock;
        }
    } else if (m->n_log) {
        for (unsigned i = m->n_log; i-- > 0;) {
            const cp_range *r = &cp_plog[i];
            if (r->base && addr >= r->base && addr < cp_end(r)) {
                *out = *r;
                rc = 0;
                goto out_unlock;
            }
        }
    }
    const cp_tnode *hit = *cp_t_link_to(&m->root, addr);
    if (hit) {
        *out = hit->r;
        rc = 0;
    }
out_unlock:
    if (w)
        cp_rw_wunlock(&m->lock);
    else
        cp_rw_runlock(&m->lock);
    return rc;
}

unsigned cp_imap__pend_cap(unsigned n)
{
    cp_imap *m = &cp_maps[CP_IMAP_DEV];
    cp_rw_wlock(&m->lock);
    unsigned was = m->pend_cap;
    cp_p_flush(m, CP_IMAP_ST_FLUSH_OTHER);  /* no entry past a new end */
    if (n)
        m->pend_cap = n < CP_PEND_LOG ? n : CP_PEND_LOG;
    cp_rw_wunlock(&m->lock);
    return was;
}

void cp_imap__flush(void) { (void)cp_imap__pend_cap(0); }

void cp_imap_stats(uint64_t out[CP_IMAP_ST_N])
{
    cp_imap *m = &cp_maps[CP_IMAP_DEV];
    cp_rw_rlock(&m->lock);
    memcpy(out, m->stat, sizeof(m->stat));
    cp_rw_runlock(&m->lock);
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

/* The pending layer's invariants: every live log entry in the slot its
 * probe reaches, no other slot used.  @return 0, or -1 when broken. */
static int cp_p_check(const cp_imap *m)
{
    unsigned live = 0, used = 0;
    if (m->n_live > m->n_log || m->n_log > m->pend_cap ||
        (m->n_log && !cp_plog[m->n_log - 1].base))
        return -1;
    for (unsigned i = 0; i < m->n_log; i++) {
        if (!cp_plog[i].base)
            continue;
        live++;
        unsigned h = cp_p_probe(cp_plog[i].base);
        if (cp_pslots[h].base != cp_plog[i].base || cp_pslots[h].at != i)
            return -1;
    }
    for (unsigned h = 0; h < CP_PEND_SLOTS; h++)
        used += cp_pslots[h].base != 0;
    return live == m->n_live && used == live ? cp_ipidx__check(cp_plog, m->n_log) : -1;
}

int cp_imap__check(int which)
{
    cp_imap *m = &cp_maps[which];
    cp_rw_rlock(&m->lock);
    int h = cp_t_check(m->root, 0, UINT64_MAX);
    if (which == CP_IMAP_DEV && cp_p_check(m) < 0)
        h = -1;
    cp_rw_runlock(&m->lock);
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
        cp_maps[i].root = cp_maps[i].spare = NULL;
        cp_maps[i].n_spare = cp_maps[i].n_log = cp_maps[i].n_live = 0;
        memset(cp_maps[i].dev, 0, sizeof(cp_maps[i].dev));
        memset(cp_maps[i].stat, 0, sizeof(cp_maps[i].stat));
    }
    memset(cp_pslots, 0, sizeof(cp_pslots));
    cp_ipidx_off();
    atomic_store(&cp_dev_mask, 0);
}
