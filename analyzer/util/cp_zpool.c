/*
 * cp_zpool.c - zeroed blocks whose untouched pages cost nothing (see
 * cp_zpool.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cp_zpool.h"

#if defined(__SANITIZE_ADDRESS__)
#define CP_ZPOOL_CALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CP_ZPOOL_CALLOC 1
#endif
#endif

/* Bytes mapped at a time: a huge page where the kernel backs the mapping
 * with them, and room for many blocks. */
#define CP_ZPOOL_CHUNK (2u << 20)

#ifdef CP_ZPOOL_CALLOC

void *cp_zpool_get(cp_zpool *z)
{
    return calloc(1, z->size);
}

void cp_zpool_put(cp_zpool *z, void *b)
{
    (void)z;
    free(b);
}

#else

/* A block from the newest mapping, a new one mapped when it is used up
 * (its tail, shorter than a block, is left).  Under z->lock. */
static void *cp_zpool_carve(cp_zpool *z)
{
    if (!z->stride) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        z->stride = (z->size + page - 1) / page * page;
    }
    if (z->left < z->stride) {
        size_t len = z->stride > CP_ZPOOL_CHUNK ? z->stride : CP_ZPOOL_CHUNK;
        void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        z->cur = m;
        z->left = len;
    }
    void *b = z->cur;
    z->cur += z->stride;
    z->left -= z->stride;
    return b;
}

void *cp_zpool_get(cp_zpool *z)
{
    pthread_mutex_lock(&z->lock);
    void *b = z->n_free ? z->free[--z->n_free] : NULL;
    pthread_mutex_unlock(&z->lock);
    /* A block given back is zeroed when it is taken again, not when it is
     * given back: a run frees every process at its end, and most blocks
     * are never taken again. */
    if (b)
        return memset(b, 0, z->size);
    pthread_mutex_lock(&z->lock);
    b = cp_zpool_carve(z);
    pthread_mutex_unlock(&z->lock);
    return b;
}

void cp_zpool_put(cp_zpool *z, void *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&z->lock);
    if (z->n_free == z->cap_free) {
        size_t cap = z->cap_free ? 2 * z->cap_free : 64;
        void **f = realloc(z->free, cap * sizeof *f);
        if (!f) {
            /* Not kept for reuse: it stays mapped, unused, until exit. */
            pthread_mutex_unlock(&z->lock);
            return;
        }
        z->free = f;
        z->cap_free = cap;
    }
    z->free[z->n_free++] = b;
    pthread_mutex_unlock(&z->lock);
}

#endif
