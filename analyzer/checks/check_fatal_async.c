/*
 * check_fatal_async.c - the first sticky asynchronous error and the launches in
 * flight (see check_fatal_async.h).  A kernel that faults is reported by whatever
 * driver call comes next on its context (a copy, a synchronisation, an
 * event query): the shim records that call, and the launches issued on the
 * context since its last successful synchronisation, from its ring of the
 * last launches of each thread.  One of those launches is the culprit.
 */
#include <stdio.h>
#include <string.h>

#include "cp_checks.h"
#include "cp_curesult.h"
#include "check_fatal_async.h"

int cp_async_sticky(uint64_t code)
{
    return cp_cuerr_class(code) == CP_CUERR_ASYNC;
}

void cp_async_rec(cp_proc *p, cp_async_state *s, const cp_record *r)
{
    (void)p;
    if (r->type == CP_REC_ASYNC_ERROR) {
        if (s->have)
            return;
        s->have = 1;
        s->code = r->ev.result;
        s->api = r->ev.api;
        s->stack = r->ev.stack;
        s->ts = r->ts;
        s->ctx = r->ev.ctx;
        s->dev = r->ev.dev;
        s->n_expected = r->u.async_error.n_inflight;
        s->overflow = r->u.async_error.overflow;
        const char *n = p->dec ? cp_dec_api_name(p->dec, r->ev.api) : NULL;
        s->api = n ? (uint64_t)(uintptr_t)cp_sym_intern(n, strlen(n)) : 0;
        return;
    }
    if (r->type != CP_REC_INFLIGHT || !s->have || (uint64_t)s->n >= s->n_expected ||
        s->n >= CP_ASYNC_MAX)
        return;
    cp_async_launch *l = &s->l[s->n++];
    const typeof(r->u.inflight) *x = &r->u.inflight;
    const char *n = p->dec ? cp_dec_api_name(p->dec, x->api) : NULL;
    l->api = n ? (uint64_t)(uintptr_t)cp_sym_intern(n, strlen(n)) : 0;
    l->func = x->func;
    l->stream = x->stream;
    l->ctx = x->ctx;
    l->stack = x->stack;
    l->tid = x->launch_tid;
    l->grid[0] = x->grid_x, l->grid[1] = x->grid_y, l->grid[2] = x->grid_z;
    l->block[0] = x->block_x, l->block[1] = x->block_y, l->block[2] = x->block_z;
    l->shmem = x->shmem;
    size_t len = x->name.n < sizeof l->name - 1 ? x->name.n : sizeof l->name - 1;
    memcpy(l->name, x->name.p, len);
    l->name[len] = 0;
}

/* The launch's site: the innermost frame of the program itself and its
 * caller ("a.py:84 (launch) <- a.py:91 (step)"), else the usual label. */
static const char *fa_site(cp_proc *p, uint64_t stack, char *buf, size_t cap)
{
    const cp_stack *st = stack ? cp_stacks_get(&p->stacks, stack) : NULL;
    size_t o = 0;
    int n = 0;
    for (uint32_t i = 0; st && i < st->n_py && n < 2; i++) {
        const cp_pyframe *f = cp_map_get(&p->stacks.pyframes, st->py[i]);
        if (!f || !f->user)
            continue;
        int w = snprintf(buf + o, cap - o, "%s%s:%llu (%s)", n ? " <- " : "", f->file,
                         (unsigned long long)f->line, f->func);
        if (w < 0 || (size_t)w >= cap - o)
            break;
        o += (size_t)w;
        n++;
    }
    if (n == 0)
        snprintf(buf, cap, "%s", stack ? cp_site_label(&p->stacks, stack) : "(no call site)");
    return buf;
}

static const char *fa_meaning(uint64_t code)
{
    const char *d = cp_cuerr_detail(code);
    return d ? d : "the device reported an error the driver could not attribute to a call "
                   "(often a crashed kernel or a hardware fault: check dmesg for Xid messages)";
}

void cp_async_explain(cp_proc *p, const cp_async_state *s, cp_finding *f, int with_rerun)
{
    char nm[160], site[1200];
    cp_finding_line(f, "Kernels run asynchronously: the Python line above is where the error "
                    "surfaced (the first CUDA call after the kernel failed), not where it "
                    "happened.");
    if (s->have) {
        const char *res = cp_result_name(s->code);
        cp_finding_line(f, "%s (%llu): %s.", res ? res : "CUDA error",
                        (unsigned long long)s->code, fa_meaning(s->code));
        cp_finding_line(f, "First reported by %s%s%s on %s.",
                        s->api ? (const char *)(uintptr_t)s->api : "a driver call",
                        s->stack ? " at " : "", s->stack ? cp_site_label(&p->stacks, s->stack) : "",
                        s->dev >= 0 ? cp_dev_name(p, (int)s->dev, nm, sizeof nm) : "an unknown device");
        if (s->n == 0) {
            cp_finding_line(f, "No launch was in flight on that context since its last "
                            "successful synchronisation: the failing work came from a copy, "
                            "a library call or a graph.");
        } else {
            cp_finding_line(f, "Launches in flight on that context since its last successful "
                            "synchronisation, oldest first (%d%s; one of them is the culprit, "
                            "most often the last):", s->n,
                            s->overflow ? ", and older ones no longer kept" : "");
        }
        for (int i = 0; i < s->n; i++) {
            const cp_async_launch *l = &s->l[i];
            cp_finding_line(f, "  %2d. %s grid (%llu,%llu,%llu) block (%llu,%llu,%llu) stream "
                            "0x%llx, from %s", i + 1, l->name[0] ? l->name : "(unnamed kernel)",
                            (unsigned long long)l->grid[0], (unsigned long long)l->grid[1],
                            (unsigned long long)l->grid[2], (unsigned long long)l->block[0],
                            (unsigned long long)l->block[1], (unsigned long long)l->block[2],
                            (unsigned long long)l->stream, fa_site(p, l->stack, site, sizeof site));
            if (l->stack)
                cp_finding_site(f, p, l->stack, 1, 0, 0, l->name[0] ? l->name : NULL);
        }
        cp_jb_ku(&f->details, "cuda_error", s->code);
        cp_jb_ku(&f->details, "launches_in_flight", (uint64_t)s->n);
        cp_jb_key(&f->details, "in_flight");
        cp_jb_open(&f->details, '[');
        for (int i = 0; i < s->n; i++) {
            cp_jb_open(&f->details, '{');
            cp_jb_ks(&f->details, "kernel", s->l[i].name);
            cp_jb_ku(&f->details, "stream", s->l[i].stream);
            cp_jb_ks(&f->details, "site", fa_site(p, s->l[i].stack, site, sizeof site));
            cp_jb_close(&f->details, '}');
        }
        cp_jb_close(&f->details, ']');
    }
    if (!with_rerun)
        return;
    /* Only an asynchronous error needs a rerun to be found: the check's
     * own fix does not say so for the others. */
    f->fix = "Rerun with CUDA_LAUNCH_BLOCKING=1, or under compute-sanitizer, with the command "
             "line given: the failing launch then raises at its own line.";
    const char *cmd = p->cmdline && p->cmdline[0] ? p->cmdline : "<your command>";
    cp_finding_line(f, "Next: make the failing launch raise at its own line:");
    cp_finding_line(f, "    CUDA_LAUNCH_BLOCKING=1 %s", cmd);
    cp_finding_line(f, "  then find the faulting access (file, line, thread and address):");
    cp_finding_line(f, "    compute-sanitizer --tool memcheck %s", cmd);
    if (s->code == 710)
        cp_finding_line(f, "  (PyTorch: the assert's message and index are printed on stderr "
                        "above the traceback; TORCH_USE_CUDA_DSA=1 needs a build with it.)");
    cp_jb_ks(&f->details, "rerun_blocking", cmd);
}
