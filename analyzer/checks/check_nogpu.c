/*
 * check_nogpu.c - no-gpu-used: the program ran but never used a GPU.  The
 * report states it first: CUDA was never initialised (and why), no device
 * was visible, or no memory was allocated and no kernel launched.
 *
 * When several traces are read together, a process whose descendants used
 * the GPU is their launcher (torchrun, a script that starts the ranks):
 * that it used no GPU itself is normal, and said as info.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_checks.h"

static int cp_any_device(const cp_proc *p)
{
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++)
        if (p->dev[d].seen)
            return 1;
    return 0;
}

static uint64_t ng_dev_allocs(const cp_proc *p)
{
    uint64_t n = 0;
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++)
        n += p->mem[d].n_alloc;
    return n;
}

static int ng_used_gpu(const cp_proc *p)
{
    return p->init_ok && (ng_dev_allocs(p) || p->n_launch || p->n_copy);
}

static void ng_finish(cp_proc *p, void *st, cp_report *rep)
{
    (void)st;
    char why[512];
    const char *state;
    uint64_t dev_alloc = ng_dev_allocs(p);
    const char *cvd = cp_proc_env(p, "CUDA_VISIBLE_DEVICES");
    if (!p->init_ok && cp_any_device(p)) {
        /* Devices known without a cuInit of its own: a child forked after
         * its parent initialised CUDA; fork-after-init speaks for it. */
        return;
    } else if (!p->init_ok) {
        state = "never-initialized";
        if (p->lib_kind == CP_LIB_STUB)
            snprintf(why, sizeof why, "CUDA was never initialised: the toolkit's stub libcuda "
                     "was loaded instead of the driver");
        else if (p->dlopen_seen && !p->dlopen_ok)
            snprintf(why, sizeof why, "CUDA was never initialised: no driver library could be "
                     "loaded");
        else if (p->runtime_version > 0 && p->driver_version > 0 &&
                 p->runtime_version > p->driver_version)
            snprintf(why, sizeof why, "CUDA was never initialised: the driver is older than "
                     "the CUDA runtime");
        else if (p->init_calls)
            snprintf(why, sizeof why, "CUDA was never initialised: cuInit failed with %s",
                     cp_result_name(p->init_fail_result) ? cp_result_name(p->init_fail_result)
                                                         : "an error");
        else
            snprintf(why, sizeof why, "CUDA was never initialised: the program did not call "
                     "cuInit");
    } else if (!cp_any_device(p)) {
        state = "no-device";
        snprintf(why, sizeof why, "no device was visible to the program%s%s%s",
                 cvd ? " (CUDA_VISIBLE_DEVICES=\"" : "", cvd ? cvd : "", cvd ? "\")" : "");
    } else if (!dev_alloc && !p->n_launch && !p->n_copy) {
        state = "no-memory";
        snprintf(why, sizeof why, "CUDA was initialised but no device memory was allocated, "
                 "nothing was copied and no kernel was launched");
    } else {
        return;
    }
    cp_finding *f = cp_finding_new(rep, &cp_check_nogpu, p, "pid %llu did not use a GPU: %s",
                                   (unsigned long long)p->pid, why);
    if (!f)
        return;
    f->top = 1;
    f->count = 1;
    cp_jb_ks(&f->details, "state", state);
    cp_jb_ks(&f->details, "cuda_visible_devices", cvd);
}

/* Whether proc a is an ancestor of proc d among the traces of rep. */
static int ng_ancestor(const cp_report *rep, const cp_proc *a, const cp_proc *d)
{
    uint64_t pid = d->ppid;
    for (size_t hops = 0; hops <= rep->n_procs; hops++) {
        if (pid == a->pid)
            return 1;
        const cp_proc *up = NULL;
        for (size_t i = 0; i < rep->n_procs && !up; i++)
            if (rep->procs[i]->pid == pid && rep->procs[i] != d)
                up = rep->procs[i];
        if (!up)
            return 0;
        pid = up->ppid;
    }
    return 0;
}

static void ng_across(cp_report *rep)
{
    for (size_t i = 0; i < rep->n; i++) {
        cp_finding *f = rep->f[i];
        if (f->check != &cp_check_nogpu || !f->proc)
            continue;
        for (size_t j = 0; j < rep->n_procs; j++) {
            const cp_proc *q = rep->procs[j];
            if (q == f->proc || !ng_used_gpu(q) || !ng_ancestor(rep, f->proc, q))
                continue;
            f->sev = CP_SEV_INFO;
            f->top = 0;
            cp_finding_retitle(f, "pid %llu did not use a GPU: launcher process (pid %llu, "
                               "started by it, did)", (unsigned long long)f->proc->pid,
                               (unsigned long long)q->pid);
            cp_finding_line(f, "A process that only starts the processes doing the GPU work "
                            "(torchrun, a launcher script) needs no GPU itself.");
            cp_jb_kb(&f->details, "launcher", 1);
            break;
        }
    }
}

const cp_check cp_check_nogpu = {
    .id = "no-gpu-used",
    .sev = CP_SEV_WARNING,
    .name = "the program never used a GPU",
    .explain = "The program ran without using any GPU: either CUDA was never initialised "
               "(no driver, or the initialisation failed), no device was visible, or it "
               "initialised CUDA but never allocated device memory or launched a kernel. "
               "A framework then silently runs on the CPU.",
    .fix = "Check the reason stated: install or expose the driver, fix "
           "CUDA_VISIBLE_DEVICES, and make sure the model and data are moved to the device "
           "(model.to(\"cuda\"), device=\"cuda\").",
    .types = 0,
    .finish = ng_finish,
    .across = ng_across,
};
