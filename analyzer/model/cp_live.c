/*
 * cp_live.c - a process's live allocations (see cp_live.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cp_live.h"

void cp_lives_free(cp_lives *m)
{
    free(m->e);
    free(m->slot);
    memset(m, 0, sizeof *m);
}

/* Entry k into the first free slot of its run (it is not there). */
static void cp_lives_place(cp_lives *m, size_t k)
{
    size_t mask = m->cap - 1;
    size_t i = cp_map_slot(m->e[k].ptr, mask);
    while (m->slot[i])
        i = (i + 1) & mask;
    m->slot[i] = (uint32_t)(k + 1);
}

/* A table twice the size, built from the entries: the old one is freed
 * first, so the two are never held together. */
static int cp_lives_grow(cp_lives *m)
{
    size_t cap = m->cap ? 2 * m->cap : 64;
    if (cap > (size_t)UINT32_MAX)
        return -ENOMEM;     /* entry numbers are 32 bits */
    free(m->slot);
    m->slot = calloc(cap, sizeof *m->slot);
    m->cap = m->slot ? cap : 0;
    if (!m->slot) {
        m->n = 0;           /* no table, no entries: an empty set */
        return -ENOMEM;
    }
    for (size_t k = 0; k < m->n; k++)
        cp_lives_place(m, k);
    return 0;
}

cp_live *cp_lives_put(cp_lives *m, uint64_t ptr, int *created)
{
    size_t i = cp_lives_find(m, ptr);
    if (i != CP_LIVES_NONE) {
        if (created)
            *created = 0;
        return cp_lives_at(m, i);
    }
    /* At most half full: probe runs stay short for clustered addresses. */
    if ((m->n + 1) * 2 > m->cap && cp_lives_grow(m) != 0)
        return NULL;
    if (m->n == m->cap_e) {
        /* realloc moves large blocks by remapping them: no copy, and no
         * moment with the old and the new array both resident. */
        size_t c = m->cap_e ? 2 * m->cap_e : 64;
        cp_live *e = realloc(m->e, c * sizeof *e);
        if (!e)
            return NULL;
        m->e = e;
        m->cap_e = c;
    }
    cp_live *l = &m->e[m->n];
    memset(l, 0, sizeof *l);
    l->ptr = ptr;
    cp_lives_place(m, m->n++);
    if (created)
        *created = 1;
    return l;
}

void cp_lives_del_at(cp_lives *m, size_t i)
{
    size_t mask = m->cap - 1, k = m->slot[i] - 1;
    /* Backward shift: later members of the probe run move into the hole
     * when their home slot is not between the hole and them. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->slot[j]; j = (j + 1) & mask) {
        size_t home = cp_map_slot(m->e[m->slot[j] - 1].ptr, mask);
        int between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (between)
            continue;
        m->slot[hole] = m->slot[j];
        hole = j;
    }
    m->slot[hole] = 0;
    /* The last entry takes the freed place; its slot (still naming it
     * there, where its bytes are unchanged) follows it. */
    size_t last = --m->n;
    if (k != last) {
        m->e[k] = m->e[last];
        m->slot[cp_lives_find(m, m->e[k].ptr)] = (uint32_t)(k + 1);
    }
}

int cp_lives_del(cp_lives *m, uint64_t ptr, cp_live *out)
{
    size_t i = cp_lives_find(m, ptr);
    if (i == CP_LIVES_NONE)
        return -ENOENT;
    if (out)
        *out = *cp_lives_at(m, i);
    cp_lives_del_at(m, i);
    return 0;
}
