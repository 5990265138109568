/*
 * cp_rec.c - the recorder: per-thread record buffers (producer side), the
 * tracing state machine (lazy file start, shutdown, fork, exec) and the
 * public cp_rec.h API.  The writer's side of the buffers is cp_rec_drain.c.
 *
 * Hot path (an event: cp_rec_begin() + cp_rec_commit_at()): a TLS load,
 * two compares and plain stores into the thread's own chunk, published by
 * one release store of its fill (no locked instruction), and a compare
 * with the flush deadline (one relaxed load).  Its time is a timed call's
 * end, read earlier, or the clock at commit.  A definition
 * (cp_rec_commit(): API names, stacks, strings...) reads the clock and
 * publishes under the buffer lock, so that a writer cutting at time T
 * misses none with ts < T (see cp_rec_drain.c for the argument).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cp_env.h"
#include "cp_hot.h"
#include "cp_rec.h"
#include "cp_rec_int.h"
#include "cp_spin.h"
#include "cp_tid.h"
#include "cp_writer.h"

#define CP_GEN_NONE 0xffffffffu

enum cp_state {
    CP_ST_OFF = 0,        /* disabled, failed or shut down for good */
    CP_ST_LAZY = 1,       /* accepting records; the file opens on the first */
    CP_ST_RUNNING = 2,    /* file open, writer running */
    CP_ST_SUSPENDED = 3,  /* closed for an exec; cp__rec_resume() reopens */
};

/* ---- process-wide state ------------------------------------------------- */
static _Atomic int g_on;                            /* cp_rec_on() */
static _Atomic uint32_t g_live_gen = CP_GEN_NONE;   /* == g_gen while RUNNING */
static _Atomic uint32_t g_gen = 1;
/* The generation whose writer failed: after NOSPACE its file is left open
 * with room for the end, which a fatal signal still writes (the emergency
 * finds any other failed file closed). */
static _Atomic uint32_t g_failed_gen = CP_GEN_NONE;
static _Atomic uint64_t g_file_start;               /* cp_now_ns() at file start */
/* The latest time of a record committed by cp_rec_commit() (see
 * cp_rec_commit_at() for why). */
static _Atomic uint64_t g_def_ts;
static int g_state;                                 /* under g_start_mu */
static pthread_mutex_t g_start_mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t g_pid;
static pthread_key_t g_key;
static int g_key_ok;

static _Atomic uint32_t g_next_tid = 1;
static _Atomic uint64_t g_lost;
/* Chunks filled (cp_rec_open_slow): the writer is woken at every
 * CP_KICK_CHUNKS-th, not every one: a wake is a futex call and, in a VM,
 * an interrupt to the other CPU.  Its timer
 * still wakes it every flush interval, and a producer over the backlog
 * limit still kicks and waits (cp__chunk_get). */
#define CP_KICK_CHUNKS 8
static _Atomic unsigned g_fills;
/* Threads that exited (cp_tbuf_release): the writer is woken at every
 * CP_KICK_EXITS-th.  A dead thread's chunk and buffer go back to the pools
 * only when the writer has drained them, and threads that come and go
 * faster than it flushes by itself (a pool replacing its workers) would
 * otherwise find the pools empty and take both from malloc.  Not at every
 * exit (a pass of the writer costs far more than a thread's records): at
 * every 128th, half the first chunks the pool keeps (cp_rec_chunk.c). */
#define CP_KICK_EXITS 128
static _Atomic unsigned g_exits;

/* The timed flush's deadline, set by the consumer (see cp_writer.h). */
_Atomic uint64_t cp__flush_due = UINT64_MAX;
/* The consumer of the buffers (the writer), set by cp__rec_init(); until
 * then none (cp_rec_cb.c): nothing starts, nothing is written. */
static const struct cp__rec_consumer *g_out = &cp__rec_none;

/* What fork children inherited and dropped (see cp__rec_fork_child). */
static void *volatile g_forgotten[8][2];
static unsigned g_forgotten_n;

static __thread struct cp_tbuf *t_buf;
static __thread int t_guard;         /* inside the recorder's slow path */

/* ---- thread buffers ----------------------------------------------------- */

/* pthread key destructor: the thread is exiting.  The writer frees the
 * chunks once it has drained them and then lets a new thread reuse it. */
static void cp_tbuf_release(void *arg)
{
    struct cp_tbuf *t = arg;
    if (t_buf == t)
        t_buf = NULL;
    atomic_store_explicit(&t->state, CP_TB_DEAD, memory_order_release);
    if (atomic_fetch_add_explicit(&g_exits, 1, memory_order_relaxed) % CP_KICK_EXITS ==
        CP_KICK_EXITS - 1)
        g_out->kick();
}

static struct cp_tbuf *cp_tbuf_attach(void)
{
    struct cp_chunk *c = cp__chunk_get(CP_CHUNK_FIRST_BYTES, 0, NULL, NULL);
    if (!c)
        return NULL;
    struct cp_tbuf *t = cp__tbuf_claim(c, atomic_fetch_add(&g_next_tid, 1));
    if (!t) {
        cp__chunk_put(c);
        return NULL;
    }
    if (g_key_ok)
        pthread_setspecific(g_key, t);
    t_buf = t;
    return t;
}

/* The current chunk is full: link a new one (may wait for the writer).
 * The old chunk's fill is final before `next` and `last` move on (release
 * stores): a writer that reads the new `last` with acquire sees it. */
static __attribute__((noinline, cold)) uint8_t *cp_rec_open_slow(struct cp_tbuf *t,
                                                                  unsigned type, size_t need)
{
    struct cp_chunk *c = cp__chunk_get(need, 1, g_out->kick, &g_on);
    if (!c) {
        t->open = NULL;
        atomic_fetch_add(&g_lost, 1);
        return NULL;
    }
    if (atomic_fetch_add_explicit(&g_fills, 1, memory_order_relaxed) % CP_KICK_CHUNKS ==
        CP_KICK_CHUNKS - 1)
        g_out->kick();
    struct cp_chunk *old = atomic_load_explicit(&t->last, memory_order_relaxed);
    atomic_store_explicit(&old->next, c, memory_order_release);
    atomic_store_explicit(&t->last, c, memory_order_release);
    c->data[0] = (uint8_t)type;
    t->open = c->data;
    return c->data + CP_HDR_BYTES;
}

/* Open a record on t: check room, write the type byte.  `max` is the
 * caller's bound on the field bytes.  No lock: only this thread writes its
 * chunks (a signal handler on it finds `open` set and records nothing),
 * and the writer reads up to the fill published at commit. */
static inline uint8_t *cp_rec_open(struct cp_tbuf *t, unsigned type, size_t max)
{
    size_t need = CP_HDR_BYTES + max;
    /* Marked before the fill is read: a handler that recorded between the
     * read and the write below would be overwritten. */
    t->open = CP_OPENING;
    atomic_signal_fence(memory_order_seq_cst);
    struct cp_chunk *c = atomic_load_explicit(&t->last, memory_order_relaxed);
    size_t u = atomic_load_explicit(&c->used, memory_order_relaxed);
    if (__builtin_expect(c->cap - u < need, 0))
        return cp_rec_open_slow(t, type, need);
    uint8_t *p = c->data + u;
    p[0] = (uint8_t)type;
    t->open = p;
    return p + CP_HDR_BYTES;
}

/* Write the open record's length and time ts, and publish it: one release
 * store of its chunk's fill, which the writer loads with acquire.  `open`
 * stays set: the caller clears it (cp_rec_close) once nothing it holds
 * could make a signal handler's record wait. */
static inline void cp_rec_seal(struct cp_tbuf *t, uint8_t *end, uint64_t ts)
{
    uint8_t *p = t->open;
    struct cp_chunk *c = atomic_load_explicit(&t->last, memory_order_relaxed);
    uint32_t len = (uint32_t)(end - p - CP_HDR_BYTES);
    memcpy(p + 1, &len, sizeof len);
    memcpy(p + 5, &ts, sizeof ts);
    atomic_store_explicit(&c->used, (size_t)(end - c->data), memory_order_release);
}

static inline void cp_rec_close(struct cp_tbuf *t)
{
    atomic_signal_fence(memory_order_seq_cst);
    t->open = NULL;
}

/* Is the timed flush overdue (writer starved)?  One relaxed load. */
static inline void cp_rec_maybe_help(uint64_t ts)
{
    if (__builtin_expect(ts >= atomic_load_explicit(&cp__flush_due, memory_order_relaxed), 0) &&
        !t_guard)
        g_out->help();
}

CP_HOT void cp_rec_commit_at(uint8_t *end, uint64_t ts)
{
    /* A given time was read before this record opened, so a definition
     * (API name, stack, string, module, thread) that this record uses may
     * have been committed since, by another thread, with a later time: the
     * merge would then put the use first.  Whoever published the
     * definition's id did so after cp_rec_commit() raised g_def_ts to the
     * definition's time, and this thread read the id before getting here,
     * so the record goes just after every such definition.  (A time
     * bumped this way is at most the clock now: g_def_ts is a past read.) */
    /* A time from before this file's start would read as left over from
     * the previous file and be dropped by the writer: the clock instead
     * (tested first: such a time must not pass for one after a definition). */
    if (ts < atomic_load_explicit(&g_file_start, memory_order_relaxed))
        ts = 0;
    if (ts) {
        uint64_t def = atomic_load_explicit(&g_def_ts, memory_order_relaxed);
        if (ts <= def)
            ts = def + 1;
    } else {
        ts = cp_now_ns();
    }
    /* Published without the buffer lock: an event is never a definition,
     * and the writer's merge takes an event published after its cut with a
     * time before it (cp_rec_drain.c). */
    struct cp_tbuf *t = t_buf;
    cp_rec_seal(t, end, ts);
    cp_rec_close(t);
    cp_rec_maybe_help(ts);
}

CP_HOT void cp_rec_commit(uint8_t *end)
{
    struct cp_tbuf *t = t_buf;
    /* A definition's clock read and publication happen under the buffer
     * lock, which the writer takes to read the fill at its cut: a
     * definition it misses has a time after the cut, and so has every
     * event that carries its id (cp_rec_commit_at, cp_rec_drain.c). */
    cp__tb_lock(t);
    uint64_t ts = cp_now_ns();
    cp_rec_seal(t, end, ts);
    cp__tb_unlock(t);
    cp_rec_close(t);
    /* Raise g_def_ts to ts before the caller publishes what the record
     * defines (see cp_rec_commit_at).  REC records are rare next to
     * events: a CAS on a shared line is affordable here. */
    uint64_t def = atomic_load_explicit(&g_def_ts, memory_order_relaxed);
    while (def < ts && !atomic_compare_exchange_weak_explicit(&g_def_ts, &def, ts,
                                                              memory_order_release,
                                                              memory_order_relaxed))
        ;
    cp_rec_maybe_help(ts);
}

/* CP_REC_THREAD for the calling thread into generation gen. */
static void cp_rec_announce(struct cp_tbuf *t, uint32_t gen)
{
    char name[64] = "";
    pthread_getname_np(pthread_self(), name, sizeof name);
    size_t name_len = strnlen(name, sizeof name);
    t->gen = gen;
    uint8_t *p = cp_rec_open(t, CP_REC_THREAD, CP_REC_BOUND(THREAD));
    if (!p)
        return;
    cp_rec_commit(cp_enc_thread(p, (uint64_t)cp_tid(), name, name_len));
}

/* CP_REC_HEADER, first record of a file: cp_header.c encodes it. */
static int cp_rec_header(struct cp_tbuf *t)
{
    size_t len = 0;
    uint8_t *f = cp__header_encode(&len);
    uint8_t *p = f ? cp_rec_open(t, CP_REC_HEADER, len) : NULL;
    if (p) {
        memcpy(p, f, len);
        cp_rec_commit(p + len);
    }
    free(f);
    return p ? 0 : -ENOMEM;
}

/* ---- state machine ------------------------------------------------------ */

static void cp_rec_turn_off_locked(void)
{
    g_state = CP_ST_OFF;
    atomic_store(&g_live_gen, CP_GEN_NONE);
    atomic_store(&g_on, 0);
}

/* Open the file for the current generation; g_start_mu held. */
static int cp_rec_start_locked(struct cp_tbuf *t)
{
    uint64_t start = cp_now_ns();
    atomic_store_explicit(&g_file_start, start, memory_order_relaxed);
    int rc = g_out->start(start);
    if (rc < 0) {
        cp_rec_turn_off_locked();
        return rc;
    }
    uint32_t gen = atomic_load(&g_gen);
    rc = cp_rec_header(t);
    if (rc < 0) {
        g_out->stop(CP_END_EXIT, 0, 1000);
        cp_rec_turn_off_locked();
        return rc;
    }
    cp_rec_announce(t, gen);
    g_state = CP_ST_RUNNING;
    atomic_store(&g_failed_gen, CP_GEN_NONE);
    atomic_store(&g_live_gen, gen);
    return 0;
}

/* Make sure a file is open.  @return : 1 when this call opened it (the
 * caller then runs the new-file callbacks), 0 if already open, <0 if off. */
static int cp_rec_ensure_started(struct cp_tbuf *t)
{
    int rc;
    pthread_mutex_lock(&g_start_mu);
    if (g_state == CP_ST_LAZY)
        rc = cp_rec_start_locked(t) == 0 ? 1 : -ENODEV;
    else
        rc = g_state == CP_ST_RUNNING ? 0 : -ENODEV;
    pthread_mutex_unlock(&g_start_mu);
    return rc;
}

/* Out of line (as cp_rec_open_slow): inlined, its calls made every
 * record's cp_rec_begin() save and restore six registers. */
static __attribute__((noinline, cold)) uint8_t *cp_rec_begin_slow(unsigned type, size_t max)
{
    struct cp_tbuf *t = t_buf;
    if (!atomic_load_explicit(&g_on, memory_order_relaxed) || t_guard ||
        g_out->is_self())
        return NULL;
    if (t && t->open) {
        /* A signal handler interrupted this thread inside a record. */
        atomic_fetch_add(&g_lost, 1);
        return NULL;
    }
    t_guard = 1;
    int started = 0;
    if (!t && !(t = cp_tbuf_attach()))
        goto fail;
    if (atomic_load(&g_live_gen) == CP_GEN_NONE) {
        started = cp_rec_ensure_started(t);
        if (started < 0)
            goto fail;
    }
    uint32_t gen = atomic_load(&g_live_gen);
    if (gen == CP_GEN_NONE)
        goto fail;
    if (t->gen != gen)
        cp_rec_announce(t, gen);
    t_guard = 0;
    if (started > 0)
        cp__rec_run_new_file();
    return cp_rec_open(t, type, max);
fail:
    t_guard = 0;
    return NULL;
}

CP_HOT uint8_t *cp_rec_begin(unsigned type, size_t max)
{
    struct cp_tbuf *t = t_buf;
    if (__builtin_expect(!t || t->open ||
                         t->gen != atomic_load_explicit(&g_live_gen, memory_order_relaxed), 0))
        return cp_rec_begin_slow(type, max);
    return cp_rec_open(t, type, max);
}

int cp_rec_on(void)
{
    return atomic_load_explicit(&g_on, memory_order_relaxed);
}

uint32_t cp_rec_tid(void)
{
    struct cp_tbuf *t = t_buf;
    if (!t && atomic_load(&g_on) && !t_guard)
        t = cp_tbuf_attach();
    return t ? t->tid : 0;
}

uint32_t cp_rec_generation(void)
{
    return atomic_load(&g_gen);
}

uint64_t cp__rec_lost(void)
{
    return atomic_load(&g_lost);
}

int cp__rec_may_log(void)
{
    struct cp_tbuf *t = t_buf;
    return atomic_load_explicit(&g_live_gen, memory_order_relaxed) != CP_GEN_NONE &&
           !t_guard && !(t && t->open) && !g_out->is_self();
}

void cp__rec_writer_failed(void)
{
    atomic_store(&g_failed_gen, atomic_exchange(&g_live_gen, CP_GEN_NONE));
    atomic_store(&g_on, 0);
}

int cp__rec_running(void)
{
    return atomic_load(&g_live_gen) != CP_GEN_NONE;
}

int cp__rec_owner(void)
{
    return getpid() == g_pid;
}

void cp_rec_flush(void)
{
    if (!cp__rec_running() || g_out->is_self())
        return;
    cp__rec_run_flush_hooks(atomic_load(&g_on));
    unsigned ms = cp_config()->flush_ms * 10;
    g_out->flush(ms < 100 ? 100 : ms);
}

void cp_rec_catch_up(void)
{
    if (!cp__rec_running() || g_out->is_self())
        return;
    cp__rec_run_flush_hooks(atomic_load(&g_on));
}

/* ---- lifecycle entry points --------------------------------------------- */

static void cp_rec_log_put(int level, const char *msg, size_t len)
{
    (void)cp_rec_put_log((uint64_t)level, msg, len);
}

void cp__rec_init(int enabled, const struct cp__rec_consumer *out)
{
    if (out)
        g_out = out;
    cp_log_set_trace(cp__rec_may_log, cp_rec_log_put);
    g_pid = getpid();
    cp_tid_init();      /* not in a thread's first record: it calls dlvsym */
    if (!g_key_ok && pthread_key_create(&g_key, cp_tbuf_release) == 0)
        g_key_ok = 1;
    pthread_mutex_lock(&g_start_mu);
    g_state = enabled ? CP_ST_LAZY : CP_ST_OFF;
    atomic_store(&g_on, enabled);
    pthread_mutex_unlock(&g_start_mu);
}

int cp__rec_start_now(void)
{
    struct cp_tbuf *t = t_buf;
    if (!atomic_load(&g_on))
        return -ENODEV;
    if (!t && !(t = cp_tbuf_attach()))
        return -ENOMEM;
    t_guard = 1;
    int rc = cp_rec_ensure_started(t);
    t_guard = 0;
    if (rc > 0)
        cp__rec_run_new_file();
    return rc < 0 ? rc : 0;
}

void cp__rec_shutdown(int reason, int64_t status, int final, unsigned wait_ms)
{
    if (!cp__rec_owner())
        return;
    if (reason != CP_END_SIGNAL && cp__rec_running() && !g_out->is_self())
        cp__rec_run_flush_hooks(atomic_load(&g_on));
    if (!cp_mutex_lock_bounded(&g_start_mu, wait_ms))
        return;
    atomic_store(&g_on, 0);
    int was = g_state;
    if (was == CP_ST_RUNNING) {
        atomic_store(&g_live_gen, CP_GEN_NONE);
        atomic_store(&g_failed_gen, CP_GEN_NONE);   /* the stop ends that file */
        if (g_out->stop(reason, status, wait_ms) < 0)
            final = 1;   /* a writer still running cannot be restarted */
    }
    /* An image that only execs (launcher scripts, pyenv shims) would leave
     * one empty file per hop; the image it becomes writes its own. */
    if (was == CP_ST_RUNNING && reason == CP_END_EXEC)
        g_out->discard_if_empty();
    if (was == CP_ST_RUNNING || was == CP_ST_LAZY)
        g_state = final ? CP_ST_OFF : CP_ST_SUSPENDED;
    pthread_mutex_unlock(&g_start_mu);
}

void cp__rec_resume(void)
{
    pthread_mutex_lock(&g_start_mu);
    if (g_state == CP_ST_SUSPENDED) {
        /* New generation before any record can reach the new file, so that
         * interning tables re-announce their entries into it. */
        atomic_fetch_add(&g_gen, 1);
        g_state = CP_ST_LAZY;
        atomic_store(&g_on, 1);
    }
    pthread_mutex_unlock(&g_start_mu);
}

int cp__rec_pause(int paused)
{
    /* g_on is what every wrapper already tests (cp_rec_on()): pausing adds
     * nothing to the hot path.  Only a live recorder is paused or resumed, so
     * a shutdown or a failed writer is never undone. */
    pthread_mutex_lock(&g_start_mu);
    int live = g_state == CP_ST_LAZY || g_state == CP_ST_RUNNING;
    if (live)
        atomic_store(&g_on, !paused);
    pthread_mutex_unlock(&g_start_mu);
    return live ? 0 : -ENODEV;
}

void cp__rec_fork_child(void)
{
    /* Only this thread exists now.  Locks may have been held by threads that
     * are gone, and lists may be half-updated: re-initialise the locks and
     * forget (leak) the inherited buffers; their pages are shared
     * copy-on-write with the parent, so leaking costs nothing. */
    g_pid = getpid();
    cp__image_forked = 1;
    /* Kept reachable (not freed) so leak checkers do not flag them. */
    g_forgotten[g_forgotten_n % 8][0] = cp__tbuf_fork_child();
    g_forgotten[g_forgotten_n % 8][1] = cp__chunk_fork_child();
    g_forgotten_n++;
    pthread_mutex_init(&g_start_mu, NULL);
    atomic_store(&g_lost, 0);
    t_buf = NULL;
    t_guard = 0;
    g_out->forget();
    atomic_fetch_add(&g_gen, 1);
    atomic_store(&g_live_gen, CP_GEN_NONE);
    atomic_store(&g_failed_gen, CP_GEN_NONE);
    if (g_state == CP_ST_RUNNING || g_state == CP_ST_LAZY) {
        g_state = CP_ST_LAZY;
        atomic_store(&g_on, 1);
    }
}

void cp__rec_fatal(int sig, int code, uint64_t addr)
{
    if (!cp__rec_owner())
        return;
    uint32_t gen = atomic_load(&g_live_gen);
    if (gen == CP_GEN_NONE)   /* the writer failed: a file left open ends too */
        gen = atomic_exchange(&g_failed_gen, CP_GEN_NONE);
    if (gen == CP_GEN_NONE)
        return;
    struct cp_tbuf *t = t_buf;
    /* Name the thread only if this file has its THREAD record. */
    uint32_t tid = t && t->gen == gen ? t->tid : 0;
    atomic_store(&g_on, 0);
    atomic_store(&g_live_gen, CP_GEN_NONE);
    g_out->emergency(sig, code, addr, tid);
}

void cp__rec_signal_note(int sig, int code, uint64_t addr)
{
    struct cp_tbuf *t = t_buf;
    if (!t || t->open || t->gen != atomic_load(&g_live_gen) || !cp__rec_owner())
        return;
    /* No lock (a SIGNAL record is not a definition) and no new chunk (no
     * allocation in a handler): room in the current one, or it is lost. */
    t->open = CP_OPENING;
    atomic_signal_fence(memory_order_seq_cst);
    struct cp_chunk *c = atomic_load_explicit(&t->last, memory_order_relaxed);
    size_t u = atomic_load_explicit(&c->used, memory_order_relaxed);
    if (c->cap - u < CP_HDR_BYTES + CP_REC_BOUND(SIGNAL)) {
        cp_rec_close(t);
        atomic_fetch_add(&g_lost, 1);
        return;
    }
    uint8_t *p = c->data + u;
    p[0] = CP_REC_SIGNAL;
    t->open = p;
    /* never the consumer's help() from a handler */
    cp_rec_seal(t, cp_enc_signal(p + CP_HDR_BYTES, (uint64_t)sig, code, addr), cp_now_ns());
    cp_rec_close(t);
}
