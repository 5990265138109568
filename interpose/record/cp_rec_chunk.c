/*
 * cp_rec_chunk.c - the recorder's buffer chunks: a small pool, and the
 * back-pressure that makes producers wait when the writer falls behind.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "cp_env.h"
#include "cp_rec_int.h"

/* Drained chunks kept for reuse, by size: the chunks of busy threads
 * (CP_CHUNK_BYTES, 4 MiB at most) and threads' first ones
 * (CP_CHUNK_FIRST_BYTES, 1 MiB at most: threads that come and go would
 * otherwise take each from malloc, which grows and trims the heap of the
 * new thread's arena every time). */
static const struct { size_t cap; unsigned max; } g_pool_class[] = {
    {CP_CHUNK_BYTES, 64}, {CP_CHUNK_FIRST_BYTES, 256},
};
#define CP_POOL_CLASSES (sizeof g_pool_class / sizeof *g_pool_class)

static pthread_mutex_t g_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_space_cv = PTHREAD_COND_INITIALIZER;
static struct cp_chunk *g_pool[CP_POOL_CLASSES];
static unsigned g_pool_n[CP_POOL_CLASSES];
static _Atomic uint64_t g_pending;   /* bytes in chunks the writer still holds */

/* The pool for chunks of cap bytes, or -1: none. */
static int cp_pool_of(size_t cap)
{
    for (unsigned i = 0; i < CP_POOL_CLASSES; i++)
        if (g_pool_class[i].cap == cap)
            return (int)i;
    return -1;
}

/* Take a chunk for `need` bytes and count it as pending.  wait != 0: when
 * the writer is more than CUPROBE_BACKLOG_MB behind, wait for it (up to a
 * second) rather than grow without bound; past that return NULL and the
 * record is dropped and counted (CP_REC_LOST).  The limit check and the
 * reservation happen under one lock so that waiters woken together cannot
 * all overshoot. */
struct cp_chunk *cp__chunk_get(size_t need, int wait, void (*kick)(void), const _Atomic int *on)
{
    size_t cap = need > CP_CHUNK_BYTES || need == CP_CHUNK_FIRST_BYTES ? need : CP_CHUNK_BYTES;
    uint64_t limit = cp_config()->backlog_bytes;
    struct cp_chunk *c = NULL;
    pthread_mutex_lock(&g_pool_mu);
    if (wait && atomic_load(&g_pending) + cap > limit) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += 1;
        pthread_mutex_unlock(&g_pool_mu);
        kick();
        pthread_mutex_lock(&g_pool_mu);
        while (atomic_load(&g_pending) + cap > limit && atomic_load(on))
            if (pthread_cond_timedwait(&g_space_cv, &g_pool_mu, &dl) == ETIMEDOUT)
                break;
        if (atomic_load(&g_pending) + cap > limit || !atomic_load(on)) {
            pthread_mutex_unlock(&g_pool_mu);
            return NULL;
        }
    }
    atomic_fetch_add_explicit(&g_pending, cap, memory_order_relaxed);
    int k = cp_pool_of(cap);
    if (k >= 0 && g_pool[k]) {
        c = g_pool[k];
        g_pool[k] = atomic_load_explicit(&c->next, memory_order_relaxed);
        g_pool_n[k]--;
    }
    pthread_mutex_unlock(&g_pool_mu);
    if (!c) {
        c = malloc(sizeof *c + cap);
        if (!c) {
            atomic_fetch_sub_explicit(&g_pending, cap, memory_order_relaxed);
            return NULL;
        }
        c->cap = cap;
    }
    atomic_init(&c->next, NULL);
    atomic_init(&c->used, 0);
    return c;
}

void cp__chunk_put(struct cp_chunk *c)
{
    pthread_mutex_lock(&g_pool_mu);
    atomic_fetch_sub_explicit(&g_pending, c->cap, memory_order_relaxed);
    int k = cp_pool_of(c->cap);
    if (k >= 0 && g_pool_n[k] < g_pool_class[k].max) {
        atomic_store_explicit(&c->next, g_pool[k], memory_order_relaxed);
        g_pool[k] = c;
        g_pool_n[k]++;
        c = NULL;
    }
    pthread_cond_broadcast(&g_space_cv);
    pthread_mutex_unlock(&g_pool_mu);
    free(c);
}

void *cp__chunk_fork_child(void)
{
    /* One list of every pooled chunk, kept reachable by the caller. */
    struct cp_chunk *old = NULL;
    for (unsigned i = CP_POOL_CLASSES; i-- > 0;) {
        struct cp_chunk *tail = g_pool[i];
        while (tail && atomic_load_explicit(&tail->next, memory_order_relaxed))
            tail = atomic_load_explicit(&tail->next, memory_order_relaxed);
        if (tail) {
            atomic_store_explicit(&tail->next, old, memory_order_relaxed);
            old = g_pool[i];
        }
    }
    pthread_mutex_init(&g_pool_mu, NULL);
    pthread_cond_init(&g_space_cv, NULL);
    for (unsigned i = 0; i < CP_POOL_CLASSES; i++) {
        g_pool[i] = NULL;
        g_pool_n[i] = 0;
    }
    atomic_store(&g_pending, 0);
    return old;
}
