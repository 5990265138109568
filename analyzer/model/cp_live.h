/*
 * cp_live.h - a process's live allocations, by address: the one part of the
 * model that grows with the trace's state (a program can hold millions of
 * allocations at once), so it is laid out for memory.  The entries sit in
 * one dense array (48 bytes each, the address among them), and a table of
 * 32-bit entry numbers, at most half full, finds them by address: 56 to 64
 * bytes per live allocation, with no moment at which two copies of either
 * are alive (the table is rebuilt from the entries when it grows, and the
 * array grows in place).  A removed entry's place takes the last one.
 *
 * Like cp_map, a pointer to an entry (or a slot number from cp_lives_find)
 * is valid only until the next put or del on the same set.
 */
#ifndef CP_LIVE_H
#define CP_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "cp_map.h"

/* A live allocation. */
typedef struct cp_live {
    uint64_t ptr;               /* the address (or VMM handle): the key */
    uint64_t size, ts, ctx, stack;
    uint8_t kind;               /* enum cp_mem_kind */
    uint8_t lib;                /* the timeline's: allocated from inside a CUDA
                                 * library (set at the ALLOC, read at the FREE) */
    int16_t dev;
    uint32_t seq;               /* memory-event index when allocated */
} cp_live;

typedef struct cp_lives {
    cp_live *e;                 /* e[0..n): the entries, in no particular order */
    uint32_t *slot;             /* cap slots: entry number + 1, 0 free */
    size_t n, cap_e, cap;       /* cap: a power of two, or 0 before the first put */
} cp_lives;

#define CP_LIVES_NONE ((size_t)-1)

/*! cp_lives_free() : release everything; the set is empty and reusable. */
void cp_lives_free(cp_lives *m);

/*! cp_lives_find() : @return : the slot of the entry of ptr, or
 *  CP_LIVES_NONE.  Inline: a FREE looks its allocation up. */
static inline size_t cp_lives_find(const cp_lives *m, uint64_t ptr)
{
    if (!m->cap)
        return CP_LIVES_NONE;
    size_t mask = m->cap - 1;
    for (size_t i = cp_map_slot(ptr, mask);; i = (i + 1) & mask) {
        uint32_t s = m->slot[i];
        if (!s)
            return CP_LIVES_NONE;
        if (m->e[s - 1].ptr == ptr)
            return i;
    }
}

/*! cp_lives_at() : @return : the entry in slot i (from cp_lives_find). */
static inline cp_live *cp_lives_at(const cp_lives *m, size_t i)
{
    return &m->e[m->slot[i] - 1];
}

/*! cp_lives_put() : the entry of ptr, made (zeroed but for ptr, *created
 *  set to 1) when absent.  @return : it, or NULL when out of memory. */
cp_live *cp_lives_put(cp_lives *m, uint64_t ptr, int *created);

/*! cp_lives_del_at() : remove the entry in slot i (from cp_lives_find with
 *  no put or del since). */
void cp_lives_del_at(cp_lives *m, size_t i);

/*! cp_lives_del() : remove the entry of ptr, copying it to out (if not
 *  NULL).  @return : 0, or -ENOENT. */
int cp_lives_del(cp_lives *m, uint64_t ptr, cp_live *out);

/*! cp_lives_next() : iterate: *it = 0 first; each call gives the next
 *  entry, NULL at the end.  No put or del while iterating. */
static inline cp_live *cp_lives_next(const cp_lives *m, size_t *it)
{
    return *it < m->n ? &m->e[(*it)++] : NULL;
}

#endif /* CP_LIVE_H */
