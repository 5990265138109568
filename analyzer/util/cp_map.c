/*
 * cp_map.c - the report's u64 hash map (see cp_map.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cp_map.h"

void cp_map_init(cp_map *m, size_t val_size)
{
    memset(m, 0, sizeof *m);
    m->val_size = val_size;
}

void cp_map_free(cp_map *m)
{
    free(m->keys);
    free(m->used);
    free(m->vals);
    size_t vs = m->val_size;
    memset(m, 0, sizeof *m);
    m->val_size = vs;
}

/* The members into a table of ncap slots (a power of two above 2 n). */
static int cp_map_rehash(cp_map *m, size_t ncap)
{
    cp_map nm = { .val_size = m->val_size, .cap = ncap };
    nm.keys = malloc(ncap * sizeof *nm.keys);
    nm.used = calloc(ncap, 1);
    nm.vals = malloc(ncap * (m->val_size ? m->val_size : 1));
    if (!nm.keys || !nm.used || !nm.vals) {
        free(nm.keys);
        free(nm.used);
        free(nm.vals);
        return -ENOMEM;
    }
    size_t mask = ncap - 1;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t j = cp_map_slot(m->keys[i], mask);
        while (nm.used[j])
            j = (j + 1) & mask;
        nm.used[j] = 1;
        nm.keys[j] = m->keys[i];
        memcpy(nm.vals + j * m->val_size, m->vals + i * m->val_size, m->val_size);
    }
    nm.n = m->n;
    free(m->keys);
    free(m->used);
    free(m->vals);
    *m = nm;
    return 0;
}

static int cp_map_grow(cp_map *m)
{
    return cp_map_rehash(m, m->cap ? m->cap * 2 : 64);
}

int cp_map_reserve(cp_map *m, size_t n)
{
    size_t cap = 8;
    while (cap < 2 * n + 2 && cap < ((size_t)1 << 40))
        cap *= 2;
    return cap > m->cap ? cp_map_rehash(m, cap) : 0;
}

void *cp__map_insert(cp_map *m, uint64_t key, int *created)
{
    if (created)
        *created = 0;
    /* After growing there is room for one more member: cp_map_put() takes
     * the free slot that ends key's run, without coming back here. */
    if (cp_map_grow(m) < 0)
        return NULL;
    return cp_map_put(m, key, created);
}

int cp_map_del(cp_map *m, uint64_t key, void *out)
{
    size_t i = cp_map_find(m, key);
    if (i == CP_MAP_NONE)
        return -ENOENT;
    if (out)
        memcpy(out, m->vals + i * m->val_size, m->val_size);
    cp_map_del_at(m, i);
    return 0;
}

void cp_map_del_at(cp_map *m, size_t i)
{
    size_t mask = m->cap - 1;
    /* Backward shift: move later members of the probe run into the hole
     * when their home slot is not between the hole and them. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
        size_t home = cp_map_slot(m->keys[j], mask);
        int between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (between)
            continue;
        m->keys[hole] = m->keys[j];
        memcpy(m->vals + hole * m->val_size, m->vals + j * m->val_size, m->val_size);
        hole = j;
    }
    m->used[hole] = 0;
    m->n--;
}

void *cp_map_next(const cp_map *m, size_t *it, uint64_t *key)
{
    for (; *it < m->cap; (*it)++) {
        if (m->used[*it]) {
            size_t i = (*it)++;
            if (key)
                *key = m->keys[i];
            return m->vals + i * m->val_size;
        }
    }
    return NULL;
}
