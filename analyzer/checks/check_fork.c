/*
 * check_fork.c - fork-after-init: a child forked after its parent
 * initialised CUDA, that then used CUDA itself.  Needs both traces: the
 * parent's CP_REC_FORK after its first successful cuInit, and the child's
 * trace (its header names the parent in ppid) with a CUDA call in it, made
 * in the image it was forked with: a child that exec'd first (simpleIPC,
 * subprocess, a compile worker) starts CUDA afresh, which is safe.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cp_checks.h"
#include "cp_run.h"

extern const cp_check cp_check_fork;   /* defined at the end of this file */

static void fork_across(cp_report *rep)
{
    for (size_t i = 0; i < rep->n_procs; i++) {
        cp_proc *par = rep->procs[i];
        for (size_t k = 0; k < par->n_forks; k++) {
            /* The child: the forked pid on the parent's host (the run's
             * index finds it without looking at every process). */
            size_t n_ch;
            cp_proc *const *chs = cp_run_pid(&rep->run, par->host, par->forks[k], &n_ch);
            for (size_t j = 0; j < n_ch; j++) {
                cp_proc *ch = chs[j];
                if (ch == par || ch->ppid != par->pid || !ch->first_cuda_ts ||
                    ch->forked_image == 0)
                    continue;
                char who[256];
                cp_finding *f = cp_finding_new(rep, &cp_check_fork, ch,
                                               "forked by %s after it initialised CUDA, and "
                                               "then called %s without an exec",
                                               cp_run_who(par, who, sizeof who),
                                               ch->first_cuda_api ? ch->first_cuda_api : "CUDA");
                if (!f)
                    return;
                f->sort = CP_SORT_COUNT;
                cp_finding_site(f, ch, ch->first_cuda_stack, 1, 0, 0,
                                "first CUDA call in the child");
                f->count = 1;
                cp_finding_line(f, "A forked child inherits the parent's CUDA state in a "
                                "form the driver cannot use: its calls fail "
                                "(CUDA_ERROR_NOT_INITIALIZED, or PyTorch's \"Cannot "
                                "re-initialize CUDA in forked subprocess\") or hang.");
                if (ch->init_fail_result)
                    cp_finding_line(f, "The child's cuInit returned %s.",
                                    cp_result_name(ch->init_fail_result)
                                        ? cp_result_name(ch->init_fail_result) : "an error");
                cp_jb_ku(&f->details, "parent_pid", par->pid);
                cp_jb_ku(&f->details, "child_pid", ch->pid);
                cp_jb_ks(&f->details, "first_call", ch->first_cuda_api);
            }
        }
    }
}

const cp_check cp_check_fork = {
    .id = "fork-after-init",
    .sev = CP_SEV_ERROR,
    .name = "CUDA used in a child forked after CUDA was initialised",
    .explain = "The process called fork() after CUDA was initialised, and the child used "
               "CUDA. CUDA does not support this: the driver state copied into the child "
               "refers to the parent's device contexts. Typical sources are "
               "multiprocessing with the default 'fork' start method and DataLoader workers "
               "that touch CUDA tensors.",
    .fix = "Use the 'spawn' or 'forkserver' start method "
           "(multiprocessing.set_start_method(\"spawn\"), DataLoader(multiprocessing_context="
           "\"spawn\")), fork before any CUDA call, or keep CUDA work in the parent and send "
           "CPU data to the children.",
    .types = 0,
    .across = fork_across,
};
