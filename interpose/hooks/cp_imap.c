/*
 * cp_imap.c - interval maps over glibc's tsearch (a red-black tree), one
 * rwlock each.  Live ranges never overlap, so "contains" is a total order
 * on them and tfind can answer containment queries directly.
 *
 * Cost (every allocation inserts, every free removes, under
 * cudaMallocAsync once per tensor): nodes come from a per-map free list
 * instead of malloc/free, and an insert is one tsearch (which finds a stale
 * overlapping range by itself) instead of a tfind and a tsearch.
 */
#include <errno.h>
#include <pthread.h>
#include <search.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cp_imap.h"

/* A node, or on the free list a link to the next free one. */
typedef union cp_node {
    cp_range r;
    union cp_node *next;
} cp_node;

#define CP_IMAP_SPARE_MAX 4096  /* free nodes kept per map; more go to free() */

typedef struct cp_imap {
    pthread_rwlock_t lock;
    void *root;
    cp_node *spare;             /* under lock (write) */
    unsigned n_spare;
} cp_imap;

static cp_imap cp_maps[CP_IMAP_N] = {
    { PTHREAD_RWLOCK_INITIALIZER, NULL, NULL, 0 },
    { PTHREAD_RWLOCK_INITIALIZER, NULL, NULL, 0 },
    { PTHREAD_RWLOCK_INITIALIZER, NULL, NULL, 0 },
};
static atomic_uint_fast64_t cp_dev_mask;
static unsigned cp_dev_live[64];    /* under cp_maps[CP_IMAP_DEV].lock */

static int cp_range_cmp(const void *a, const void *b)
{
    const cp_range *x = a, *y = b;
    uint64_t xe = x->base + (x->size ? x->size : 1);
    uint64_t ye = y->base + (y->size ? y->size : 1);
    if (xe <= y->base)
        return -1;
    if (ye <= x->base)
        return 1;
    return 0;   /* overlap: the same live range */
}

static void cp_count(int which, const cp_range *r, int delta)
{
    if (which != CP_IMAP_DEV || r->dev < 0 || r->dev >= 64)
        return;
    cp_dev_live[r->dev] += (unsigned)delta;
    /* Only a device's first and last live range flip its bit: a locked
     * read-modify-write on every allocation would cost more than the rest
     * of the bookkeeping (the mask changes only under this map's lock). */
    if (delta > 0 && cp_dev_live[r->dev] == 1)
        atomic_fetch_or(&cp_dev_mask, 1ull << r->dev);
    else if (delta < 0 && cp_dev_live[r->dev] == 0)
        atomic_fetch_and(&cp_dev_mask, ~(1ull << r->dev));
}

/* A node for r: from the free list (write lock held), else malloc. */
static cp_range *cp_node_get(cp_imap *m, const cp_range *r)
{
    cp_node *n = m->spare;
    if (n) {
        m->spare = n->next;
        m->n_spare--;
    } else {
        n = malloc(sizeof(*n));
        if (!n)
            return NULL;
    }
    n->r = *r;
    return &n->r;
}

/* Back to the free list (write lock held). */
static void cp_node_put(cp_imap *m, cp_range *r)
{
    cp_node *n = (cp_node *)r;
    if (m->n_spare >= CP_IMAP_SPARE_MAX) {
        free(n);
        return;
    }
    n->next = m->spare;
    m->spare = n;
    m->n_spare++;
}

int cp_imap_insert(int which, const cp_range *r)
{
    cp_imap *m = &cp_maps[which];
    pthread_rwlock_wrlock(&m->lock);
    cp_range *n = cp_node_get(m, r);
    if (!n) {
        pthread_rwlock_unlock(&m->lock);
        return -ENOMEM;
    }
    for (;;) {
        void *hit = tsearch(n, &m->root, cp_range_cmp);
        if (!hit) {
            cp_node_put(m, n);
            pthread_rwlock_unlock(&m->lock);
            return -ENOMEM;
        }
        cp_range *old = *(cp_range **)hit;
        if (old == n)
            break;
        /* A stale range overlapping the new one (its free was never
         * seen): drop it and insert again. */
        tdelete(old, &m->root, cp_range_cmp);
        cp_count(which, old, -1);
        cp_node_put(m, old);
    }
    cp_count(which, n, 1);
    pthread_rwlock_unlock(&m->lock);
    return 0;
}

int cp_imap_remove(int which, uint64_t base, cp_range *out)
{
    cp_imap *m = &cp_maps[which];
    cp_range key = { .base = base, .size = 1 };
    int rc = -ENOENT;
    pthread_rwlock_wrlock(&m->lock);
    void *hit = tfind(&key, &m->root, cp_range_cmp);
    if (hit) {
        cp_range *old = *(cp_range **)hit;
        if (old->base == base) {
            tdelete(old, &m->root, cp_range_cmp);
            cp_count(which, old, -1);
            if (out)
                *out = *old;
            cp_node_put(m, old);
            rc = 0;
        }
    }
    pthread_rwlock_unlock(&m->lock);
    return rc;
}

int cp_imap_find(int which, uint64_t addr, cp_range *out)
{
    cp_imap *m = &cp_maps[which];
    cp_range key = { .base = addr, .size = 1 };
    int rc = -ENOENT;
    pthread_rwlock_rdlock(&m->lock);
    void *hit = m->root ? tfind(&key, &m->root, cp_range_cmp) : NULL;
    if (hit) {
        *out = **(cp_range **)hit;
        rc = 0;
    }
    pthread_rwlock_unlock(&m->lock);
    return rc;
}

uint64_t cp_imap_dev_mask(void)
{
    return atomic_load_explicit(&cp_dev_mask, memory_order_relaxed);
}

void cp_imap_reset(void)
{
    /* After fork only the calling thread exists: no lock holder can be
     * waiting.  The nodes are leaked on purpose (tdestroy would walk freed
     * parent state just as well, but is not needed for correctness). */
    for (int i = 0; i < CP_IMAP_N; i++) {
        pthread_rwlock_init(&cp_maps[i].lock, NULL);
        cp_maps[i].root = NULL;
        cp_maps[i].spare = NULL;
        cp_maps[i].n_spare = 0;
    }
    for (int d = 0; d < 64; d++)
        cp_dev_live[d] = 0;
    atomic_store(&cp_dev_mask, 0);
}
