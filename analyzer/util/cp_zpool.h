/*
 * cp_zpool.h - zeroed blocks of one size whose pages cost memory only where
 * they are written.  For tables sized for the worst case of which a block's
 * user touches a corner: a process's tables of 64 possible devices, of which
 * it used one, kept for each of thousands of processes.  calloc() zeroes
 * (and so faults in) every page of every block; a block here is carved from
 * a large anonymous mapping, whose pages the kernel zeroes when first
 * touched.  A block given back is kept, and zeroed when it is taken again.
 * Thread-safe.
 *
 * Under AddressSanitizer the blocks are calloc'd, so that it still checks
 * every access to them.
 */
#ifndef CP_ZPOOL_H
#define CP_ZPOOL_H

#include <pthread.h>
#include <stddef.h>

typedef struct cp_zpool {
    size_t size;                /* bytes of a block, as asked */
    pthread_mutex_t lock;
    size_t stride;              /* size rounded up to whole pages, 0 before the first get */
    char *cur;                  /* the rest of the newest mapping */
    size_t left;                /* bytes of it */
    void **free;                /* blocks given back (zeroed when taken again) */
    size_t n_free, cap_free;
} cp_zpool;

#define CP_ZPOOL_INIT(bytes) { .size = (bytes), .lock = PTHREAD_MUTEX_INITIALIZER }

/*! cp_zpool_get() : a zeroed block of z->size bytes, page-aligned.
 *  @return : it, or NULL when out of memory. */
void *cp_zpool_get(cp_zpool *z);

/*! cp_zpool_put() : give back block b from cp_zpool_get(z) (NULL is fine).
 *  The mappings stay, for the next blocks: a run's memory goes at exit. */
void cp_zpool_put(cp_zpool *z, void *b);

#endif /* CP_ZPOOL_H */
