/*
 * check_stray.c - stray-device: a process that should use one GPU but also
 * created a context or held memory on another (every DDP rank leaving a
 * context on GPU 0 is the classic case).
 *
 * The process's own device is, in this order: the one LOCAL_RANK names
 * (logical ordinal LOCAL_RANK, or 0 when CUDA_VISIBLE_DEVICES leaves one
 * GPU), else the one where most of its memory went.  Without LOCAL_RANK a
 * second device that holds a real share of the memory (5% or more of the
 * main one's peak) is taken as intended model parallelism, not a stray.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_advice.h"
#include "cp_checks.h"
#include "cp_run.h"

extern const cp_check cp_check_stray;   /* defined at the end of this file */

#define CP_STRAY_SHARE 0.05

static int cp_count_visible(const char *cvd)
{
    int n = 0;
    for (const char *s = cvd; *s;) {
        size_t len = strcspn(s, ",");
        if (len)
            n++;
        s += len;
        if (*s == ',')
            s++;
    }
    return n;
}

static void stray_finish(cp_proc *p, void *st, cp_report *rep)
{
    (void)st;
    int used[CP_MAX_DEV], n_used = 0;
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++)
        if (p->mem[d].has_ctx || p->mem[d].peak_total)
            used[n_used++] = d;
    if (n_used < 2)
        return;
    const char *lr = cp_proc_env(p, "LOCAL_RANK");
    const char *cvd = cp_proc_env(p, "CUDA_VISIBLE_DEVICES");
    int main_dev = -1;
    const char *how;
    if (lr && *lr && strspn(lr, "0123456789") == strlen(lr)) {
        main_dev = (cvd && cp_count_visible(cvd) == 1) ? 0 : atoi(lr);
        how = "LOCAL_RANK";
    } else {
        uint64_t best = 0;
        for (int i = 0; i < n_used; i++)
            if (p->mem[used[i]].peak_total > best) {
                best = p->mem[used[i]].peak_total;
                main_dev = used[i];
            }
        how = "most memory";
        if (main_dev < 0)
            return;     /* contexts everywhere, memory nowhere: no basis */
    }
    uint64_t main_peak = main_dev < CP_MAX_DEV ? p->mem[main_dev].peak_total : 0;
    char name[192], b1[32];
    cp_finding *f = NULL;
    for (int i = 0; i < n_used; i++) {
        int d = used[i];
        const cp_devmem *m = &p->mem[d];
        if (d == main_dev)
            continue;
        if (how[0] == 'm' && (double)m->peak_total >= CP_STRAY_SHARE * (double)main_peak)
            continue;
        if (!f) {
            f = cp_finding_new(rep, &cp_check_stray, p, "s");
            if (!f)
                return;
            f->sort = CP_SORT_BYTES;
            cp_jb_key(&f->details, "main_device");
            cp_jb_open(&f->details, '{');
            cp_jb_ki(&f->details, "ordinal", main_dev);
            cp_jb_ks(&f->details, "uuid", cp_dev_uuid(p, main_dev, name, sizeof name));
            cp_jb_ks(&f->details, "pci_bus_id", cp_dev_pci(p, main_dev, name, sizeof name));
            cp_jb_ku(&f->details, "peak_bytes", main_peak);
            cp_jb_close(&f->details, '}');
            cp_jb_ks(&f->details, "chosen_by", how);
            cp_jb_ks(&f->details, "local_rank", lr);
            cp_jb_ks(&f->details, "cuda_visible_devices", cvd);
            cp_jb_key(&f->details, "stray_devices");
            cp_jb_open(&f->details, '[');
        }
        cp_jb_open(&f->details, '{');
        cp_jb_ki(&f->details, "ordinal", d);
        cp_jb_ks(&f->details, "uuid", cp_dev_uuid(p, d, name, sizeof name));
        cp_jb_ks(&f->details, "pci_bus_id", cp_dev_pci(p, d, name, sizeof name));
        cp_jb_kb(&f->details, "context", m->has_ctx);
        cp_jb_ku(&f->details, "peak_bytes", m->peak_total);
        cp_jb_close(&f->details, '}');
        cp_finding_line(f, "%s: %s%s%s", cp_dev_name(p, d, name, sizeof name),
                        m->has_ctx ? "a context" : "",
                        m->has_ctx && m->peak_total ? " and " : "",
                        m->peak_total ? cp_fmt_bytes(m->peak_total, b1, sizeof b1) : "");
        if (m->has_ctx)
            cp_finding_site(f, p, m->ctx_stack, 1, 0, 0,
                            cp_sym_intern("context created here", 20));
        if (m->peak_total)
            cp_finding_site(f, p, m->first_alloc_stack, 1, m->peak_total, 0,
                            cp_sym_intern("first allocation", 16));
        f->count++;
        f->bytes += m->peak_total;
    }
    if (!f)
        return;
    cp_jb_close(&f->details, ']');
    cp_finding_retitle(f, "used %llu GPU%s besides its own device %s (chosen by %s%s%s)",
                       (unsigned long long)f->count,
                       f->count == 1 ? "" : "s", cp_dev_name(p, main_dev, name, sizeof name),
                       how, lr ? "=" : "", lr ? lr : "");
    /* Context overhead is real memory even with no allocation. */
    cp_finding_line(f, "Each CUDA context costs several hundred MiB of device memory on the "
                    "GPU it is created on, taken from whichever process owns that GPU.");
    cp_advice_fix(f, p, CP_ADV_DEVICE);
}

/* XLA (JAX) opens a context on every visible GPU by design.  In a run where
 * this is the only process doing GPU work nobody else owns those GPUs: what
 * it costs is said as info, with the knob that avoids it. */
static void stray_across(cp_report *rep)
{
    for (size_t i = 0; i < rep->n; i++) {
        cp_finding *f = rep->f[i];
        if (f->check != &cp_check_stray || !f->proc || !(f->proc->fw & CP_FW_JAX) ||
            cp_run_is_rank(f->proc))
            continue;
        int alone = 1;
        for (size_t j = 0; j < rep->n_procs; j++)
            alone &= rep->procs[j] == f->proc || !rep->procs[j]->used_gpu;
        if (!alone)
            continue;
        char b[32];
        f->sev = CP_SEV_INFO;
        cp_finding_line(f, "JAX (XLA) opens every visible GPU by design; in this run no other "
                        "process wanted them, and it cost %s and a context on %llu other "
                        "GPU%s.", cp_fmt_bytes(f->bytes, b, sizeof b),
                        (unsigned long long)f->count, f->count == 1 ? "" : "s");
        cp_jb_kb(&f->details, "xla_all_devices", 1);
        cp_advice_fix(f, f->proc, CP_ADV_ALL_GPUS);
    }
}

const cp_check cp_check_stray = {
    .id = "stray-device",
    .sev = CP_SEV_WARNING,
    .name = "process touching a GPU that is not its own",
    .explain = "This process creates a context or holds memory on a device other than the "
               "one it works on. With one process per GPU (torchrun, DDP) the usual cause is "
               "code that runs before the device is set: torch.cuda.current_device(), "
               "torch.load without map_location, a CUDA call in a library import, or "
               "torch.cuda.set_device never called, so every rank opens a context on GPU 0 "
               "and takes memory from rank 0.",
    .fix = "Call torch.cuda.set_device(local_rank) (or set CUDA_VISIBLE_DEVICES per rank) "
           "before any other CUDA work, pass device=/map_location= explicitly, and use "
           "torch.device(f\"cuda:{local_rank}\") instead of \"cuda\".",
    .types = 0,
    .finish = stray_finish,
    .across = stray_across,
};
