/*
 * check_rank.c - rank-placement: how the ranks of a job sit on the GPUs of
 * each host, judged across every trace of the run.
 *
 *   - ranks that work on one physical GPU while the host has a GPU for each
 *     local rank (device="cuda" without torch.cuda.set_device: every rank on
 *     GPU 0), and the GPUs left idle by it (error);
 *   - a rank whose device is not the one its LOCAL_RANK names (warning);
 *   - other ranks' contexts on a rank's GPU, summed (warning);
 *   - per-rank peak device memory when some rank is an outlier (info).
 *
 * A rank is a process with a rank variable that used a GPU; of the
 * processes of one rank (its DataLoader workers inherit the variables) the
 * one with the most memory speaks for it.  GPUs are told apart by UUID, so
 * per-rank CUDA_VISIBLE_DEVICES is understood.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_advice.h"
#include "cp_checks.h"
#include "cp_run.h"

extern const cp_check cp_check_rank;   /* defined at the end of this file */

#define RP_MAX 4096
#define RP_OUTLIER 1.25     /* a peak this far above the median is named */

typedef struct cp_rank_gpu {
    char key[64];           /* UUID, else "ordinal N" */
    int ord;                /* logical ordinal in the process that saw it first */
    const cp_proc *seen_by;
    size_t n_main;          /* ranks working on it */
} cp_rank_gpu;

static const char *rp_key(const cp_proc *p, int d, char *buf, size_t cap)
{
    cp_dev_uuid(p, d, buf, cap);
    if (!*buf)
        snprintf(buf, cap, "ordinal %d", d);
    return buf;
}

static uint64_t rp_peak(const cp_proc *p)
{
    uint64_t s = 0;
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++)
        s += p->mem[d].peak_total;
    return s;
}

/* The processes that speak for the ranks of host (NULL: every host). */
static size_t rp_ranks(const cp_report *rep, const char *host, cp_proc **out)
{
    size_t n = 0;
    for (size_t i = 0; i < rep->n_procs; i++) {
        cp_proc *p = rep->procs[i];
        if (!cp_run_is_rank(p) || !p->used_gpu || p->main_dev < 0 ||
            (host && p->host && strcmp(p->host, host) != 0))
            continue;
        size_t k;
        for (k = 0; k < n; k++)
            if (out[k]->id.rank == p->id.rank && out[k]->id.local_rank == p->id.local_rank &&
                strcmp(out[k]->host ? out[k]->host : "", p->host ? p->host : "") == 0)
                break;
        if (k < n) {
            if (rp_peak(p) > rp_peak(out[k]))
                out[k] = p;
        } else if (n < RP_MAX) {
            out[n++] = p;
        }
    }
    return n;
}

static long rp_num(const cp_proc *p)
{
    return p->id.rank >= 0 ? p->id.rank : p->id.local_rank;
}

static void rp_host(cp_report *rep, const char *host, cp_proc **r, size_t n)
{
    static cp_rank_gpu g[CP_MAX_DEV];
    size_t ng = 0;
    char key[64], nm[192], b1[32], list[1024];
    /* The host's GPUs: every device any of its ranks saw. */
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < r[i]->n_dev && d < CP_MAX_DEV; d++) {
            if (!r[i]->dev[d].seen && !cp_proc_dev_used(r[i], d))
                continue;
            rp_key(r[i], d, key, sizeof key);
            size_t k;
            for (k = 0; k < ng && strcmp(g[k].key, key) != 0; k++)
                ;
            if (k == ng && ng < CP_MAX_DEV) {
                memset(&g[ng], 0, sizeof g[ng]);
                snprintf(g[ng].key, sizeof g[ng].key, "%s", key);
                g[ng].ord = d;
                g[ng++].seen_by = r[i];
            }
        }
    size_t main_of[RP_MAX];
    for (size_t i = 0; i < n; i++) {
        rp_key(r[i], r[i]->main_dev, key, sizeof key);
        for (main_of[i] = 0; main_of[i] < ng && strcmp(g[main_of[i]].key, key) != 0;
             main_of[i]++)
            ;
        if (main_of[i] < ng)
            g[main_of[i]].n_main++;
    }
    long v[RP_MAX];
    int shared = 0;
    /* 1. ranks sharing a GPU while the host has one for each. */
    if (ng >= n) {
        for (size_t k = 0; k < ng; k++) {
            if (g[k].n_main < 2)
                continue;
            shared = 1;
            size_t nv = 0;
            cp_proc *first = NULL;
            for (size_t i = 0; i < n; i++)
                if (main_of[i] == k) {
                    v[nv++] = rp_num(r[i]);
                    first = first ? first : r[i];
                }
            cp_run_ranks_str(v, nv, list, sizeof list);
            size_t idle = 0;
            for (size_t j = 0; j < ng; j++)
                idle += g[j].n_main == 0;
            cp_finding *f = cp_finding_new(rep, &cp_check_rank, NULL,
                                           "ranks %s on host %s all work on %s, while %zu "
                                           "of the host's %zu GPUs sit idle", list,
                                           host ? host : "?",
                                           cp_dev_name(first, first->main_dev, nm, sizeof nm),
                                           idle, ng);
            if (!f)
                return;
            f->count = nv;
            for (size_t i = 0; i < n; i++)
                if (main_of[i] == k) {
                    const cp_devmem *m = &r[i]->mem[r[i]->main_dev];
                    f->bytes += m->peak_total;
                    cp_finding_line(f, "%s: %s at peak on %s%s%s", cp_run_who(r[i], nm, sizeof nm),
                                    cp_fmt_bytes(m->peak_total, b1, sizeof b1), g[k].key,
                                    r[i]->id.local_rank >= 0 ? ", LOCAL_RANK=" : "",
                                    r[i]->id.local_rank >= 0
                                        ? (snprintf(key, sizeof key, "%ld", r[i]->id.local_rank), key)
                                        : "");
                    cp_finding_site(f, r[i], m->ctx_stack ? m->ctx_stack : m->first_alloc_stack,
                                    1, m->peak_total, 0,
                                    cp_sym_intern("context created here", 20));
                }
            for (size_t j = 0; j < ng; j++)
                if (g[j].n_main == 0)
                    cp_finding_line(f, "idle: %s", cp_dev_name(g[j].seen_by, g[j].ord, nm,
                                                               sizeof nm));
            cp_finding_line(f, "They share one GPU's memory and compute: each has at most "
                            "1/%zu of it, while the idle GPUs do no work.", nv);
            cp_advice_fix(f, first, CP_ADV_DEVICE);
            cp_jb_ks(&f->details, "host", host);
            cp_jb_ks(&f->details, "gpu", g[k].key);
            cp_jb_ku(&f->details, "ranks_sharing", nv);
            cp_jb_ku(&f->details, "host_gpus", ng);
        }
    }
    /* 2. a rank off the device its LOCAL_RANK names (ranks that see every
     * GPU; with one visible GPU per rank, ordinal 0 is always right). */
    for (size_t i = 0; i < n && !shared; i++) {
        const cp_proc *p = r[i];
        if (p->id.local_rank < 0 || p->n_dev <= 1 || p->id.local_rank >= p->n_dev ||
            p->main_dev == p->id.local_rank)
            continue;
        cp_finding *f = cp_finding_new(rep, &cp_check_rank, r[i],
                                       "works on %s, not on GPU %ld that its LOCAL_RANK=%ld "
                                       "names", cp_dev_name(p, p->main_dev, nm, sizeof nm),
                                       p->id.local_rank, p->id.local_rank);
        if (!f)
            return;
        f->sev = CP_SEV_WARNING;
        f->count = 1;
        f->bytes = p->mem[p->main_dev].peak_total;
        cp_finding_line(f, "Another rank is expected there; the mapping of ranks to GPUs "
                        "differs from the launcher's.");
        cp_advice_fix(f, p, CP_ADV_DEVICE);
        cp_jb_ki(&f->details, "local_rank", p->id.local_rank);
        cp_jb_ki(&f->details, "device", p->main_dev);
    }
    /* 3. other ranks' contexts on a rank's GPU, summed. */
    for (size_t i = 0; i < n; i++) {
        const cp_proc *own = r[i];
        rp_key(own, own->main_dev, key, sizeof key);
        size_t nv = 0;
        uint64_t bytes = 0;
        for (size_t j = 0; j < n; j++) {
            if (j == i || main_of[j] == main_of[i])
                continue;
            for (int d = 0; d < r[j]->n_dev && d < CP_MAX_DEV; d++) {
                char k2[64];
                if (!cp_proc_dev_used(r[j], d) || strcmp(rp_key(r[j], d, k2, sizeof k2), key))
                    continue;
                v[nv++] = rp_num(r[j]);
                bytes += r[j]->mem[d].peak_total;
                break;
            }
        }
        if (nv < 2)
            continue;   /* one stray rank is stray-device's finding */
        cp_run_ranks_str(v, nv, list, sizeof list);
        cp_finding *f = cp_finding_new(rep, &cp_check_rank, NULL,
                                       "ranks %s each hold a context on %s, the GPU of rank %ld "
                                       "on host %s: %zu contexts and %s taken from it", list,
                                       cp_dev_name(own, own->main_dev, nm, sizeof nm),
                                       rp_num(own), host ? host : "?", nv,
                                       cp_fmt_bytes(bytes, b1, sizeof b1));
        if (!f)
            return;
        f->sev = CP_SEV_WARNING;
        f->count = nv;
        f->bytes = bytes;
        cp_finding_line(f, "Each context takes several hundred MiB on that GPU besides the "
                        "memory allocated there.");
        cp_advice_fix(f, own, CP_ADV_DEVICE);
    }
}

/* Per-rank peak device memory over the whole job, outliers named. */
static void rp_peaks(cp_report *rep, cp_proc **r, size_t n)
{
    if (n < 2)
        return;
    uint64_t pk[RP_MAX];
    for (size_t i = 0; i < n; i++)
        pk[i] = rp_peak(r[i]);
    uint64_t s[RP_MAX];
    memcpy(s, pk, n * sizeof *s);
    for (size_t i = 1; i < n; i++)  /* insertion sort: n is the rank count */
        for (size_t j = i; j > 0 && s[j - 1] > s[j]; j--) {
            uint64_t t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
    uint64_t med = s[n / 2], lo = s[0], hi = s[n - 1];
    char b1[32], b2[32], b3[32], nm[256];
    size_t out = 0;
    for (size_t i = 0; i < n; i++)
        out += (double)pk[i] > RP_OUTLIER * (double)med && pk[i] - med > (64u << 20);
    if (!out)
        return;     /* even ranks: each process's section gives its peak */
    cp_finding *f = cp_finding_new(rep, &cp_check_rank, NULL,
                                   "peak device memory per rank: median %s, lowest %s, "
                                   "highest %s over %zu ranks",
                                   cp_fmt_bytes(med, b1, sizeof b1),
                                   cp_fmt_bytes(lo, b2, sizeof b2),
                                   cp_fmt_bytes(hi, b3, sizeof b3), n);
    if (!f)
        return;
    f->sev = CP_SEV_INFO;
    f->count = n;
    cp_jb_key(&f->details, "peaks");
    cp_jb_open(&f->details, '[');
    for (size_t i = 0; i < n; i++) {
        cp_jb_open(&f->details, '{');
        cp_jb_ki(&f->details, "rank", rp_num(r[i]));
        cp_jb_ks(&f->details, "host", r[i]->host);
        cp_jb_ku(&f->details, "peak_bytes", pk[i]);
        cp_jb_close(&f->details, '}');
        if ((double)pk[i] > RP_OUTLIER * (double)med && pk[i] - med > (64u << 20))
            cp_finding_line(f, "outlier: %s peaked at %s, %.0f%% above the median",
                            cp_run_who(r[i], nm, sizeof nm), cp_fmt_bytes(pk[i], b1, sizeof b1),
                            med ? 100.0 * ((double)pk[i] / (double)med - 1) : 0.0);
    }
    cp_jb_close(&f->details, ']');
}

static void rp_across(cp_report *rep)
{
    static cp_proc *all[RP_MAX], *on[RP_MAX];
    size_t n = rp_ranks(rep, NULL, all);
    for (size_t i = 0; i < n; i++) {
        int done = 0;
        for (size_t j = 0; j < i && !done; j++)
            done = strcmp(all[j]->host ? all[j]->host : "", all[i]->host ? all[i]->host : "") == 0;
        if (done)
            continue;
        size_t m = rp_ranks(rep, all[i]->host ? all[i]->host : NULL, on);
        if (m >= 2)
            rp_host(rep, all[i]->host, on, m);
    }
    rp_peaks(rep, all, n);
}

const cp_check cp_check_rank = {
    .id = "rank-placement",
    .merge_exact = 1,
    .sev = CP_SEV_ERROR,
    .name = "ranks placed on the wrong GPUs",
    .explain = "In a job with one process per GPU (torchrun, srun, mpirun) each rank must "
               "work on its own GPU. Ranks that use device=\"cuda\" without "
               "torch.cuda.set_device(local_rank) all land on GPU 0: they share its memory "
               "and compute while the other GPUs sit idle, and contexts that ranks open on "
               "other ranks' GPUs take memory from them.",
    .fix = "Call torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"])) first thing in each "
           "rank (or give every rank its own CUDA_VISIBLE_DEVICES), and use "
           "torch.device(f\"cuda:{local_rank}\") instead of \"cuda\". JAX: "
           "jax.distributed.initialize() with local_device_ids.",
    .types = 0,
    .across = rp_across,
};
