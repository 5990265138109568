/*
 * cp_decode_ring.c - the hand-off between the decoder thread and the
 * reader (see cp_decode_int.h): CP_RING_SLOTS batches, a free queue and a
 * full queue under one mutex.  One lock and unlock per batch (thousands of
 * records), so the lock never shows in a profile.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cp_decode_int.h"

struct cp_ring {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    cp_batch slot[CP_RING_SLOTS];
    cp_batch *free_q[CP_RING_SLOTS], *full_q[CP_RING_SLOTS];
    size_t n_free, full_head, n_full;
    int stop;
};

static void cp_arena_release(cp_batch *b)
{
    while (b->arena) {
        struct cp_arena_blk *n = b->arena->next;
        free(b->arena);
        b->arena = n;
    }
}

void *cp__arena_copy(cp_batch *b, const void *p, size_t n)
{
    size_t need = (n + 15) & ~(size_t)15;
    struct cp_arena_blk *a = b->arena;
    if (!a || a->cap - a->used < need) {
        size_t cap = need > 65536 ? need : 65536;
        a = malloc(sizeof *a + cap);
        if (!a)
            return NULL;
        a->cap = cap;
        a->used = 0;
        a->next = b->arena;
        b->arena = a;
    }
    void *dst = a->mem + a->used;
    a->used += need;
    if (n)
        memcpy(dst, p, n);
    return dst;
}

int cp__batch_keep_arrays(cp_batch *b, cp_record *r)
{
    switch (r->type) {
    case CP_REC_HEADER: {
        typeof(r->u.header) *h = &r->u.header;
        size_t n = (size_t)(h->argc + 2 * h->nenv);
        cp_str *a = cp__arena_copy(b, h->argv, n * sizeof *a);
        if (!a)
            return -1;
        h->argv = a;
        h->env_name = a + h->argc;
        h->env_value = a + h->argc + h->nenv;
        return 0;
    }
    case CP_REC_STACK: {
        typeof(r->u.stack) *st = &r->u.stack;
        size_t n = (size_t)(st->n_native + st->n_py);
        uint64_t *a = cp__arena_copy(b, st->ip, n * sizeof *a);
        if (!a)
            return -1;
        st->ip = a;
        st->pyframe = a + st->n_native;
        return 0;
    }
    case CP_REC_OOM: {
        cp_oom_proc *a = cp__arena_copy(b, r->u.oom.procs,
                                        (size_t)r->u.oom.n_procs * sizeof *a);
        if (!a)
            return -1;
        r->u.oom.procs = a;
        return 0;
    }
    default:
        return 0;
    }
}

cp_ring *cp__ring_new(void)
{
    /* Aligned: each batch has cache lines of its own (cp_decode_int.h). */
    cp_ring *q = aligned_alloc(_Alignof(cp_ring), sizeof *q);
    if (!q)
        return NULL;
    memset(q, 0, sizeof *q);
    if (pthread_mutex_init(&q->mu, NULL) != 0)
        goto fail_mutex;
    if (pthread_cond_init(&q->cv, NULL) != 0)
        goto fail_cond;
    for (size_t i = 0; i < CP_RING_SLOTS; i++)
        q->free_q[i] = &q->slot[i];
    q->n_free = CP_RING_SLOTS;
    return q;
fail_cond:
    pthread_mutex_destroy(&q->mu);
fail_mutex:
    free(q);
    return NULL;
}

/* Before a wait, when cp__ring_spin_waits() allows it: watch the count a
 * while (20,000 pauses: about one batch's decoding time) before sleeping
 * on the condition.  A thread that sleeps has to be woken with a futex
 * call for every batch, and in a VM those calls are dear whenever the
 * reader is the faster one.  The counts are written under the lock with
 * atomic stores, so they can be read here without it. */
#ifndef CP_RING_SPIN               /* EXTRA_CFLAGS=-DCP_RING_SPIN=N to try another */
#define CP_RING_SPIN 20000
#endif
static int g_ring_spin;

void cp__ring_spin_waits(int on)
{
    __atomic_store_n(&g_ring_spin, on, __ATOMIC_RELAXED);
}

static void cp_ring_spin(const size_t *n)
{
    if (!__atomic_load_n(&g_ring_spin, __ATOMIC_RELAXED))
        return;
    for (int i = 0; i < CP_RING_SPIN && !__atomic_load_n(n, __ATOMIC_ACQUIRE); i++) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ volatile("yield");
#endif
    }
}

cp_batch *cp__ring_take_free(cp_ring *q)
{
    cp_ring_spin(&q->n_free);
    pthread_mutex_lock(&q->mu);
    while (!q->n_free && !q->stop)
        pthread_cond_wait(&q->cv, &q->mu);
    cp_batch *b = NULL;
    if (!q->stop) {
        b = q->free_q[q->n_free - 1];
        __atomic_store_n(&q->n_free, q->n_free - 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&q->mu);
    if (b) {
        /* The reader is done with it: its arrays can go. */
        cp_arena_release(b);
        b->n = 0;
        b->n_noted = 0;
        b->n_slotted = 0;
        b->last = 0;
        b->raw = 0;
    }
    return b;
}

size_t cp__ring_put_full(cp_ring *q, cp_batch *b)
{
    pthread_mutex_lock(&q->mu);
    q->full_q[(q->full_head + q->n_full) % CP_RING_SLOTS] = b;
    size_t n = q->n_full + 1;
    __atomic_store_n(&q->n_full, n, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    return n;
}

cp_batch *cp__ring_take_full(cp_ring *q)
{
    cp_ring_spin(&q->n_full);
    pthread_mutex_lock(&q->mu);
    while (!q->n_full)
        pthread_cond_wait(&q->cv, &q->mu);
    cp_batch *b = q->full_q[q->full_head];
    q->full_head = (q->full_head + 1) % CP_RING_SLOTS;
    __atomic_store_n(&q->n_full, q->n_full - 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&q->mu);
    return b;
}

void cp__ring_put_free(cp_ring *q, cp_batch *b)
{
    pthread_mutex_lock(&q->mu);
    q->free_q[q->n_free] = b;
    __atomic_store_n(&q->n_free, q->n_free + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

void cp__ring_stop(cp_ring *q)
{
    pthread_mutex_lock(&q->mu);
    q->stop = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

void cp__ring_free(cp_ring *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < CP_RING_SLOTS; i++) {
        cp_arena_release(&q->slot[i]);
        free(q->slot[i].buf);
        free(q->slot[i].recs);
        free(q->slot[i].slotted);
        free(q->slot[i].noted);
    }
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q);
}
