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

#define CP_POOL_MAX 64u

static pthread_mutex_t g_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_space_cv = PTHREAD_COND_INITIALIZER;
static struct cp_chunk *g_pool;
static unsigned g_pool_n;
static _Atomic uint64_t g_pending;   /* bytes in chunks the writer still holds */

/* Take a chunk for `need` bytes and count it as pending.  wait != 0: when
 * the writer is more than CUPROBE_BACKLOG_MB behind, wait for it (up to a
 * second) rather than grow without bound; past that return NULL and the
 * record is dropped and counted (CP_REC_LOST).  The limit check and the
 * reservation happen under one lock so that waiters woken together cannot
 * all overshoot. */
struct cp_chunk *cp__chunk_get(size_t need, int wait, void (*kick)(void), const _Atomic int *on)
{
    size_t cap = need > CP_CHUNK_BYTES ? need : CP_CHUNK_BYTES;
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
    if (cap == CP_CHUNK_BYTES && g_pool) {
        c = g_pool;
        g_pool = atomic_load_explicit(&c->next, memory_order_relaxed);
        g_pool_n--;
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
    if (c->cap == CP_CHUNK_BYTES && g_pool_n < CP_POOL_MAX) {
        atomic_store_explicit(&c->next, g_pool, memory_order_relaxed);
        g_pool = c;
        g_pool_n++;
        c = NULL;
    }
    pthread_cond_broadcast(&g_space_cv);
    pthread_mutex_unlock(&g_pool_mu);
    free(c);
}

void *cp__chunk_fork_child(void)
{
    void *old = g_pool;
    pthread_mutex_init(&g_pool_mu, NULL);
    pthread_cond_init(&g_space_cv, NULL);
    g_pool = NULL;
    g_pool_n = 0;
    atomic_store(&g_pending, 0);
    return old;
}
