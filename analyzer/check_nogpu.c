/*
 * check_nogpu.c - no-gpu-used: the program ran but never used a GPU.  The
 * report states it first: CUDA was never initialised (and why), no device
 * was visible, or no memory was allocated and no kernel launched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_checks.h"

static int ng_init(cp_proc *p, void **st)
{
    (void)p;
    *st = NULL;
    return 0;
}

static void ng_done(void *st)
{
    (void)st;
}

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
    uint64_t dev_alloc = 0;
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++)
        dev_alloc += p->mem[d].n_alloc;
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
    .init = ng_init,
    .finish = ng_finish,
    .done = ng_done,
};
