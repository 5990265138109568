/*
 * cp_rec_int.h - per-thread record buffers, shared by cp_rec.c (producers,
 * state machine), cp_rec_tbuf.c (their registry), cp_rec_chunk.c (their
 * chunks) and cp_rec_drain.c (the writer's cut-and-merge).
 *
 * Each thread owns a cp_tbuf: a FIFO of chunks.  The thread appends records
 * to the last chunk and publishes each with a release store of the chunk's
 * fill (`used`); only it writes its chunks and moves `last`.  The writer
 * consumes from the first chunk up to the published fill.  Only the writer
 * frees chunks, and never the last one, so the producer's `last` pointer is
 * always valid.  The buffer lock is taken by the producer only around a
 * definition's clock read and publication, and by the writer around its
 * snapshot of the fill (the cut argument is in cp_rec_drain.c).  Record layout in a chunk:
 * u8 type | u32 len | u64 ts | fields[len]   (CP_HDR_BYTES = 13).
 */
#ifndef CP_REC_INT_H
#define CP_REC_INT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cp_spin.h"

#define CP_CHUNK_BYTES (64u << 10)
/* A thread's first chunk: most threads that come and go record a few
 * events, and a pooled 64 KiB chunk is often not at hand for them (the
 * writer returns chunks once per flush), when a fresh one costs its
 * arena's growth and trim; a busy thread moves on to CP_CHUNK_BYTES. */
#define CP_CHUNK_FIRST_BYTES (4u << 10)

struct cp_chunk {
    _Atomic(struct cp_chunk *) next;
    _Atomic size_t used;        /* published bytes (release-stored at commit) */
    size_t cap;
    uint8_t data[];
};

enum cp_tb_state {
    CP_TB_FREE = 0,     /* drained, chunks returned, on the free list (cp_rec_tbuf.c) */
    CP_TB_ACTIVE = 2,   /* owned by a live thread */
    CP_TB_DEAD = 3,     /* its thread exited; records may remain */
};

struct cp_tbuf {
    _Alignas(64) atomic_int lock;       /* a definition's commit vs the writer's cut */
    _Atomic int state;                  /* enum cp_tb_state */
    _Atomic(struct cp_chunk *) last;    /* producer appends here */
    uint8_t *volatile open;             /* record in progress (producer) */
    uint32_t tid;                       /* small index, never 0 */
    uint32_t gen;                       /* generation its THREAD record went to */
    struct cp_tbuf *next;               /* global list, push-only */
    struct cp_tbuf *next_free;          /* free list (cp_rec_tbuf.c) */
    /* writer-only, on its own cache line: the merge updates the cursor for
     * every record and must not bounce the producer's line. */
    _Alignas(64) struct cp_chunk *first;
    size_t rd;
    struct cp_chunk *cur;               /* merge cursor */
    size_t pos;
    struct cp_chunk *snap_last;         /* published end at the cut */
    size_t snap_used;
    uint64_t cur_ts;
    int in_merge;                       /* has a record before the cut */
    int snapped;                        /* cursor valid for this drain */
    int snap_busy;                      /* lock held at the first try */
};

/* While a thread is between reading its chunk's fill and setting `open` to
 * the record (or linking a new chunk), `open` holds this marker, so that a
 * signal handler on the same thread records nothing rather than write
 * where the interrupted record goes. */
#define CP_OPENING ((uint8_t *)1)

struct cp__rec_consumer;

/*! cp__rec_none : the consumer until cp__rec_init() sets one: starts
 *  nothing, writes nothing (cp_rec_cb.c). */
extern const struct cp__rec_consumer cp__rec_none;

/*! cp__tbuf_list() : head of the list of every buffer ever registered. */
struct cp_tbuf *cp__tbuf_list(void);

/*! cp__tbuf_claim() : a buffer for the calling new thread, ACTIVE, with c
 *  as its first chunk and tid as its index: one a drained exited thread
 *  left (cp__tbuf_free), else a new one put on the list.
 *  @return : it, or NULL when out of memory (c is the caller's then). */
struct cp_tbuf *cp__tbuf_claim(struct cp_chunk *c, uint32_t tid);

/*! cp__tbuf_free() : t's thread exited and the writer drained and freed
 *  all its chunks: t is FREE, for the next thread.  Writer only. */
void cp__tbuf_free(struct cp_tbuf *t);

/*! cp__tbuf_fork_child() : in a fork child: forget every buffer (threads
 *  that do not exist here owned them) and re-initialise the free list's
 *  lock.  @return : the old list (kept reachable by the caller). */
struct cp_tbuf *cp__tbuf_fork_child(void);

/*! cp__chunk_put() : return a drained chunk (pool or free); writer only. */
void cp__chunk_put(struct cp_chunk *c);

/*! cp__chunk_get() : a chunk for `need` bytes (CP_CHUNK_FIRST_BYTES is
 *  given as asked; any other need gets at least CP_CHUNK_BYTES), counted
 *  as pending.  wait != 0:
 *  when the writer is more than CUPROBE_BACKLOG_MB behind, call kick() and
 *  wait for it (up to a second, while *on) rather than grow without bound;
 *  past that return NULL: the caller drops and counts the record.
 *  @return : the chunk, or NULL. */
struct cp_chunk *cp__chunk_get(size_t need, int wait, void (*kick)(void), const _Atomic int *on);

/*! cp__chunk_fork_child() : in a fork child: re-initialise the pool's lock
 *  and forget its chunks.  @return : the old pool (kept reachable). */
void *cp__chunk_fork_child(void);

/*! cp__rec_run_new_file() : run the cp_rec_on_new_file() callbacks (on the
 *  thread that just started a file). */
void cp__rec_run_new_file(void);

/*! cp__rec_run_flush_hooks() : run the cp_rec_on_flush() callbacks, unless
 *  tracing is off (`on` is 0) or this thread is already running them. */
void cp__rec_run_flush_hooks(int on);

/*! cp__tb_lock() : take t's buffer lock (producer or writer; never from a
 *  signal handler: see cp__rec_signal_note for the try-only variant). */
static inline void cp__tb_lock(struct cp_tbuf *t)
{
    unsigned spins = 0;
    /* The other side (writer) holds it for a few loads; if it was
     * preempted, give it the CPU instead of burning a time slice. */
    while (atomic_exchange_explicit(&t->lock, 1, memory_order_acquire))
        cp_spin_pause(&spins, 200);
}

static inline void cp__tb_unlock(struct cp_tbuf *t)
{
    atomic_store_explicit(&t->lock, 0, memory_order_release);
}

/*! cp__tb_trylock() : take t's lock if it is free within a few spins.
 *  @return : 1 when taken.  The writer uses it: a producer preempted inside
 *  a record must not make the writer wait for it to be scheduled again. */
static inline int cp__tb_trylock(struct cp_tbuf *t)
{
    for (unsigned i = 0; i < 64; i++) {
        if (!atomic_load_explicit(&t->lock, memory_order_relaxed) &&
            !atomic_exchange_explicit(&t->lock, 1, memory_order_acquire))
            return 1;
        cp_cpu_relax();
    }
    return 0;
}

/*! cp__chunk_end() : bytes of c the current drain may read: the snapshot
 *  for the last chunk, the final fill for earlier ones. */
static inline size_t cp__chunk_end(const struct cp_tbuf *t, const struct cp_chunk *c)
{
    return c == t->snap_last ? t->snap_used
                             : atomic_load_explicit(&c->used, memory_order_acquire);
}

#endif /* CP_REC_INT_H */
