/*
 * cp_analyze.c - traces into parts (cp_analyze.h): each trace streamed once
 * through the model and its checks, on a pool of threads sized by the online
 * CPUs.  Nothing a check or the model keeps is shared between traces except
 * the interned strings and the symboliser's caches, which cp_sym.c locks.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cp_analyze.h"
#include "cp_checks.h"
#include "cp_attrib.h"
#include "cp_backward.h"
#include "cp_series.h"
#include "cp_ledger.h"

#define CP_MAX_JOBS 1024

/* --- progress (one thread only) --------------------------------------------------------- */

typedef struct cp_progress {
    int on;
    uint64_t total_all, done_before;
    struct timespec t0, last;
    int drawn;
    uint64_t next_tick;     /* records read when to look at the clock next */
} cp_progress;

static double cp_elapsed(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void cp_progress_tick(cp_progress *pg, const cp_dec *d, uint64_t records)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    /* Only when the work takes long enough to be worth a bar. */
    if (cp_elapsed(&pg->t0, &now) < 1.0 || cp_elapsed(&pg->last, &now) < 0.2)
        return;
    pg->last = now;
    uint64_t pos = cp_dec_file_offset(d);
    double frac = pg->total_all ? (double)(pg->done_before + pos) / (double)pg->total_all : 0;
    if (frac > 1)
        frac = 1;
    int w = 30, fill = (int)(frac * w);
    fprintf(stderr, "\r[%.*s%*s] %3d%%  %.1fM records", fill, "##############################",
            w - fill, "", (int)(frac * 100), (double)records / 1e6);
    pg->drawn = 1;
}

static void cp_progress_clear(cp_progress *pg)
{
    if (pg->drawn)
        fprintf(stderr, "\r%60s\r", "");
    pg->drawn = 0;
}

/* --- one trace --------------------------------------------------------------------------- */

/* A trace with no END: what `cuprobe run` saw of the end, when it reaped
 * the process.  An exit is not a kill: the process ended without its exit
 * handlers (quick_exit, a raw exit_group), whole up to its last flush. */
static void cp_read_reaped(cp_proc *p, const cp_trace_info *in, const cp_found *f)
{
    const cp_reaped *r = cp_found_reaped(f, in->run_id, in->pid, in->wall_ns);
    if (!r)
        return;
    p->reaped = 1;
    p->reaped_signo = r->signo;
    p->reaped_code = r->code;
    if (r->signo)
        return;
    p->killed = 0;
    p->truncated = 0;
    free(p->error);
    p->error = NULL;
}

/* Before a window opens a record hook hears of the threads only (their
 * names), not of what they did. */
typedef struct cp_hook_fwd {
    cp_rec_hook hook;
    void *ctx;
} cp_hook_fwd;

static void cp_threads_only(void *ctx, cp_proc *p, const cp_record *r)
{
    const cp_hook_fwd *f = ctx;
    if (r->type == CP_REC_THREAD)
        f->hook(f->ctx, p, r);
}

/* What the record loop feeds besides the model and the timeline: all of it
 * inside the window; before it (cp_window.h) the checks get only the
 * process's fatal CUDA error and the launches in flight then (a context
 * broken before the window stays broken: a death in it is explained). */
typedef struct cp_feeds {
    const cp_checks_fn *pre_fn, *post_fn;
    cp_checks_fn carry[2][256];
    cp_rec_hook hook;
    void *hook_ctx;
    cp_ledger *lg;
} cp_feeds;

static void cp_feeds_set(cp_feeds *f, cp_proc *p, const cp_aopts *o, cp_hook_fwd *fwd,
                         int inside)
{
    static const unsigned carried[] = { CP_REC_ASYNC_ERROR, CP_REC_INFLIGHT };
    for (int k = 0; k < 2; k++) {
        const cp_checks_fn *all = cp_checks_fns(p->checks, k);
        memset(f->carry[k], 0, sizeof f->carry[k]);
        for (size_t t = 0; t < sizeof carried / sizeof carried[0]; t++)
            f->carry[k][carried[t]] = all[carried[t]];
        *(k ? &f->post_fn : &f->pre_fn) = inside ? all : f->carry[k];
    }
    f->hook = !o->hook ? NULL : inside ? o->hook : cp_threads_only;
    f->hook_ctx = inside ? o->hook_ctx : fwd;
    f->lg = inside ? p->ledger : NULL;
}

static int cp_read_trace(cp_proc *p, const cp_aopts *o, cp_progress *pg, const cp_wspan *span)
{
    const char *err = NULL;
    cp_stream *st = o->streams ? &o->streams[p->index] : NULL;
    cp_dec *d;
    if (st && st->fd >= 0) {
        d = cp_dec_open_fd(st->fd, p->file, st->head, st->n_head, &err);
        st->fd = -1;        /* the reader's now, closed on failure too */
    } else {
        d = cp_dec_open(p->file, &err);
    }
    if (!d) {
        p->error = strdup(err ? err : "cannot open");
        return -1;
    }
    p->dec = d;
    p->checks = cp_checks_start(p, o->selected);
    if (!p->checks) {
        p->error = strdup("out of memory while starting the checks");
        return -1;
    }
    if (pg && pg->on) {
        clock_gettime(CLOCK_MONOTONIC, &pg->t0);
        pg->last = pg->t0;
        pg->next_tick = 0x10000;
    }
    const cp_record *run;
    size_t n;
    int rc, cut = 0;
    uint64_t k = 0, k_cut = 0;
    /* The window: before lo the model and the timeline alone, from hi on
     * nothing; turn is where the loop next changes what it feeds (never,
     * without a window). */
    uint64_t lo = span ? span->lo : 0, hi = span ? span->hi : CP_WINDOW_END;
    int before = lo != 0;
    uint64_t turn = before ? lo : hi;
    cp_hook_fwd fwd = { o->hook, o->hook_ctx };
    cp_feeds fd;
    cp_feeds_set(&fd, p, o, &fwd, !before);
    cp_series *ser = p->series;
    /* Records come in runs (a decoder thread's batch): no call per record
     * to get the next one.  A record's type is a byte of the trace. */
    while (!cut && (rc = cp_dec_next_run(d, &run, &n)) == 1) {
        const cp_record *r = run, *end = run + n;
        while (r < end) {
            /* Records are in time order: only a run that reaches the turn
             * is searched for it, the loop below stays as it is. */
            const cp_record *stop = end;
            if (__builtin_expect(end[-1].ts >= turn, 0))
                for (stop = r; stop < end && stop->ts < turn; stop++)
                    ;
            /* Locals for the loop: what it calls cannot change them. */
            const cp_checks_fn *pre_fn = fd.pre_fn, *post_fn = fd.post_fn;
            cp_rec_hook hook = fd.hook;
            void *hook_ctx = fd.hook_ctx;
            cp_ledger *lg = fd.lg;
            for (; r < stop; r++) {
                cp_checks_fn pre = pre_fn[r->type & 255], post = post_fn[r->type & 255];
                if (pre)
                    pre(p->checks, p, r);
                /* The timeline reads a FREE before the model forgets what
                 * it releases, everything else after the model applied it. */
                if (r->type == CP_REC_FREE)
                    cp_series_pre(ser, r, cp_model_freeing(p, r));
                /* PyTorch's backward passes (cp_backward.h): an ALLOC gets
                 * the caller of the running pass before the model keeps its
                 * stack; the companion's record and the thread names after
                 * the model applied them. */
                if (lg)
                    cp_ledger_pre(lg, p, r);
                if ((r->type == CP_REC_ALLOC && p->bw && cp_bw_alloc(p, r) == -ENOMEM) ||
                    cp_model_feed(p, d, r) == -ENOMEM ||
                    cp_series_feed(ser, p, r, p->made) == -ENOMEM ||
                    (r->type == CP_REC_FRAMEWORK && (cp_bw_framework(p, r) == -ENOMEM ||
                                                     cp_attrib_framework(p, r) == -ENOMEM))) {
                    rc = -ENOMEM;
                    break;
                }
                if (r->type == CP_REC_THREAD)
                    cp_bw_thread(p, r);
                if (post)
                    post(p->checks, p, r);
                if (lg)
                    cp_ledger_post(lg, p, r);
                if (hook)
                    hook(hook_ctx, p, r);
            }
            if (rc == -ENOMEM || r == end)
                break;
            /* At the turn: the window opens here, or ends. */
            if (before) {
                before = 0;
                turn = hi;
                /* From the window's start, not its first record: the
                 * pictures show what was held from there. */
                cp_window_open(p, lo);
                cp_feeds_set(&fd, p, o, &fwd, 1);
            }
            if (r->ts >= hi) {
                cut = 1;
                k_cut = k + (uint64_t)(r - run);
                cp_window_close(p, hi - 1);
                break;
            }
        }
        if (rc == -ENOMEM)
            break;
        k += n;
        if (pg && pg->on && k >= (uint64_t)pg->next_tick) {
            pg->next_tick = k + 0x10000;
            cp_progress_tick(pg, d, k);
        }
    }
    if (span) {
        /* A process that ended before the window opened, or started after
         * it ended, was not there; one alive across it, however quiet,
         * was (what it held then is the window's). */
        p->win_out = before || (cut && k_cut == 0);
        p->win_cut = cut;
    }
    if (cut) {
        /* The window ended before the trace did: the rest is not read, and
         * how the process ended is not the window's. */
        rc = 0;
    } else if (rc == -ENOMEM) {
        p->error = strdup("out of memory while reading the trace");
    } else if (rc < 0) {
        p->error = strdup(cp_dec_err(d));
        p->truncated = cp_dec_truncated(d);
        /* Clean to the cut and no END: the process was killed (SIGKILL,
         * the OOM killer, a time limit) and the trace is whole up to its
         * last flush: a post-mortem, not an input error. */
        p->killed = p->truncated && cp_dec_records(d) > 0 && !p->nospace_ts;
        if (p->truncated && p->nospace_ts) {
            /* The shim stopped writing at a full file system and said so
             * (NOSPACE): the trace is whole up to there, the process just
             * was not seen exiting.  Neither killed nor bad input. */
            free(p->error);
            p->error = NULL;
            p->truncated = 0;
            rc = 0;
        }
    }
    cp_model_last_names(p, d);
    if (p->ledger)
        cp_ledger_finish(p->ledger, p, d);
    p->records = cut ? k_cut : cp_dec_records(d);
    const cp_trace_info *in = cp_dec_info(d);
    if (in)
        p->lost = in->lost > p->lost ? in->lost : p->lost;
    if (in && p->killed && o->found)
        cp_read_reaped(p, in, o->found);
    return rc < 0 && !p->killed && !p->reaped ? -1 : 0;
}

/* files[i] into parts[i]: the whole life of one trace.  @return : 0 or -1
 * out of memory. */
static int cp_analyze_one(const char *file, size_t i, const cp_aopts *o, cp_part *pt,
                          cp_progress *pg)
{
    cp_proc *p = cp_part_proc_new(file, (int)i);
    if (!p)
        return -1;
    pt->proc = p;
    if (cp_series_start(p->series) != 0)
        return -1;
    if (!o->timeline)
        cp_series_lean(p->series);
    if (o->ledger) {
        p->ledger = cp_ledger_new(o->timeline);
        if (!p->ledger)
            return -1;
    }
    pt->bad = cp_read_trace(p, o, pg, o->span ? &o->span[i] : NULL) != 0;
    if (p->error && p->records == 0) {
        /* Not a trace (or cut before its first record): no process to
         * judge, so no findings about one. */
        cp_checks_discard(p->checks);
        if (p->dec) {
            size_t n = strlen(p->error) + 32;
            char *e = malloc(n);
            if (e) {
                snprintf(e, n, "%s (no record could be decoded)", p->error);
                free(p->error);
                p->error = e;
            }
        }
    } else if (p->win_out) {
        /* Not running in the window: no process to judge there. */
        cp_checks_discard(p->checks);
    } else {
        cp_checks_finish(p->checks, p, &pt->rep);
    }
    p->checks = NULL;
    cp_dec_close((cp_dec *)p->dec);
    p->dec = NULL;
    /* What stays is bounded by call sites, not by what was live, and the
     * timeline by the buckets it used. */
    cp_model_drop_live(p);
    cp_series_freeze(p->series);
    return 0;
}

cp_proc *cp_part_proc_new(const char *file, int index)
{
    cp_proc *p = cp_proc_new(file, index);
    if (p && !(p->series = cp_series_new())) {
        cp_proc_free(p);
        return NULL;
    }
    return p;
}

void cp_part_proc_free(cp_proc *p)
{
    if (p) {
        cp_series_free(p->series);
        cp_bw_free(p);
        cp_attrib_free(p);
        cp_ledger_free(p->ledger);
    }
    cp_proc_free(p);
}

void cp_part_free(cp_part *pt)
{
    cp_report_free(&pt->rep);
    cp_part_proc_free(pt->proc);
    pt->proc = NULL;
}

/* --- the pool ------------------------------------------------------------------------------ */

int cp_analyze_jobs(int jobs, size_t n)
{
    static int warned;
    if (jobs <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cpus > 0 ? (cpus > CP_MAX_JOBS ? CP_MAX_JOBS : (int)cpus) : 1;
        const char *e = getenv("CUPROBE_JOBS");
        if (e && *e && strcmp(e, "auto") != 0) {
            char *end;
            errno = 0;
            long v = strtol(e, &end, 10);
            if (errno || *end || v < 1 || v > CP_MAX_JOBS) {
                if (!warned++)
                    fprintf(stderr, "report: CUPROBE_JOBS='%s' is not a number from 1 to %d "
                            "or auto: ignored\n", e, CP_MAX_JOBS);
            } else if (v < jobs) {
                jobs = (int)v;
            }
        }
    }
    if ((size_t)jobs > n)
        jobs = (int)n;
    return jobs < 1 ? 1 : jobs;
}

typedef struct cp_pool {
    char **files;
    size_t n;
    const cp_aopts *o;
    cp_part *parts;
    pthread_mutex_t lock;
    size_t next;            /* the next trace to take */
    int oom;
} cp_pool;

static void *cp_pool_worker(void *arg)
{
    cp_pool *pl = arg;
    for (;;) {
        pthread_mutex_lock(&pl->lock);
        size_t i = pl->next < pl->n && !pl->oom ? pl->next++ : pl->n;
        pthread_mutex_unlock(&pl->lock);
        if (i >= pl->n)
            return NULL;
        if (cp_analyze_one(pl->files[i], i, pl->o, &pl->parts[i], NULL) != 0) {
            pthread_mutex_lock(&pl->lock);
            pl->oom = 1;
            pthread_mutex_unlock(&pl->lock);
        }
    }
}

static int cp_analyze_serial(char **files, size_t n, const cp_aopts *o, cp_part *parts)
{
    cp_progress pg = { 0 };
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(files[i], &st) == 0)
            pg.total_all += (uint64_t)st.st_size;
    }
    /* A bar for inputs that take more than a moment, on a terminal only. */
    pg.on = o->progress && isatty(2) && pg.total_all > (16u << 20);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = cp_analyze_one(files[i], i, o, &parts[i], &pg);
        struct stat st;
        if (stat(files[i], &st) == 0)
            pg.done_before += (uint64_t)st.st_size;
    }
    cp_progress_clear(&pg);
    return rc;
}

static int cp_analyze_pool(char **files, size_t n, const cp_aopts *o, cp_part *parts)
{
    /* A record hook (the Perfetto export) sees the traces in order. */
    int jobs = o->hook ? 1 : cp_analyze_jobs(o->jobs, n);
    /* Each job is two threads (reader and decoder): let them spin on each
     * other's batches only when every one of them has a CPU; spinning
     * where they take turns on fewer would only burn them. */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cp_dec_spin_waits(cpus >= 2 * (long)jobs);
    /* No check, model or renderer reads a record's offset or payload. */
    cp_dec_lean_records(1);
    if (jobs <= 1)
        return cp_analyze_serial(files, n, o, parts);
    cp_pool pl = { .files = files, .n = n, .o = o, .parts = parts };
    pthread_t *th = calloc((size_t)jobs, sizeof *th);
    if (!th || pthread_mutex_init(&pl.lock, NULL) != 0) {
        free(th);
        return cp_analyze_serial(files, n, o, parts);
    }
    int started = 0;
    for (; started < jobs; started++)
        if (pthread_create(&th[started], NULL, cp_pool_worker, &pl) != 0)
            break;
    /* No thread at all: this one does the work. */
    if (!started)
        cp_pool_worker(&pl);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_destroy(&pl.lock);
    free(th);
    return pl.oom ? -1 : 0;
}

int cp_analyze_traces(char **files, size_t n, const cp_aopts *o, cp_part *parts)
{
    int rc = cp_analyze_pool(files, n, o, parts);
    /* Streams a failure left unread are closed all the same. */
    for (size_t i = 0; o->streams && i < n; i++)
        if (o->streams[i].fd >= 0) {
            close(o->streams[i].fd);
            o->streams[i].fd = -1;
        }
    return rc;
}
