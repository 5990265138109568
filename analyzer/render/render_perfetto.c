/*
 * render_perfetto.c - `export --perfetto FILE`: the Trace Event Format
 * (JSON) that ui.perfetto.dev and chrome://tracing open.
 *
 * One process track per trace ("rank 1 on host (pid 42)") under the
 * process's real pid (another number, above any pid, when two traces share
 * one: the images of an exec), its threads under their real tids with
 * their names (thread_name), as nsys shows them; per device counters of
 * memory held, of the same split by holder as the page draws it, and of the
 * framework's allocated and reserved bytes (from the model's bucketed
 * series: at most two points per bucket); slices for calls slower than the
 * threshold (synchronous copies, synchronisations and any other driver
 * call) on their thread; instants for OOMs, context creations and findings,
 * each finding at its own time (cp_finding_when()).
 *
 * Memory stays bounded on any trace length: while a trace is read, slices
 * and instants wait in a small heap ordered by start time (a record is
 * written when it ends, so a long call starts before shorter ones already
 * recorded) and go to a temporary spool file once no later record can start
 * before them; at the end each process's spool, counters and findings are
 * merged by time into the output.  Events come out ordered by time within
 * each process.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cp_series.h"
#include "render_perfetto.h"
#include "cp_grow.h"

#define PF_HEAP_MAX 65536
#define PF_PID_STEP 4194304     /* above Linux's largest pid_max */

typedef struct pf_thread {
    uint64_t os_tid;
    char *name;
} pf_thread;

/* A process as the export names it. */
typedef struct pf_proc {
    const cp_proc *proc;        /* whose (its index changes when the run is put together) */
    int pid;
    cp_map tid;                 /* trace tid -> index in th + 1 */
    pf_thread *th;
    size_t n_th, cap_th;
} pf_proc;

typedef struct pf_item {
    uint64_t start, dur;        /* dur UINT64_MAX: not a slice */
    char *rest;                 /* the event's JSON after "ts" and "dur" */
} pf_item;

struct cp_pf {
    uint64_t slow_ns;
    const cp_proc *cur;         /* the process being read */
    pf_item *heap;
    size_t n_heap;
    uint64_t max_dur, last_start;
    uint64_t ctx_seen;          /* devices with a context creation already marked */
    FILE **spool;               /* per process index */
    pf_proc *pp;                /* per process index, as many as spool */
    size_t n_spool;
    uint64_t n_events;
    int err;                    /* first errno */
};

cp_pf *cp_pf_new(uint64_t slow_ns)
{
    cp_pf *pf = calloc(1, sizeof *pf);
    if (!pf)
        return NULL;
    pf->slow_ns = slow_ns;
    pf->heap = malloc(PF_HEAP_MAX * sizeof *pf->heap);
    if (!pf->heap) {
        free(pf);
        return NULL;
    }
    return pf;
}

void cp_pf_free(cp_pf *pf)
{
    if (!pf)
        return;
    for (size_t i = 0; i < pf->n_heap; i++)
        free(pf->heap[i].rest);
    for (size_t i = 0; i < pf->n_spool; i++) {
        if (pf->spool[i])
            fclose(pf->spool[i]);
        for (size_t k = 0; k < pf->pp[i].n_th; k++)
            free(pf->pp[i].th[k].name);
        free(pf->pp[i].th);
        cp_map_free(&pf->pp[i].tid);
    }
    free(pf->spool);
    free(pf->pp);
    free(pf->heap);
    free(pf);
}

/* A JSON string with the characters JSON requires escaped. */
static void pf_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c < 0x20)
            fprintf(o, "\\u%04x", c);
        else
            fputc(c, o);
    }
    fputc('"', o);
}

/* --- the reorder heap ----------------------------------------------------------------- */

static void pf_swap(pf_item *a, pf_item *b)
{
    pf_item t = *a;
    *a = *b;
    *b = t;
}

static void pf_pop_to_spool(cp_pf *pf)
{
    pf_item top = pf->heap[0];
    pf->heap[0] = pf->heap[--pf->n_heap];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < pf->n_heap && pf->heap[l].start < pf->heap[m].start)
            m = l;
        if (r < pf->n_heap && pf->heap[r].start < pf->heap[m].start)
            m = r;
        if (m == i)
            break;
        pf_swap(&pf->heap[i], &pf->heap[m]);
        i = m;
    }
    /* Only a call longer than every one before it can start before what
     * already went out: it is clipped to start there (and says so). */
    uint64_t start = top.start, dur = top.dur;
    int clipped = 0;
    if (start < pf->last_start) {
        if (dur != UINT64_MAX)
            dur -= pf->last_start - start < dur ? pf->last_start - start : dur;
        start = pf->last_start;
        clipped = 1;
    }
    pf->last_start = start;
    FILE *sp = pf->spool[pf->cur->index];
    fprintf(sp, "%020llu\t{\"ts\":%llu", (unsigned long long)start, (unsigned long long)start);
    if (dur != UINT64_MAX)
        fprintf(sp, ",\"dur\":%llu", (unsigned long long)dur);
    fprintf(sp, "%s%s\n", clipped ? ",\"clipped\":true" : "", top.rest);
    free(top.rest);
    pf->n_events++;
}

static void pf_push(cp_pf *pf, uint64_t start, uint64_t dur, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void pf_push(cp_pf *pf, uint64_t start, uint64_t dur, const char *fmt, ...)
{
    if (pf->n_heap == PF_HEAP_MAX)
        pf_pop_to_spool(pf);
    va_list ap;
    va_start(ap, fmt);
    char *rest = NULL;
    int n = vasprintf(&rest, fmt, ap);
    va_end(ap);
    if (n < 0) {
        pf->err = pf->err ? pf->err : ENOMEM;
        return;
    }
    size_t i = pf->n_heap++;
    pf->heap[i] = (pf_item){ start, dur, rest };
    while (i && pf->heap[(i - 1) / 2].start > pf->heap[i].start) {
        pf_swap(&pf->heap[i], &pf->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
}

static void pf_drain(cp_pf *pf)
{
    while (pf->n_heap)
        pf_pop_to_spool(pf);
}

/* --- records --------------------------------------------------------------------------- */

static int pf_switch(cp_pf *pf, const cp_proc *p)
{
    if (pf->cur)
        pf_drain(pf);
    pf->cur = p;
    pf->max_dur = 0;
    pf->last_start = 0;
    pf->ctx_seen = 0;
    if ((size_t)p->index >= pf->n_spool) {
        size_t n = (size_t)p->index + 1;
        FILE **ns = realloc(pf->spool, n * sizeof *ns);
        if (!ns)
            return -ENOMEM;
        pf->spool = ns;
        pf_proc *np = realloc(pf->pp, n * sizeof *np);
        if (!np)
            return -ENOMEM;
        pf->pp = np;
        memset(ns + pf->n_spool, 0, (n - pf->n_spool) * sizeof *ns);
        memset(np + pf->n_spool, 0, (n - pf->n_spool) * sizeof *np);
        for (size_t i = pf->n_spool; i < n; i++)
            cp_map_init(&np[i].tid, sizeof(size_t));
        pf->n_spool = n;
    }
    pf_proc *me = &pf->pp[p->index];
    me->proc = p;
    if (!me->pid) {
        /* Its own pid, unless a trace before it took that one. */
        int pid = p->pid && p->pid < PF_PID_STEP ? (int)p->pid : p->index + 1;
        for (size_t i = 0; i < pf->n_spool; i++)
            if (&pf->pp[i] != me && pf->pp[i].pid == pid) {
                pid += PF_PID_STEP;
                i = (size_t)-1;
            }
        me->pid = pid;
    }
    if (!pf->spool[p->index] && !(pf->spool[p->index] = tmpfile()))
        return -errno;
    return 0;
}

static const char *pf_api(const cp_proc *p, const cp_record *r)
{
    const char *n = p->dec ? cp_dec_api_name(p->dec, r->ev.api) : NULL;
    return n ? n : "driver call";
}

/* The thread's real tid where its THREAD record said, else the trace's. */
static uint64_t pf_tid(const cp_pf *pf, const cp_proc *p, uint64_t tid)
{
    const pf_proc *me = &pf->pp[p->index];
    const size_t *ix = cp_map_get(&me->tid, tid);
    return ix ? me->th[*ix - 1].os_tid : tid;
}

static void pf_thread_rec(cp_pf *pf, const cp_proc *p, const cp_record *r)
{
    pf_proc *me = &pf->pp[p->index];
    int created;
    size_t *ix = cp_map_put(&me->tid, r->tid, &created);
    if (!ix) {
        pf->err = pf->err ? pf->err : ENOMEM;
        return;
    }
    if (created) {
        if (cp_grow((void **)&me->th, &me->cap_th, me->n_th + 1, sizeof *me->th, 8) != 0) {
            cp_map_del(&me->tid, r->tid, NULL);
            pf->err = pf->err ? pf->err : ENOMEM;
            return;
        }
        *ix = ++me->n_th;
        me->th[*ix - 1] = (pf_thread){ 0, NULL };
    }
    pf_thread *t = &me->th[*ix - 1];
    t->os_tid = r->u.thread.os_tid ? r->u.thread.os_tid : r->tid;
    free(t->name);
    t->name = cp_str_dup(r->u.thread.name);
}

static void pf_call(cp_pf *pf, const cp_proc *p, const cp_record *r, int pid)
{
    uint64_t dur = r->ev.dur_ns;
    uint64_t start = r->ts >= dur ? r->ts - dur : 0;
    const char *cat = "call";
    char extra[96] = "";
    if (r->type == CP_REC_COPY) {
        cat = r->u.copy.flags & CP_CF_ASYNC ? "copy" : "blocking copy";
        snprintf(extra, sizeof extra, ",\"bytes\":%llu", (unsigned long long)r->u.copy.bytes);
    } else if (r->type == CP_REC_SYNC) {
        cat = "sync";
    }
    if (dur > pf->max_dur)
        pf->max_dur = dur;
    pf_push(pf, start, dur, ",\"ph\":\"X\",\"pid\":%d,\"tid\":%llu,\"cat\":\"%s\",\"name\":\"%s\","
            "\"args\":{\"result\":%llu,\"device\":%lld%s}}", pid,
            (unsigned long long)pf_tid(pf, p, r->tid), cat,
            pf_api(p, r), (unsigned long long)r->ev.result, (long long)r->ev.dev, extra);
}

void cp_pf_rec(void *ctx, cp_proc *p, const cp_record *r)
{
    cp_pf *pf = ctx;
    if (pf->cur != p) {
        int rc = pf_switch(pf, p);
        if (rc) {
            pf->err = pf->err ? pf->err : -rc;
            pf->cur = NULL;
            return;
        }
    }
    if (!pf->spool[p->index])
        return;
    int pid = pf->pp[p->index].pid;
    if (r->type == CP_REC_THREAD)
        pf_thread_rec(pf, p, r);
    if (r->type >= CP_REC_CALL && r->type <= CP_REC_SYNC && r->type != CP_REC_LAUNCH_COUNT &&
        r->ev.dur_ns >= pf->slow_ns)
        pf_call(pf, p, r, pid);
    if (r->type == CP_REC_OOM) {
        pf_push(pf, r->ts, UINT64_MAX, ",\"ph\":\"i\",\"s\":\"p\",\"pid\":%d,\"tid\":%llu,"
                "\"cat\":\"oom\",\"name\":\"out of memory on GPU %lld\",\"args\":{\"requested\":"
                "%llu,\"free\":%llu,\"total\":%llu}}", pid,
                (unsigned long long)pf_tid(pf, p, r->tid),
                (long long)r->ev.dev, (unsigned long long)r->u.oom.requested,
                (unsigned long long)r->u.oom.free, (unsigned long long)r->u.oom.total);
    } else if (r->type == CP_REC_CTX && r->ev.result == 0 &&
               (r->u.ctx.op == CP_CTX_CREATE || r->u.ctx.op == CP_CTX_RETAIN)) {
        int64_t d = r->u.ctx.target_dev;
        uint64_t bit = d >= 0 && d < 64 ? 1ull << d : 0;
        if (r->u.ctx.op == CP_CTX_CREATE || !(pf->ctx_seen & bit)) {
            pf->ctx_seen |= bit;
            pf_push(pf, r->ts, UINT64_MAX, ",\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%llu,"
                    "\"cat\":\"context\",\"name\":\"context %s on GPU %lld\"}", pid,
                    (unsigned long long)pf_tid(pf, p, r->tid),
                    r->u.ctx.op == CP_CTX_CREATE ? "created" : "retained (primary)",
                    (long long)d);
        }
    }
    /* Whatever is older than any call still running can go. */
    uint64_t wm = r->ts > pf->max_dur ? r->ts - pf->max_dur : 0;
    while (pf->n_heap && pf->heap[0].start <= wm)
        pf_pop_to_spool(pf);
}

/* --- the output ----------------------------------------------------------------------- */

typedef struct pf_out {
    uint64_t ts;
    int kind;                   /* 0 held, 1 framework, 2 finding, 3 by holder */
    int dev;
    uint64_t a, b;
    const cp_finding *f;
    const cp_ser_dev *bk;       /* kind 3: the bucket */
    unsigned holders;           /* kind 3: bit h: holder h held memory on dev */
} pf_out;

static int pf_cmp(const void *x, const void *y)
{
    const pf_out *a = x, *b = y;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int pf_add(pf_out **v, size_t *n, size_t *cap, pf_out e)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 1024;
        pf_out *nv = realloc(*v, nc * sizeof *nv);
        if (!nv)
            return -ENOMEM;
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = e;
    return 0;
}

/* Counters of p from its series, and the findings placed on its track. */
static int pf_collect(const cp_report *rep, const cp_proc *p, pf_out **v, size_t *n)
{
    size_t cap = 0;
    const cp_series *s = p->series;
    int rc = 0;
    for (int d = 0; s && s->cur >= 0 && d < s->n_dev && !rc; d++) {
        const cp_ser_dev *b = cp_series_dev(s, d);
        uint64_t fa = UINT64_MAX, fr = UINT64_MAX;
        unsigned holders = 0;
        for (int i = 0; b && i < cp_series_n(s); i++)
            for (int h = 0; h < CP_HD_N; h++)
                holders |= b[i].hold[h] ? 1u << h : 0;
        for (int i = 0; b && i < cp_series_n(s) && !rc; i++) {
            uint64_t t = s->t0 + (uint64_t)i * s->width;
            uint64_t at = b[i].max_ts > t ? b[i].max_ts : t;
            if (b[i].min_held < b[i].max_held && b[i].max_ts > t)
                rc = pf_add(v, n, &cap, (pf_out){ t, 0, d, b[i].min_held, 0, NULL, NULL, 0 });
            if (!rc)
                rc = pf_add(v, n, &cap, (pf_out){ at, 0, d, b[i].max_held, 0, NULL, NULL, 0 });
            if (!rc && holders)
                rc = pf_add(v, n, &cap, (pf_out){ at, 3, d, 0, 0, NULL, &b[i], holders });
            if (!rc && b[i].fw_seen && (b[i].fw_alloc != fa || b[i].fw_res != fr)) {
                fa = b[i].fw_alloc;
                fr = b[i].fw_res;
                rc = pf_add(v, n, &cap, (pf_out){ at, 1, d, fa, fr, NULL, NULL, 0 });
            }
        }
    }
    for (size_t i = 0; i < rep->n && !rc; i++) {
        const cp_finding *f = rep->f[i];
        if (f->proc != p && (f->proc || p->index != 0))
            continue;
        uint64_t t, to;
        if (!cp_finding_when(f, &t, &to))
            t = s && s->cur >= 0 ? s->t_end : p->t_last;
        rc = pf_add(v, n, &cap, (pf_out){ t, 2, (int)i, to, 0, f, NULL, 0 });
    }
    if (!rc)
        qsort(*v, *n, sizeof **v, pf_cmp);
    return rc;
}

static void pf_write_out(FILE *o, const pf_out *e, int pid, uint64_t T0)
{
    double ts = (double)(e->ts > T0 ? e->ts - T0 : 0) / 1e3;
    if (e->kind == 3) {
        fprintf(o, ",\n{\"ts\":%.3f,\"ph\":\"C\",\"pid\":%d,\"name\":\"GPU %d by holder\","
                   "\"args\":{", ts, pid, e->dev);
        int first = 1;
        for (int h = 0; h < CP_HD_N; h++)
            if (e->holders >> h & 1) {
                fprintf(o, "%s", first ? "" : ",");
                pf_str(o, cp_holder_name(h));
                fprintf(o, ":%llu", (unsigned long long)e->bk->hold[h]);
                first = 0;
            }
        fprintf(o, "}}");
    } else if (e->kind == 0) {
        fprintf(o, ",\n{\"ts\":%.3f,\"ph\":\"C\",\"pid\":%d,\"name\":\"GPU %d held\","
                   "\"args\":{\"bytes\":%llu}}", ts, pid, e->dev, (unsigned long long)e->a);
    } else if (e->kind == 1) {
        fprintf(o, ",\n{\"ts\":%.3f,\"ph\":\"C\",\"pid\":%d,\"name\":\"GPU %d framework\","
                   "\"args\":{\"allocated\":%llu,\"reserved\":%llu}}", ts, pid, e->dev,
                (unsigned long long)e->a, (unsigned long long)e->b);
    } else {
        const cp_finding *f = e->f;
        fprintf(o, ",\n{\"ts\":%.3f,\"ph\":\"i\",\"s\":\"%s\",\"pid\":%d,\"tid\":%d,"
                   "\"cat\":\"finding\",\"name\":", ts, f->proc ? "p" : "g", pid, pid);
        char name[96];
        snprintf(name, sizeof name, "%s [%s]", cp_sev_name(f->sev), f->check->id);
        pf_str(o, name);
        fprintf(o, ",\"args\":{\"id\":\"finding-%d\",\"title\":", e->dev);
        pf_str(o, f->title);
        if (e->a > e->ts)
            fprintf(o, ",\"until_us\":%.3f", (double)(e->a - T0) / 1e3);
        fprintf(o, "}}");
    }
}

/* Spool lines carry the absolute start (ns) as a key, then the event with
 * ts in absolute ns: rewritten here relative to T0 in microseconds. */
static void pf_write_line(FILE *o, const char *line, uint64_t T0)
{
    const char *tab = strchr(line, '\t');
    if (!tab)
        return;
    const char *js = tab + 1;
    unsigned long long ts, dur;
    int used = 0;
    if (sscanf(js, "{\"ts\":%llu%n", &ts, &used) != 1)
        return;
    fprintf(o, ",\n{\"ts\":%.3f", (double)(ts > T0 ? ts - T0 : 0) / 1e3);
    js += used;
    if (sscanf(js, ",\"dur\":%llu%n", &dur, &used) == 1) {
        fprintf(o, ",\"dur\":%.3f", (double)dur / 1e3);
        js += used;
    }
    size_t n = strlen(js);
    fwrite(js, 1, n && js[n - 1] == '\n' ? n - 1 : n, o);
}

int cp_pf_write(cp_pf *pf, FILE *o, cp_report *rep)
{
    if (pf->cur)
        pf_drain(pf);
    pf->cur = NULL;
    if (pf->err)
        return -pf->err;
    uint64_t T0 = UINT64_MAX;
    for (size_t i = 0; i < rep->n_procs; i++) {
        const cp_proc *p = rep->procs[i];
        uint64_t t = p->series && p->series->cur >= 0 ? p->series->t0 : p->t0;
        if (t && t < T0)
            T0 = t;
    }
    if (T0 == UINT64_MAX)
        T0 = 0;
    char w[96] = "";
    if (rep->windowed) {
        /* A window's times read as the run's: 12.5 s is 12.5 s after its start. */
        T0 = rep->window.origin;
        cp_window_say(&rep->window, w, sizeof w);
    }
    fprintf(o, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"cuprobe\"%s%s%s},"
               "\"traceEvents\":[", *w ? ",\"window\":\"" : "", w, *w ? "\"" : "");
    char *line = NULL;
    size_t lcap = 0;
    int rc = 0;
    for (size_t i = 0; i < rep->n_procs && !rc; i++) {
        const cp_proc *p = rep->procs[i];
        /* Its slot from the reading: the processes a filter left out are
         * gone from rep, and the others renumbered. */
        size_t slot = 0;
        while (slot < pf->n_spool && pf->pp[slot].proc != p)
            slot++;
        const pf_proc *me = slot < pf->n_spool ? &pf->pp[slot] : NULL;
        int pid = me && me->pid ? me->pid : p->index + 1;
        char lab[256];
        fprintf(o, "%s\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":",
                i ? "," : "", pid);
        pf_str(o, cp_proc_label(p, lab, sizeof lab));
        fprintf(o, "}},\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\","
                   "\"args\":{\"sort_index\":%d}}", pid, p->index + 1);
        for (size_t k = 0; me && k < me->n_th; k++) {
            fprintf(o, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%llu,\"name\":\"thread_name\","
                       "\"args\":{\"name\":", pid, (unsigned long long)me->th[k].os_tid);
            pf_str(o, me->th[k].name && *me->th[k].name ? me->th[k].name : "thread");
            fprintf(o, "}}");
        }
        pf_out *v = NULL;
        size_t n = 0, k = 0;
        rc = pf_collect(rep, p, &v, &n);
        FILE *sp = me ? pf->spool[slot] : NULL;
        if (sp)
            rewind(sp);
        ssize_t got = sp ? getline(&line, &lcap, sp) : -1;
        while (!rc && (got > 0 || k < n)) {
            uint64_t lts = got > 0 ? strtoull(line, NULL, 10) : UINT64_MAX;
            if (k < n && v[k].ts <= lts) {
                pf_write_out(o, &v[k++], pid, T0);
            } else {
                pf_write_line(o, line, T0);
                got = getline(&line, &lcap, sp);
            }
        }
        free(v);
    }
    free(line);
    fprintf(o, "\n]}\n");
    if (!rc && ferror(o))
        rc = -EIO;
    return rc;
}
