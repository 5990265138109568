/*
 * cp_run.c - the run model (cp_run.h): process tree, joined exec images,
 * rank identity, GPU use.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_path.h"
#include "cp_run.h"

/* Launcher variables, first match wins: torchrun, Slurm, Open MPI, PMI. */
static const char *const cp_rank_vars[] = { "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK",
                                            "PMI_RANK", NULL };
static const char *const cp_local_vars[] = { "LOCAL_RANK", "SLURM_LOCALID",
                                             "OMPI_COMM_WORLD_LOCAL_RANK", NULL };
static const char *const cp_world_vars[] = { "WORLD_SIZE", "SLURM_NTASKS",
                                             "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL };
static const char *const cp_lworld_vars[] = { "LOCAL_WORLD_SIZE", NULL };
static const char *const cp_group_vars[] = { "GROUP_RANK", "SLURM_NODEID", NULL };

/* The value of the first variable of vars that p has as a number >= 0;
 * -1 when none (a value that is not a number counts as absent). */
static long cp_env_num(const cp_proc *p, const char *const *vars, const char **which)
{
    for (size_t i = 0; vars[i]; i++) {
        const char *v = cp_proc_env(p, vars[i]);
        if (!v || !*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 9)
            continue;
        if (which)
            *which = vars[i];
        return atol(v);
    }
    return -1;
}

uint64_t cp_proc_dev_allocs(const cp_proc *p)
{
    uint64_t allocs = p->n_alloc_before;
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++)
        allocs += p->mem[d].n_alloc;
    return allocs;
}

int cp_proc_used_gpu(const cp_proc *p)
{
    return p->init_ok && (cp_proc_dev_allocs(p) || p->n_launch || p->n_copy);
}

int cp_proc_dev_used(const cp_proc *p, int d)
{
    if (d < 0 || d >= CP_MAX_DEV)
        return 0;
    const cp_devmem *m = &p->mem[d];
    return m->has_ctx || m->peak_total || m->launches || m->n_alloc;
}

int cp_run_is_rank(const cp_proc *p)
{
    return p->id.rank >= 0 || p->id.local_rank >= 0;
}

/* The device p worked on: most memory at peak, then most launches, then
 * the first with a context. */
static int cp_main_dev(const cp_proc *p)
{
    int best = -1;
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++) {
        if (!cp_proc_dev_used(p, d))
            continue;
        if (best < 0)
            best = d;
        const cp_devmem *m = &p->mem[d], *b = &p->mem[best];
        if (m->peak_total > b->peak_total ||
            (m->peak_total == b->peak_total && m->launches > b->launches))
            best = d;
    }
    return best;
}

/* The run's key order: host (none sorts as ""), pid, start time, then the
 * order the traces were given in. */
static int cp_key_cmp(const cp_proc *a, const cp_proc *b)
{
    int c = strcmp(a->host ? a->host : "", b->host ? b->host : "");
    if (c)
        return c;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->t0 != b->t0)
        return a->t0 < b->t0 ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static int cp_key_qcmp(const void *a, const void *b)
{
    return cp_key_cmp(*(cp_proc *const *)a, *(cp_proc *const *)b);
}

cp_proc *const *cp_run_pid(const cp_run_ix *ix, const char *host, uint64_t pid, size_t *n)
{
    const char *h = host ? host : "";
    size_t lo = 0, hi = ix->n;
    /* The first of (host, pid) or after... */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const cp_proc *q = ix->by[mid];
        int c = strcmp(q->host ? q->host : "", h);
        if (c < 0 || (c == 0 && q->pid < pid))
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    /* ... and past its last. */
    for (hi = ix->n; end < hi;) {
        size_t mid = end + (hi - end) / 2;
        const cp_proc *q = ix->by[mid];
        if (strcmp(q->host ? q->host : "", h) == 0 && q->pid == pid)
            end = mid + 1;
        else
            hi = mid;
    }
    *n = end - lo;
    return ix->by + lo;
}

/* The image of pid on p's host that ran when p started (the latest to
 * start at or before it; the first given among those that started
 * together), never p itself. */
static cp_proc *cp_run_at(const cp_run_ix *ix, const cp_proc *p, uint64_t pid)
{
    size_t n;
    cp_proc *const *g = cp_run_pid(ix, p->host, pid, &n);
    size_t hi = 0;
    while (hi < n && g[hi]->t0 <= p->t0)
        hi++;
    while (hi > 0) {
        size_t s = hi - 1;
        while (s > 0 && g[s - 1]->t0 == g[hi - 1]->t0)
            s--;
        for (size_t k = s; k < hi; k++)
            if (g[k] != p)
                return g[k];
        hi = s;
    }
    return NULL;
}

/* The image p exec'd into: of p's pid and host, the first to start at or
 * after p (the first given among those that started together), not p. */
static cp_proc *cp_run_next(const cp_run_ix *ix, const cp_proc *p)
{
    size_t n;
    cp_proc *const *g = cp_run_pid(ix, p->host, p->pid, &n);
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g[mid]->t0 < p->t0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < n; lo++)
        if (g[lo] != p)
            return g[lo];
    return NULL;
}

int cp_run_build(cp_proc **procs, size_t n, cp_run_ix *ix)
{
    cp_run_ix own = { 0 };
    if (!ix)
        ix = &own;
    cp_run_ix_free(ix);
    ix->by = malloc((n ? n : 1) * sizeof *ix->by);
    if (!ix->by)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        cp_proc *p = procs[i];
        p->id.rank = cp_env_num(p, cp_rank_vars, &p->id.rank_var);
        p->id.local_rank = cp_env_num(p, cp_local_vars, NULL);
        p->id.world_size = cp_env_num(p, cp_world_vars, NULL);
        p->id.local_world_size = cp_env_num(p, cp_lworld_vars, NULL);
        p->id.group_rank = cp_env_num(p, cp_group_vars, NULL);
        p->used_gpu = cp_proc_used_gpu(p);
        p->main_dev = cp_main_dev(p);
        ix->by[i] = p;
    }
    ix->n = n;
    /* Sorted once: each process finds its parent and its next image by
     * binary search, O(n log n) whatever the pids repeat (containers,
     * many hosts). */
    qsort(ix->by, n, sizeof *ix->by, cp_key_qcmp);
    for (size_t i = 0; i < n; i++) {
        cp_proc *p = procs[i];
        p->parent = cp_run_at(ix, p, p->ppid);
        p->next_image = p->complete && p->end_reason == CP_END_EXEC ? cp_run_next(ix, p) : NULL;
        /* An image that made no CUDA call before its exec is joined to the
         * next: the traced program is what it exec'd. */
        p->exec_only = p->next_image && !p->first_cuda_ts && !p->used_gpu;
    }
    cp_run_ix_free(&own);
    return 0;
}

void cp_run_ix_free(cp_run_ix *ix)
{
    free(ix->by);
    ix->by = NULL;
    ix->n = 0;
}

const char *cp_run_who(const cp_proc *p, char *buf, size_t cap)
{
    char rk[64] = "";
    if (p->id.rank >= 0 && p->id.local_rank >= 0 && p->id.local_rank != p->id.rank)
        snprintf(rk, sizeof rk, "rank %ld (local %ld), ", p->id.rank, p->id.local_rank);
    else if (p->id.rank >= 0)
        snprintf(rk, sizeof rk, "rank %ld, ", p->id.rank);
    else if (p->id.local_rank >= 0)
        snprintf(rk, sizeof rk, "local rank %ld, ", p->id.local_rank);
    snprintf(buf, cap, "%spid %llu (%s)%s%s", rk, (unsigned long long)p->pid,
             p->exe ? cp_base_name(p->exe) : "?", p->host && *p->host ? " on host " : "",
             p->host ? p->host : "");
    return buf;
}

static int cp_long_cmp(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

const char *cp_run_ranks_str(long *v, size_t n, char *buf, size_t cap)
{
    qsort(v, n, sizeof *v, cp_long_cmp);
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n && o < cap;) {
        size_t j = i;
        /* Sorted, so the difference is >= 0 and exact unsigned: v[j] + 1
         * overflowed for a rank of LONG_MAX (the report fuzzer's input). */
        while (j + 1 < n && (unsigned long)v[j + 1] - (unsigned long)v[j] <= 1)
            j++;
        int w = v[j] == v[i] ? snprintf(buf + o, cap - o, "%s%ld", o ? ", " : "", v[i])
              : snprintf(buf + o, cap - o, "%s%ld%s%ld", o ? ", " : "", v[i],
                         v[j] == v[i] + 1 ? ", " : "-", v[j]);
        o += w > 0 ? (size_t)w : 0;
        i = j + 1;
    }
    return buf;
}

const char *cp_run_who_many(cp_proc *const *ps, size_t n, char *buf, size_t cap)
{
    if (n == 1)
        return cp_run_who(ps[0], buf, cap);
    long v[4096];
    size_t k = 0;
    int ranks = 1;
    for (size_t i = 0; i < n; i++)
        ranks &= ps[i]->id.rank >= 0;
    for (size_t i = 0; i < n && k < 4096; i++)
        v[k++] = ranks ? ps[i]->id.rank : (long)ps[i]->pid;
    char list[1024], hosts[512] = "";
    cp_run_ranks_str(v, k, list, sizeof list);
    /* Each host once, in order, while the list has room: a host is new
     * when it is not among those listed (one that came before is listed). */
    const char *listed[sizeof hosts / 2];
    size_t o = 0, n_listed = 0;
    for (size_t i = 0; i < n && o < sizeof hosts; i++) {
        const char *h = ps[i]->host;
        int seen = !h || !*h;
        for (size_t j = 0; j < n_listed && !seen; j++)
            seen = strcmp(listed[j], h) == 0;
        if (!seen) {
            int w = snprintf(hosts + o, sizeof hosts - o, "%s%s", o ? ", " : "", h);
            o += w > 0 ? (size_t)w : 0;
            listed[n_listed++] = h;
        }
    }
    snprintf(buf, cap, "%s %s%s%s", ranks ? "ranks" : "pids", list,
             !o ? "" : strchr(hosts, ',') ? " on hosts " : " on host ", hosts);
    return buf;
}
