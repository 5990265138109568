/*
 * cp_map.h - an open-addressing hash map from u64 keys to fixed-size
 * values, used by the report for everything that must stay bounded by the
 * live state of a run: live allocations, streams, contexts, per-site
 * aggregates.  Linear probing with backward-shift deletion (no tombstones),
 * so a map with heavy churn (alloc/free) never degrades.
 *
 * Values live inside the table: a pointer returned by cp_map_get/put is
 * valid only until the next put or del on the same map.
 */
#ifndef CP_MAP_H
#define CP_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct cp_map {
    uint64_t *keys;
    unsigned char *used;
    unsigned char *vals;
    size_t val_size;
    size_t cap;             /* power of two, or 0 before the first put */
    size_t n;
} cp_map;

/*! cp_map_init() : an empty map whose values take val_size bytes. */
void cp_map_init(cp_map *m, size_t val_size);

/*! cp_map_reserve() : room for n members without growing (a map whose
 *  size is known, such as one read back, then takes what it needs rather
 *  than the 64 slots a first put makes).  @return : 0 or -ENOMEM. */
int cp_map_reserve(cp_map *m, size_t n);

/*! cp_map_free() : release the table; the map is empty and reusable. */
void cp_map_free(cp_map *m);

/*! cp_map_slot() : key's home slot in a table of mask + 1 slots.
 *  Pointers are 16- or 256-byte aligned and stack ids are small counters:
 *  a multiplicative mix spreads both. */
static inline size_t cp_map_slot(uint64_t k, size_t mask)
{
    k ^= k >> 29;
    k *= 0xbf58476d1ce4e5b9ull;
    k ^= k >> 32;
    return (size_t)k & mask;
}

#define CP_MAP_NONE ((size_t)-1)

/*! cp_map_find() : @return : the slot holding key, or CP_MAP_NONE if absent.
 *  The slot stays key's until the next put or del on the same map. */
static inline size_t cp_map_find(const cp_map *m, uint64_t key)
{
    if (!m->cap)
        return CP_MAP_NONE;
    size_t mask = m->cap - 1;
    for (size_t i = cp_map_slot(key, mask);; i = (i + 1) & mask) {
        if (!m->used[i])
            return CP_MAP_NONE;
        if (m->keys[i] == key)
            return i;
    }
}

/*! cp_map_at() : @return : the value in slot i (from cp_map_find). */
static inline void *cp_map_at(const cp_map *m, size_t i)
{
    return m->vals + i * m->val_size;
}

/*! cp_map_get() : @return : the value of key, or NULL if absent.
 *  Inline: the report looks a key up for most records (live allocations,
 *  sites, threads), and the call cost as much as the probe. */
static inline void *cp_map_get(const cp_map *m, uint64_t key)
{
    size_t i = cp_map_find(m, key);
    return i == CP_MAP_NONE ? NULL : cp_map_at(m, i);
}

/*! cp__map_insert() : cp_map_put() when key is absent and the table must
 *  grow first (or has none yet): grow, then put.  @return : as
 *  cp_map_put(). */
void *cp__map_insert(cp_map *m, uint64_t key, int *created);

/*! cp_map_put() : find or insert key.  A new value is zero-filled and
 *  *created (if not NULL) is set to 1, else 0.
 *  @return : the value, or NULL when out of memory.  Inline, and one probe
 *  (the report puts a new live allocation for every ALLOC): the key's slot,
 *  or the free slot that ends its run, taken when one more member needs no
 *  growth; only growing is not inline, and it happens at the same count as
 *  ever, so the slots (and the order cp_map_next() visits) do not change. */
static inline void *cp_map_put(cp_map *m, uint64_t key, int *created)
{
    if (m->cap) {
        size_t mask = m->cap - 1;
        for (size_t i = cp_map_slot(key, mask);; i = (i + 1) & mask) {
            if (!m->used[i]) {
                /* Load factor 1/2: probes stay short even for
                 * clustered pointers; past it cp__map_insert() grows. */
                if ((m->n + 1) * 2 > m->cap)
                    break;
                m->used[i] = 1;
                m->keys[i] = key;
                m->n++;
                void *v = cp_map_at(m, i);
                memset(v, 0, m->val_size);
                if (created)
                    *created = 1;
                return v;
            }
            if (m->keys[i] == key) {
                if (created)
                    *created = 0;
                return cp_map_at(m, i);
            }
        }
    }
    return cp__map_insert(m, key, created);
}

/*! cp_map_del() : remove key, copying its value to out (if not NULL).
 *  @return : 0, or -ENOENT when absent. */
int cp_map_del(cp_map *m, uint64_t key, void *out);

/*! cp_map_del_at() : remove the member in slot i, as found by cp_map_find()
 *  with no put or del on m since: a caller that read the value first
 *  removes it without a second probe. */
void cp_map_del_at(cp_map *m, size_t i);

/*! cp_map_next() : iterate: start with *it = 0; each call returns the next
 *  value (and its key in *key) or NULL at the end.  Do not put or del while
 *  iterating. */
void *cp_map_next(const cp_map *m, size_t *it, uint64_t *key);

#endif /* CP_MAP_H */
