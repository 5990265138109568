/*
 * cp_ipidx.c - the device map's pending ranges by address (cp_ipidx.h).
 *
 * Buckets chain their entries through two arrays beside the log (next and
 * previous, as position + 1, 0 for none), so a free unlinks its entry in
 * O(1) and an entry costs 4 bytes here.  Hash collisions only lengthen a
 * chain: a lookup tests every entry it meets for containment.
 */
#include <string.h>

#include "cp_ipidx.h"

#define CP_IPIDX_BITS 13            /* buckets: twice the entries at most */
#define CP_IPIDX_BUCKETS (1u << CP_IPIDX_BITS)
#define CP_IPIDX_CLASSES 64

typedef struct cp_ibucket {
    uint32_t gen;       /* the build it was filled in; another: empty */
    uint32_t head;      /* first entry + 1, or 0 */
} cp_ibucket;

static struct {
    int on;
    uint32_t gen;                       /* the current build, from 1 */
    uint64_t classes;                   /* bit k: cnt[k] != 0 */
    uint32_t cnt[CP_IPIDX_CLASSES];
    uint16_t next[CP_IPIDX_CAP], prev[CP_IPIDX_CAP];
    cp_ibucket bkt[CP_IPIDX_BUCKETS];
} g_ix;

/* The class: the least k with 2^k >= size (size 0 holds one byte, as in
 * cp_imap.c); at most 63, so that base >> k is defined (a live range
 * cannot span 2^63 bytes). */
static inline unsigned cp_ix_class(uint64_t size)
{
    unsigned k = size <= 1 ? 0 : (unsigned)(64 - __builtin_clzll(size - 1));
    return k < 63 ? k : 63;
}

static inline cp_ibucket *cp_ix_bucket(unsigned k, uint64_t key)
{
    uint64_t h = (key ^ ((uint64_t)k << 56)) * 0x9e3779b97f4a7c15ull;
    return &g_ix.bkt[h >> (64 - CP_IPIDX_BITS)];
}

int cp_ipidx_on(void)
{
    return g_ix.on;
}

void cp_ipidx_off(void)
{
    g_ix.on = 0;
}

void cp_ipidx_add(unsigned at, const cp_range *r)
{
    if (!g_ix.on)
        return;
    unsigned k = cp_ix_class(r->size);
    cp_ibucket *b = cp_ix_bucket(k, r->base >> k);
    if (b->gen != g_ix.gen)
        b->gen = g_ix.gen, b->head = 0;
    g_ix.prev[at] = 0;
    g_ix.next[at] = (uint16_t)b->head;
    if (b->head)
        g_ix.prev[b->head - 1] = (uint16_t)(at + 1);
    b->head = at + 1;
    if (!g_ix.cnt[k]++)
        g_ix.classes |= 1ull << k;
}

void cp_ipidx_del(unsigned at, const cp_range *r)
{
    if (!g_ix.on)
        return;
    unsigned k = cp_ix_class(r->size), p = g_ix.prev[at], n = g_ix.next[at];
    if (p)
        g_ix.next[p - 1] = (uint16_t)n;
    else
        cp_ix_bucket(k, r->base >> k)->head = n;
    if (n)
        g_ix.prev[n - 1] = (uint16_t)p;
    if (!--g_ix.cnt[k])
        g_ix.classes &= ~(1ull << k);
}

void cp_ipidx_build(const cp_range *log, unsigned n)
{
    /* Generation 0 is what a bucket never filled holds. */
    if (++g_ix.gen == 0) {
        memset(g_ix.bkt, 0, sizeof(g_ix.bkt));
        g_ix.gen = 1;
    }
    memset(g_ix.cnt, 0, sizeof(g_ix.cnt));
    g_ix.classes = 0;
    g_ix.on = 1;
    for (unsigned i = 0; i < n && i < CP_IPIDX_CAP; i++)
        if (log[i].base)
            cp_ipidx_add(i, &log[i]);
}

unsigned cp_ipidx_find(uint64_t addr, const cp_range *log)
{
    unsigned best = CP_IPIDX_NONE;
    for (uint64_t cl = g_ix.classes; cl; cl &= cl - 1) {
        unsigned k = (unsigned)__builtin_ctzll(cl);
        uint64_t key = addr >> k;
        /* Its bucket and the one before: a range of this class that holds
         * addr starts less than 2^k bytes below it. */
        for (int j = 0; j < 2 && (j == 0 || key); j++, key--) {
            const cp_ibucket *b = cp_ix_bucket(k, key);
            if (b->gen != g_ix.gen)
                continue;
            for (unsigned e = b->head; e; e = g_ix.next[e - 1]) {
                const cp_range *r = &log[e - 1];
                /* Unsigned: an address below the base wraps to a large
                 * offset.  The newest wins, as the tree's order would
                 * have it (a range whose free was missed, overlapped). */
                if (addr - r->base < (r->size ? r->size : 1) && (best == CP_IPIDX_NONE || e - 1 > best))
                    best = e - 1;
            }
        }
    }
    return best;
}

int cp_ipidx__check(const cp_range *log, unsigned n)
{
    if (!g_ix.on)
        return 0;
    uint32_t cnt[CP_IPIDX_CLASSES] = { 0 };
    uint8_t seen[CP_IPIDX_CAP] = { 0 };
    if (n > CP_IPIDX_CAP)
        return -1;
    /* Every chained entry once (a cycle meets one twice), live, in the
     * bucket of its own range, its successor linked back to it. */
    for (unsigned h = 0; h < CP_IPIDX_BUCKETS; h++) {
        const cp_ibucket *b = &g_ix.bkt[h];
        for (unsigned e = b->gen == g_ix.gen ? b->head : 0; e; e = g_ix.next[e - 1]) {
            if (e - 1 >= n || seen[e - 1] || !log[e - 1].base)
                return -1;
            const cp_range *r = &log[e - 1];
            unsigned k = cp_ix_class(r->size);
            if (cp_ix_bucket(k, r->base >> k) != b ||
                (g_ix.next[e - 1] && g_ix.prev[g_ix.next[e - 1] - 1] != e))
                return -1;
            seen[e - 1] = 1;
            cnt[k]++;
        }
    }
    /* ... and every live entry chained. */
    for (unsigned i = 0; i < n; i++)
        if (log[i].base && !seen[i])
            return -1;
    for (unsigned k = 0; k < CP_IPIDX_CLASSES; k++)
        if (cnt[k] != g_ix.cnt[k] || !!cnt[k] != !!(g_ix.classes & (1ull << k)))
            return -1;
    return 0;
}
