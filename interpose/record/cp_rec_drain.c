/*
 * cp_rec_drain.c - the writer's side of the per-thread buffers: cut every
 * buffer at a time T and merge the records before T by timestamp.
 *
 * Why the cut gives a global time order: a definition (a REC record:
 * API name, stack, string, module, thread) is committed by its producer
 * with the clock read and the publication inside one critical section of
 * its buffer lock (cp_rec_commit).  The writer reads T first and then takes
 * each buffer's lock to snapshot the published end.  A definition missing
 * from the snapshot was committed after the writer's lock, hence after T
 * was read, so its ts >= T, and so has every event that carries its id
 * (cp_rec_commit_at places such an event after the latest definition).
 *
 * An event (an EV record) is published without the lock, by one release
 * store of its chunk's fill (the writer loads it with acquire): its time,
 * the call's end or a clock read before the store, may be < T when the
 * writer's snapshot came between the two, and the event reaches a later
 * drain.  Order is still kept: anything causally after it happened after
 * its publication, hence after this snapshot and after T (an event's time
 * is read after the call that depends on an earlier one, and an
 * allocation is published before its call returns its address), and the
 * later drain merges it first.  The writer clamps its delta to 0, so its
 * time reads as the previous record's (late by at most the gap between its
 * clock read and its store, or how long its thread was preempted there).
 *
 * The writer never waits for a buffer lock: with many more threads than
 * cores, a producer preempted inside a definition keeps its lock for whole
 * scheduling rounds, and a writer waiting for it lost seconds of trace to a
 * SIGKILL.  A buffer whose lock stays held is snapshotted without it (the
 * release-stored ends are exact, as in a signal handler); the one
 * definition in flight there is then a late record as above.
 */
#include <stdlib.h>
#include <string.h>

#include "cp_rec_int.h"
#include "cp_writer.h"

static struct cp_tbuf **g_heap;
static size_t g_heap_cap;

static inline uint64_t cp_rd_ts(const uint8_t *p)
{
    uint64_t ts;
    memcpy(&ts, p + 5, sizeof ts);
    return ts;
}

static inline uint32_t cp_rd_len(const uint8_t *p)
{
    uint32_t len;
    memcpy(&len, p + 1, sizeof len);
    return len;
}

/* Move t's cursor onto a record (crossing to later chunks) and load its ts.
 * @return : 1 when a record with min_ts <= ts < T is under the cursor. */
static int cp_cursor_settle(struct cp_tbuf *t, uint64_t T, uint64_t min_ts)
{
    for (;;) {
        size_t end = cp__chunk_end(t, t->cur);
        if (t->pos >= end) {
            if (t->cur == t->snap_last)
                return 0;
            t->cur = atomic_load_explicit(&t->cur->next, memory_order_acquire);
            t->pos = 0;
            if (!t->cur)
                return 0;
            continue;
        }
        const uint8_t *p = t->cur->data + t->pos;
        t->cur_ts = cp_rd_ts(p);
        if (t->cur_ts >= T)
            return 0;
        if (t->cur_ts >= min_ts)
            return 1;
        /* Left over from a file closed before this one started. */
        t->pos += CP_HDR_BYTES + cp_rd_len(p);
    }
}

static void cp_heap_down(size_t n, size_t i)
{
    struct cp_tbuf *x = g_heap[i];
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= n)
            break;
        if (l + 1 < n && g_heap[l + 1]->cur_ts < g_heap[l]->cur_ts)
            l++;
        if (g_heap[l]->cur_ts >= x->cur_ts)
            break;
        g_heap[i] = g_heap[l];
        i = l;
    }
    g_heap[i] = x;
}

/* Snapshot t's published end and start its cursor at the read position.
 * mode 0: without the lock (signal handler: its own thread may hold it;
 * acquire loads of the release-stored ends are still exact); 1: under the
 * lock if it can be had at once (events do not take it: it orders the
 * snapshot against definitions only).  @return : 1 done, 0 the lock was busy. */
static int cp_snapshot(struct cp_tbuf *t, int mode)
{
    /* Acquire loads under the lock too: the producer links chunks and
     * publishes events without it. */
    if (mode == 1 && !cp__tb_trylock(t))
        return 0;
    t->snap_last = atomic_load_explicit(&t->last, memory_order_acquire);
    t->snap_used = atomic_load_explicit(&t->snap_last->used, memory_order_acquire);
    if (mode == 1)
        cp__tb_unlock(t);
    t->cur = t->first;
    t->pos = t->rd;
    return 1;
}

/* After the merge: free fully read chunks, remember the read position,
 * retire buffers of exited threads.  The last chunk is never rewound to its
 * start once read: its producer writes it without a lock, so only the
 * producer may move its fill; it takes a new chunk when this one is full. */
static void cp_release_consumed(struct cp_tbuf *t)
{
    while (t->first != t->cur) {
        struct cp_chunk *c = t->first;
        t->first = atomic_load_explicit(&c->next, memory_order_acquire);
        cp__chunk_put(c);
    }
    t->rd = t->pos;
    struct cp_chunk *c = t->first;
    if (c != t->snap_last || t->rd != t->snap_used)
        return;
    if (atomic_load_explicit(&t->state, memory_order_acquire) != CP_TB_DEAD)
        return;
    /* No producer any more: everything it wrote is consumed. */
    if (atomic_load_explicit(&c->used, memory_order_acquire) == t->rd &&
        !atomic_load_explicit(&c->next, memory_order_acquire)) {
        t->first = NULL;
        atomic_store_explicit(&t->last, NULL, memory_order_relaxed);
        cp__chunk_put(c);
        cp__tbuf_free(t);
    }
}

static int cp_heap_reserve(int emergency)
{
    size_t n = 0;
    for (struct cp_tbuf *t = cp__tbuf_list(); t; t = t->next)
        n++;
    if (n <= g_heap_cap)
        return 0;
    if (emergency)
        return -1;
    struct cp_tbuf **h = realloc(g_heap, (n + 16) * sizeof *h);
    if (!h)
        return -1;
    g_heap = h;
    g_heap_cap = n + 16;
    return 0;
}

/* Signal context with more buffers than the heap holds (no allocation
 * allowed there): pick the oldest record by a linear scan instead. */
static uint64_t cp_merge_linear(uint64_t T, uint64_t min_ts, cp__emit_fn emit, void *ctx)
{
    uint64_t count = 0;
    for (;;) {
        struct cp_tbuf *best = NULL;
        for (struct cp_tbuf *t = cp__tbuf_list(); t; t = t->next)
            if (t->in_merge && (!best || t->cur_ts < best->cur_ts))
                best = t;
        if (!best)
            return count;
        const uint8_t *p = best->cur->data + best->pos;
        uint32_t len = cp_rd_len(p);
        emit(ctx, best->tid, p[0], best->cur_ts, p + CP_HDR_BYTES, len);
        count++;
        best->pos += CP_HDR_BYTES + len;
        best->in_merge = cp_cursor_settle(best, T, min_ts);
    }
}

static uint64_t cp_merge_heap(size_t n, uint64_t T, uint64_t min_ts, cp__emit_fn emit,
                              void *ctx)
{
    for (size_t i = n / 2; i-- > 0;)
        cp_heap_down(n, i);
    uint64_t count = 0;
    while (n) {
        struct cp_tbuf *t = g_heap[0];
        const uint8_t *p = t->cur->data + t->pos;
        uint32_t len = cp_rd_len(p);
        emit(ctx, t->tid, p[0], t->cur_ts, p + CP_HDR_BYTES, len);
        count++;
        t->pos += CP_HDR_BYTES + len;
        if (!cp_cursor_settle(t, T, min_ts))
            g_heap[0] = g_heap[--n];
        if (n)
            cp_heap_down(n, 0);
    }
    return count;
}

uint64_t cp__rec_drain(uint64_t T, uint64_t min_ts, int emergency,
                       cp__emit_fn emit, void *ctx)
{
    int heap_ok = cp_heap_reserve(emergency) == 0;
    size_t n = 0;
    int busy = 0;
    for (struct cp_tbuf *t = cp__tbuf_list(); t; t = t->next) {
        t->in_merge = 0;
        t->snapped = 0;
        t->snap_busy = 0;
        int st = atomic_load_explicit(&t->state, memory_order_acquire);
        if (st != CP_TB_ACTIVE && st != CP_TB_DEAD)
            continue;
        if (!t->first)
            continue;   /* being set up by its thread */
        t->snapped = cp_snapshot(t, !emergency);
        t->snap_busy = !t->snapped;
        busy |= t->snap_busy;
    }
    /* Busy at the first try: once more (most records take nanoseconds),
     * then without the lock (see the top of the file). */
    for (struct cp_tbuf *t = cp__tbuf_list(); busy && t; t = t->next) {
        if (!t->snap_busy)
            continue;
        if (!cp_snapshot(t, 1))
            cp_snapshot(t, 0);
        t->snapped = 1;
    }
    for (struct cp_tbuf *t = cp__tbuf_list(); t; t = t->next) {
        if (!t->snapped)
            continue;
        t->in_merge = cp_cursor_settle(t, T, min_ts);
        /* A buffer registered after the reservation belongs to a thread
         * that started after T was read: it has nothing before the cut. */
        if (t->in_merge && heap_ok) {
            if (n < g_heap_cap)
                g_heap[n++] = t;
            else
                t->in_merge = 0;
        }
    }
    uint64_t count = heap_ok ? cp_merge_heap(n, T, min_ts, emit, ctx)
                             : cp_merge_linear(T, min_ts, emit, ctx);
    if (!emergency) {
        /* Only buffers whose cursor this drain set: one claimed by a new
         * thread meanwhile still has a stale cursor. */
        for (struct cp_tbuf *t = cp__tbuf_list(); t; t = t->next)
            if (t->snapped)
                cp_release_consumed(t);
    }
    return count;
}
