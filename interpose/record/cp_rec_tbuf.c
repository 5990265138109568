/*
 * cp_rec_tbuf.c - the registry of per-thread record buffers: every buffer
 * ever made is on one push-only list, which the writer walks; a buffer
 * whose thread exited and whose records are all drained goes on a free list
 * and is handed to the next new thread.  Claiming one is O(1), whatever
 * number of buffers thread churn leaves awaiting their last drain.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cp_rec_int.h"

static _Atomic(struct cp_tbuf *) g_tbufs;
static pthread_mutex_t g_free_mu = PTHREAD_MUTEX_INITIALIZER;
static struct cp_tbuf *g_free;           /* under g_free_mu, via next_free */

struct cp_tbuf *cp__tbuf_list(void)
{
    return atomic_load_explicit(&g_tbufs, memory_order_acquire);
}

struct cp_tbuf *cp__tbuf_claim(struct cp_chunk *c, uint32_t tid)
{
    pthread_mutex_lock(&g_free_mu);
    struct cp_tbuf *t = g_free;
    if (t)
        g_free = t->next_free;
    pthread_mutex_unlock(&g_free_mu);
    int fresh = !t;
    if (fresh) {
        t = aligned_alloc(64, sizeof *t);
        if (!t)
            return NULL;
        memset(t, 0, sizeof *t);
    }
    atomic_store_explicit(&t->lock, 0, memory_order_relaxed);
    t->first = c;
    t->rd = 0;
    atomic_store_explicit(&t->last, c, memory_order_relaxed);
    t->open = NULL;
    t->gen = 0;
    t->tid = tid;
    t->next_free = NULL;
    /* Published by the release: the writer reads the chunk pointers after
     * an acquire load of the state (or of the list head, for a new one). */
    atomic_store_explicit(&t->state, CP_TB_ACTIVE, memory_order_release);
    if (fresh) {
        struct cp_tbuf *head = atomic_load(&g_tbufs);
        do {
            t->next = head;
        } while (!atomic_compare_exchange_weak_explicit(&g_tbufs, &head, t,
                                                        memory_order_release,
                                                        memory_order_relaxed));
    }
    return t;
}

void cp__tbuf_free(struct cp_tbuf *t)
{
    atomic_store_explicit(&t->state, CP_TB_FREE, memory_order_release);
    pthread_mutex_lock(&g_free_mu);
    t->next_free = g_free;
    g_free = t;
    pthread_mutex_unlock(&g_free_mu);
}

struct cp_tbuf *cp__tbuf_fork_child(void)
{
    struct cp_tbuf *old = atomic_load(&g_tbufs);
    atomic_store(&g_tbufs, NULL);
    pthread_mutex_init(&g_free_mu, NULL);
    g_free = NULL;
    return old;
}
