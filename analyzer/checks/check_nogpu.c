/*
 * check_nogpu.c - no-gpu-used: the program ran but never used a GPU.  The
 * report states it first: CUDA was never initialised (and why), no device
 * was visible, or no memory was allocated and no kernel launched.
 *
 * It judges the run, not each process: when another process of the run did
 * the GPU work, one that did not (its launcher, a wrapper shell, a compile
 * worker, a device probe) is info; an image that only exec'd is joined to
 * its successor and says nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_checks.h"
#include "cp_run.h"

extern const cp_check cp_check_nogpu;   /* defined at the end of this file */

static int cp_any_device(const cp_proc *p)
{
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++)
        if (p->dev[d].seen)
            return 1;
    return 0;
}

static void ng_finish(cp_proc *p, void *st, cp_report *rep)
{
    (void)st;
    char why[512];
    const char *state;
    uint64_t dev_alloc = cp_proc_dev_allocs(p);
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
    cp_finding *f = cp_finding_new(rep, &cp_check_nogpu, p, "%s", why);
    if (!f)
        return;
    f->top = 1;
    f->count = 1;
    /* Whether the process tried to get a GPU and got none, as opposed to
     * never asking for one (a shell, a launcher). */
    f->tag = strcmp(state, "no-memory") != 0 &&
             (p->init_calls || p->device_count_zero || (p->dlopen_seen && !p->dlopen_ok) ||
              p->lib_kind == CP_LIB_STUB || strcmp(state, "no-device") == 0);
    cp_jb_ks(&f->details, "state", state);
    cp_jb_ks(&f->details, "cuda_visible_devices", cvd);
}

/* For every process (by index), the first process in input order that
 * used a GPU and descends from it: through parents as the run model linked
 * them, where a process stands for the images it exec'd into too.  One
 * walk up from each GPU user, stopping where an earlier one walked (all
 * above is claimed already), so O(n) for the run.  @return : the array
 * (free it), or NULL when out of memory. */
static const cp_proc **ng_kids(const cp_report *rep)
{
    size_t n = rep->n_procs;
    const cp_proc **kid = calloc(n ? n : 1, sizeof *kid);
    size_t *prev = malloc(2 * (n ? n : 1) * sizeof *prev), *next_prev = prev + n;
    size_t *stack = malloc((n ? n : 1) * sizeof *stack);
    unsigned char *walked = calloc(n ? n : 1, 1);
    if (!kid || !prev || !stack || !walked) {
        free(kid);
        kid = NULL;
        goto out;
    }
    /* The images that exec'd into each process, as lists (index + 1). */
    for (size_t i = 0; i < n; i++)
        prev[i] = 0;
    for (size_t i = 0; i < n; i++) {
        const cp_proc *q = rep->procs[i]->next_image;
        if (q) {
            next_prev[i] = prev[q->index];
            prev[q->index] = i + 1;
        }
    }
    for (size_t j = 0; j < n; j++) {
        const cp_proc *d = rep->procs[j];
        if (!d->used_gpu)
            continue;
        for (const cp_proc *up = d->parent; up && !walked[up->index]; up = up->parent) {
            walked[up->index] = 1;
            /* up and every image that exec'd into it, and into those. */
            size_t sp = 0;
            stack[sp++] = (size_t)up->index;
            while (sp) {
                size_t a = stack[--sp];
                if (kid[a])
                    continue;   /* claimed, with the images before it */
                kid[a] = d;
                for (size_t e = prev[a]; e; e = next_prev[e - 1])
                    if (sp < n)
                        stack[sp++] = e - 1;
            }
        }
    }
out:
    free(prev);
    free(stack);
    free(walked);
    return kid;
}

/* The finding about the run as a whole when no process used a GPU: the
 * command's own process (the root, else the first) speaks for the run. */
static int ng_speaker(const cp_report *rep, const cp_finding *f)
{
    for (size_t j = 0; j < rep->n; j++) {
        const cp_finding *g = rep->f[j];
        if (g->check != &cp_check_nogpu || !g->proc)
            continue;
        if (g->proc->root)
            return g == f;
    }
    for (size_t j = 0; j < rep->n; j++)
        if (rep->f[j]->check == &cp_check_nogpu && rep->f[j]->proc)
            return rep->f[j] == f;
    return 0;
}

/* A run is judged as one: an image that only exec'd is its successor's, a
 * process that used no GPU while another did is a helper (info), and only
 * when no process used one is that a warning, said once for the run. */
static void ng_across(cp_report *rep)
{
    const cp_proc *worker = NULL;
    for (size_t j = 0; j < rep->n_procs && !worker; j++)
        if (rep->procs[j]->used_gpu)
            worker = rep->procs[j];
    char who[256];
    const cp_proc **kids = worker ? ng_kids(rep) : NULL;
    if (worker && !kids)
        return;
    for (size_t i = 0; i < rep->n;) {
        cp_finding *f = rep->f[i];
        if (f->check != &cp_check_nogpu || !f->proc) {
            i++;
            continue;
        }
        if (f->proc->exec_only) {
            cp_report_drop(rep, i);
            continue;
        }
        char *why = strdup(f->title ? f->title : "");
        if (!why)
            break;
        if (worker) {
            const cp_proc *kid = kids[f->proc->index];
            f->sev = CP_SEV_INFO;
            f->top = 0;
            if (kid) {
                cp_finding_retitle(f, "did not use a GPU: launcher of %s, which did",
                                   cp_run_who(kid, who, sizeof who));
                f->why = "A process that only starts the processes doing the GPU work "
                         "(torchrun, srun, mpirun, a launcher script) needs no GPU itself.";
                f->fix = "Nothing to fix: the processes it started did the GPU work.";
                cp_jb_kb(&f->details, "launcher", 1);
            } else {
                cp_finding_retitle(f, "did not use a GPU: a helper of this run (%s did the "
                                   "GPU work)", cp_run_who(worker, who, sizeof who));
                f->why = "Compile workers, wrapper shells and device probes initialise "
                         "CUDA or ask for devices without using them; that costs nothing "
                         "when another process of the run does the GPU work.";
                f->fix = "Nothing to fix: another process of this run did the GPU work.";
                cp_jb_kb(&f->details, "helper", 1);
            }
            cp_finding_line(f, "Its own state: %s.", why);
        } else if (ng_speaker(rep, f)) {
            if (f->tag)
                cp_finding_retitle(f, "the command's own process expected a GPU and got "
                                   "none: %s", why);
            else
                cp_finding_retitle(f, "%s used a GPU: %s",
                                   rep->n_procs > 1 ? "no process of this run"
                                                    : "the program never", why);
        } else {
            /* Said by the run's finding already. */
            f->sev = CP_SEV_INFO;
            f->top = 0;
            cp_finding_retitle(f, "did not use a GPU either: %s", why);
        }
        free(why);
        i++;
    }
    free(kids);
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
