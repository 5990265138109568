/*
 * cp_writer.c - the writer thread: drains the per-thread buffers, encodes
 * records into the file format (include/cp_trace.h), compresses them with
 * zstd and writes them.  One writer per trace file; it exits when the file
 * is closed (exit, exec) or cannot be written.
 *
 * Crash safety: ZSTD_e_flush every CUPROBE_FLUSH_MS makes everything before
 * the flush decodable even if the process is SIGKILLed right after;
 * ZSTD_e_end every CP_FRAME_MAX_BYTES of input keeps frames independent.
 * Flushes and frame ends always fall on record boundaries.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
/* ZSTD_initStaticCCtx and ZSTD_estimateCStreamSize: zstd is linked in
 * statically, so its experimental API is that of the build. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "cp_env.h"
#include "cp_hostmem.h"
#include "cp_io.h"
#include "cp_rec.h"
#include "cp_wfile.h"
#include "cp_writer.h"

#define CP_INBUF_BYTES (256u << 10)


static struct cp_wfile g_w = {.tf = {.fd = -1}};

/* Host memory samples (HOSTINFO, HOSTMEM) and the pinned count they carry;
 * under g_out like g_w. */
static struct cp_hostmem g_hm = {.fd_statm = -1, .fd_meminfo = -1, .fd_cg_max = -1,
                                 .fd_cg_cur = -1};

/* Requests to the thread, under g_wmu. */
static pthread_mutex_t g_wmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wcv;       /* writer waits here */
static pthread_cond_t g_done_cv;   /* requesters wait here */
static pthread_once_t g_cv_once = PTHREAD_ONCE_INIT;
static pthread_t g_thread;
static int g_alive;                /* thread created, not joined */
static int g_exited;               /* thread finished its file */
static int g_running;              /* thread is in cp_writer_main (under g_wmu) */
static int g_kicked, g_stop;
static int g_stop_reason;
static int64_t g_stop_status;
static uint64_t g_flush_req, g_flush_done;

/* Held while encoding/compressing/writing: excludes a fatal-signal handler
 * doing the same (it only ever tries to take it). */
static pthread_mutex_t g_out = PTHREAD_MUTEX_INITIALIZER;

static __thread int t_is_writer;

/* Timed flushes.  The writer flushes 0.6 CUPROBE_FLUSH_MS after the
 * previous flush's cut; cp__flush_due is 0.1 later (UINT64_MAX while no file
 * is open): a producer whose record is later than that found the writer
 * starved (many more busy threads than cores) and helps or waits
 * (cp_writer_help), so that a SIGKILL loses less than one flush interval
 * even then (bench/kill_window.sh).  cp__flush_due is the recorder's. */
static _Atomic uint64_t g_writer_due;
static uint64_t g_period;          /* ns between flushes: 0.6 flush_ms */
static pthread_mutex_t g_help_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_help_cv;   /* CLOCK_MONOTONIC, cp_writer_init_cvs */
static uint64_t g_flushes;         /* under g_help_mu: flushing passes done */
static _Atomic int g_help_waiters;

static void cp_flush_schedule(uint64_t cut)
{
    atomic_store_explicit(&g_writer_due, cut + g_period, memory_order_relaxed);
    atomic_store_explicit(&cp__flush_due, cut + g_period + g_period / 6,
                          memory_order_relaxed);
    if (atomic_load(&g_help_waiters)) {
        pthread_mutex_lock(&g_help_mu);
        g_flushes++;
        pthread_cond_broadcast(&g_help_cv);
        pthread_mutex_unlock(&g_help_mu);
    }
}

static void cp_writer_init_cvs(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&g_wcv, &a);
    pthread_cond_init(&g_done_cv, &a);
    pthread_cond_init(&g_help_cv, &a);
    pthread_condattr_destroy(&a);
}

static struct timespec cp_deadline(uint64_t ns_from_now)
{
    uint64_t t = cp_now_ns() + ns_from_now;
    struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
    return ts;
}

static int cp_writer_is_self(void)
{
    return t_is_writer;
}

/* ---- the thread --------------------------------------------------------- */

/* A path for a message: an over-long one (CUPROBE_OUTPUT) is shortened in
 * the middle so that the reason after it is never cut off. */
static const char *cp_path_msg(const char *path, char *buf, size_t cap)
{
    size_t n = strlen(path);
    if (n < 200)
        return path;
    snprintf(buf, cap, "%.100s...(%zu characters)...%s", path, n, path + n - 60);
    return buf;
}

static void cp_writer_warn_failed(const struct cp_wfile *w)
{
    char b[256];
    if (w->tf.fd_gone)
        cp_log(1, "the program %s cuprobe's trace file descriptor %d, and trace file '%s' "
                  "could not be opened again: %s; tracing is off, the program continues "
                  "untraced (the trace ends at its last flush)",
               w->tf.fd_gone == CP_OWNFD_CLOSED ? "closed" : "put another file at",
               w->tf.fd_event_no, cp_path_msg(w->path, b, sizeof b),
               w->tf.fd_gone_err == ESTALE ? "another file has its name now"
                                           : strerror(w->tf.fd_gone_err));
    else if (w->nospace_ts)
        cp_log(1, "trace file '%s': %s; writing stopped (the trace ends with a record "
                  "saying so), the program continues untraced",
               cp_path_msg(w->path, b, sizeof b), strerror(-w->err));
    else
        cp_log(1, "cannot write trace file '%s': %s; tracing is off, the program "
                  "continues untraced", cp_path_msg(w->path, b, sizeof b), strerror(-w->err));
}

/* cp__emit_fn of every drain: the pinned count sees the record, then the
 * file gets it. */
static void cp_writer_emit(void *ctx, uint32_t tid, unsigned type, uint64_t ts,
                           const uint8_t *fields, uint32_t len)
{
    cp_hostmem_note(&g_hm, type, fields, len);
    cp_wfile_emit(ctx, tid, type, ts, fields, len);
}

/* One pass: drain, write, flush as asked; g_out held.  @return : w->err. */
static int cp_writer_round_locked(struct cp_wfile *w, int stop, int flush)
{
    if (w->tf.fd < 0)   /* closed by a fatal-signal handler */
        return -EBADF;
    /* First: the host memory sample may open files, which would take the
     * number if the program closed it. */
    if (cp_tf_guard(&w->tf) < 0)
        return w->err = -EBADF;
    /* The clock's line is fitted here, by its one owner, before the cut is
     * read with it (a producer helping a starved writer leaves it). */
    if (t_is_writer)
        cp_clock_tune();
    uint64_t cut = cp_now_ns();
    cp__rec_drain(stop ? UINT64_MAX : cut, w->start_ts, 0, cp_writer_emit, w);
    cp_wfile_report_lost(w);
    cp_wfile_report_fd(w);
    /* Host memory: on the writer thread only (a producer helping a starved
     * writer is a hook's thread), after the HEADER (the file's first
     * record), timed at the cut like the records drained before it. */
    if (!stop && t_is_writer && w->records && !w->err)
        cp_hostmem_sample(&g_hm, cp_now_ns(), cut, cp_wfile_emit, w);
    if (stop)
        cp_wfile_end(w, g_stop_reason, g_stop_status);
    else
        cp_wfile_compress(w, flush && (w->unflushed || w->in_len) ? ZSTD_e_flush
                                                                  : ZSTD_e_continue);
    if (stop || w->err) {
        atomic_store_explicit(&cp__flush_due, UINT64_MAX, memory_order_relaxed);
        /* After NOSPACE the file stays open for END (cp_writer_stop). */
        if (stop || !w->nospace_ts)
            cp_wfile_close(w);
    } else if (flush) {
        cp_flush_schedule(cut);
    }
    return w->err;
}

/* One pass under the output lock.  @return : w->err. */
static int cp_writer_round(struct cp_wfile *w, int stop, int flush)
{
    pthread_mutex_lock(&g_out);
    int rc = cp_writer_round_locked(w, stop, flush);
    pthread_mutex_unlock(&g_out);
    return rc;
}

static void cp_writer_help(void)
{
    /* With many more busy threads than cores the writer thread gets its
     * CPU share too late and a SIGKILL could lose seconds: the producers,
     * who have the CPU, do the overdue flush themselves, one at a time,
     * never waiting for the output lock.  Signals are blocked meanwhile: a
     * handler that recorded would spin on a buffer lock this drain holds. */
    if (t_is_writer)
        return;
    int saved = errno;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    struct cp_wfile *w = &g_w;
    if (pthread_mutex_trylock(&g_out) == 0) {
        if (w->tf.fd >= 0 && !w->err && cp__rec_owner() &&
            cp_now_ns() >= atomic_load_explicit(&cp__flush_due, memory_order_relaxed))
            cp_writer_round_locked(w, 0, 1);
        pthread_mutex_unlock(&g_out);
    } else {
        /* Someone (the writer, most likely preempted) is in a pass: give
         * it the CPU until a flush is done, for at most a second (as the
         * backlog limit: the program is slowed, never stopped). */
        atomic_fetch_add(&g_help_waiters, 1);
        pthread_mutex_lock(&g_help_mu);
        uint64_t gen = g_flushes;
        struct timespec dl = cp_deadline(1000000000u);
        while (g_flushes == gen &&
               cp_now_ns() >= atomic_load_explicit(&cp__flush_due, memory_order_relaxed))
            if (pthread_cond_timedwait(&g_help_cv, &g_help_mu, &dl) == ETIMEDOUT)
                break;
        pthread_mutex_unlock(&g_help_mu);
        atomic_fetch_sub(&g_help_waiters, 1);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved;
}

static void *cp_writer_main(void *arg)
{
    struct cp_wfile *w = arg;
    t_is_writer = 1;
    /* Linux threads inherit the creator's name; say what this one is. */
    pthread_setname_np(pthread_self(), "cuprobe-writer");
    pthread_mutex_lock(&g_wmu);
    g_running = 1;
    pthread_cond_broadcast(&g_done_cv);
    /* The clock's base sample now: its first line comes with the first
     * pass 10 ms or more later (a busy program wakes the writer as its
     * chunks fill), so that the program's first calls after start-up
     * already read the counter, without making this thread wait. */
    cp_clock_tune();
    for (;;) {
        /* The due time moves when a producer flushed (cp_writer_help). */
        uint64_t due;
        while (!g_stop && !g_kicked && g_flush_req == g_flush_done &&
               cp_now_ns() < (due = atomic_load(&g_writer_due))) {
            struct timespec dl = {(time_t)(due / 1000000000u), (long)(due % 1000000000u)};
            pthread_cond_timedwait(&g_wcv, &g_wmu, &dl);
        }
        int stop = g_stop;
        uint64_t req = g_flush_req;
        int flush = req != g_flush_done || cp_now_ns() >= atomic_load(&g_writer_due);
        g_kicked = 0;
        pthread_mutex_unlock(&g_wmu);

        int rc = cp_writer_round(w, stop, flush);

        pthread_mutex_lock(&g_wmu);
        g_flush_done = req;
        pthread_cond_broadcast(&g_done_cv);
        if (rc < 0 || stop)
            break;
    }
    if (w->err && (w->err != -EBADF || w->tf.fd_gone)) {
        cp__rec_writer_failed();
        pthread_mutex_unlock(&g_wmu);
        cp_writer_warn_failed(w);
        pthread_mutex_lock(&g_wmu);
    }
    g_exited = 1;
    pthread_cond_broadcast(&g_done_cv);
    pthread_mutex_unlock(&g_wmu);
    return NULL;
}

/* The context is static: its workspace is sized for the level once, here.
 * A context zstd manages allocates its workspace at a file's first
 * compression and may grow or shrink it at a later frame, but the first
 * compression can be the emergency path's, inside a signal handler that
 * interrupted malloc (a fatal signal in a forked child that had not
 * flushed yet): malloc there waits forever on the lock the interrupted
 * code holds.  A static context never allocates. */
static int cp_writer_alloc(struct cp_wfile *w)
{
    if (!w->cctx) {
        size_t ws_bytes = ZSTD_estimateCStreamSize(cp_config()->zstd_level);
        void *ws = malloc(ws_bytes);
        if (!ws)
            return -ENOMEM;
        if (!(w->cctx = ZSTD_initStaticCCtx(ws, ws_bytes))) {
            free(ws);
            return -ENOMEM;
        }
    }
    ZSTD_CCtx_reset(w->cctx, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, cp_config()->zstd_level);
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
    if (!w->in && !(w->in = malloc(CP_INBUF_BYTES)))
        return -ENOMEM;
    w->in_cap = w->in_cap ? w->in_cap : CP_INBUF_BYTES;
    w->out_cap = ZSTD_CStreamOutSize();
    if (!w->out && !(w->out = malloc(w->out_cap)))
        return -ENOMEM;
    return 0;
}

static int cp_writer_start(uint64_t start_ts)
{
    struct cp_wfile *w = &g_w;
    pthread_once(&g_cv_once, cp_writer_init_cvs);
    int fd = cp__output_create(cp_config()->output, w->path, sizeof w->path);
    if (fd < 0) {
        char b[256];
        if (fd == -ECANCELED)   /* said by cp__output_create */
            return fd;
        cp_log(1, "cannot create trace file '%s': %s; tracing is off, the "
                  "program continues untraced", cp_path_msg(w->path, b, sizeof b),
               strerror(-fd));
        return fd;
    }
    uint8_t prefix[CP_TRACE_PREFIX_BYTES] = CP_TRACE_MAGIC;
    uint32_t v = CP_TRACE_VERSION, flags = 0;
    for (int i = 0; i < 4; i++) {
        prefix[8 + i] = (uint8_t)(v >> (8 * i));
        prefix[12 + i] = (uint8_t)(flags >> (8 * i));
    }
    int rc = cp__write_all(fd, prefix, sizeof prefix);
    if (rc == 0)
        rc = cp_writer_alloc(w);
    if (rc < 0) {
        char b[256];
        cp_log(1, "cannot write trace file '%s': %s; tracing is off, the "
                  "program continues untraced", cp_path_msg(w->path, b, sizeof b),
               strerror(-rc));
        goto close_fd;
    }
    /* From here on the descriptor is the file's (moved to a high number). */
    cp_tf_open(&w->tf, fd, CP_TRACE_PREFIX_BYTES, w->path);
    fd = -1;
    w->in_len = 0;
    w->in_total = w->nospace_ts = 0;
    w->frame_in = w->unflushed = w->prev_ts = w->records = w->events = 0;
    w->start_ts = start_ts;
    w->lost_base = cp__rec_lost();
    w->lost_reported = 0;
    w->err = 0;
    w->emergency = 0;
    cp_hostmem_new_file(&g_hm);
    g_period = (uint64_t)cp_config()->flush_ms * 600000u;
    cp_flush_schedule(cp_now_ns());

    pthread_mutex_lock(&g_wmu);
    g_stop = g_kicked = g_exited = g_running = 0;
    g_flush_req = g_flush_done = 0;
    pthread_mutex_unlock(&g_wmu);

    /* Hosts expect their own threads to take process signals. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = -pthread_create(&g_thread, NULL, cp_writer_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc < 0) {
        cp_log(1, "cannot start the trace writer thread: %s; tracing is off",
               strerror(-rc));
        cp_tf_release(&w->tf);
        goto close_fd;
    }
    g_alive = 1;
    /* Return only once the thread runs our code (bounded: 1 s).  A thread's
     * start-up may hold an allocator lock (AddressSanitizer's allocator
     * takes one in every new thread and has no fork handler in gcc 12): a
     * program that forks right after its first CUDA call would give its
     * child that lock held, and the child's own writer would never start
     * (the launcher scenario under check-san, 2 runs in 40). */
    pthread_mutex_lock(&g_wmu);
    struct timespec dl = cp_deadline(1000000000u);
    while (!g_running)
        if (pthread_cond_timedwait(&g_done_cv, &g_wmu, &dl) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&g_wmu);
    return 0;
close_fd:
    /* A file without even a HEADER would only confuse the analyzer. */
    if (fd >= 0)
        close(fd);
    unlink(w->path);
    return rc;
}

static int cp_writer_stop(int reason, int64_t status, unsigned wait_ms)
{
    /* _exit() may run in a signal handler that interrupted a holder of
     * g_wmu on this very thread: never wait for it without a bound. */
    struct timespec ms = {0, 1000000};
    unsigned tries = 0;
    while (pthread_mutex_trylock(&g_wmu) != 0) {
        if (++tries > wait_ms)
            return -ETIMEDOUT;
        nanosleep(&ms, NULL);
    }
    if (!g_alive) {
        pthread_mutex_unlock(&g_wmu);
        return 0;
    }
    g_stop = 1;
    g_stop_reason = reason;
    g_stop_status = status;
    pthread_cond_signal(&g_wcv);
    struct timespec dl = cp_deadline((uint64_t)wait_ms * 1000000u);
    while (!g_exited)
        if (pthread_cond_timedwait(&g_done_cv, &g_wmu, &dl) == ETIMEDOUT)
            break;
    int done = g_exited;
    pthread_mutex_unlock(&g_wmu);
    if (!done)
        return -ETIMEDOUT;
    pthread_join(g_thread, NULL);
    g_alive = 0;
    struct cp_wfile *w = &g_w;
    if (w->nospace_ts && w->tf.fd >= 0 && pthread_mutex_trylock(&g_out) == 0) {
        /* The writer stopped at a full file system and left the file open
         * with room for this: the exit is known after all. */
        cp_wfile_end(w, reason, status);
        cp_wfile_close(w);
        pthread_mutex_unlock(&g_out);
    }
    return 0;
}

static void cp_writer_flush(unsigned wait_ms)
{
    pthread_mutex_lock(&g_wmu);
    if (g_alive && !g_exited) {
        uint64_t my = ++g_flush_req;
        pthread_cond_signal(&g_wcv);
        struct timespec dl = cp_deadline((uint64_t)wait_ms * 1000000u);
        while (g_flush_done < my && !g_exited)
            if (pthread_cond_timedwait(&g_done_cv, &g_wmu, &dl) == ETIMEDOUT)
                break;
    }
    pthread_mutex_unlock(&g_wmu);
}

static void cp_writer_kick(void)
{
    pthread_mutex_lock(&g_wmu);
    g_kicked = 1;
    pthread_cond_signal(&g_wcv);
    pthread_mutex_unlock(&g_wmu);
}

static int cp_writer_emergency(int sig, int code, uint64_t addr, uint32_t tid)
{
    struct cp_wfile *w = &g_w;
    struct timespec ms = {0, 1000000};
    int got = 0;
    for (int i = 0; i < 100 && !got; i++) {
        got = pthread_mutex_trylock(&g_out) == 0;
        if (!got)
            nanosleep(&ms, NULL);
    }
    if (!got)
        return -EBUSY;
    /* Keep g_out for good: the writer thread must not write after END. */
    if (w->tf.fd < 0 || (w->err && !w->nospace_ts))
        return -EBADF;
    w->emergency = 1;
    atomic_store_explicit(&cp__flush_due, UINT64_MAX, memory_order_relaxed);
    /* After NOSPACE the file was left open with room for the end: the
     * records since are lost (counted), the crash is not. */
    if (!w->nospace_ts)
        cp__rec_drain(UINT64_MAX, w->start_ts, 1, cp_writer_emit, w);
    cp_wfile_end_signal(w, tid, sig, code, addr);
    cp_wfile_close(w);
    return 0;
}

static int cp_writer_discard_if_empty(void)
{
    struct cp_wfile *w = &g_w;
    if (g_alive || w->tf.fd >= 0 || w->events || !w->path[0])
        return 0;
    unlink(w->path);
    w->path[0] = 0;
    return 1;
}

static void cp_writer_forget(void)
{
    /* Fork child: the thread does not exist here and the locks may be held
     * by threads that do not exist either.  Our copy of the fd is closed
     * (if it still is ours: the program may have put a file of its own at
     * its number); the zstd context and buffers are reused for the child's
     * own file (cp_writer_alloc resets the context). */
    cp_tf_release(&g_w.tf);
    g_w.in_len = 0;
    cp_hostmem_forget(&g_hm);
    atomic_store(&cp__flush_due, UINT64_MAX);
    pthread_mutex_init(&g_wmu, NULL);
    pthread_mutex_init(&g_out, NULL);
    pthread_mutex_init(&g_help_mu, NULL);
    atomic_store(&g_help_waiters, 0);
    pthread_once(&g_cv_once, cp_writer_init_cvs);
    cp_writer_init_cvs();
    g_alive = g_exited = g_kicked = g_stop = 0;
    t_is_writer = 0;
}

const struct cp__rec_consumer cp__writer = {
    .start = cp_writer_start,
    .stop = cp_writer_stop,
    .flush = cp_writer_flush,
    .kick = cp_writer_kick,
    .help = cp_writer_help,
    .emergency = cp_writer_emergency,
    .discard_if_empty = cp_writer_discard_if_empty,
    .forget = cp_writer_forget,
    .is_self = cp_writer_is_self,
};
