/*
 * render_when.c - when a finding happened, for the pictures: its own range
 * when its check gave one (memory-growth, fragmentation, an OOM), else the
 * first time a record named any of its call sites (the process's ledger),
 * so that a picture places it there rather than at the end of the run.
 */
#include "render.h"
#include "cp_ledger.h"

int cp_finding_when(const cp_finding *f, uint64_t *from, uint64_t *to)
{
    if (f->t_from || f->t_to) {
        *from = f->t_from;
        *to = f->t_to > f->t_from ? f->t_to : f->t_from;
        return 1;
    }
    uint64_t first = 0;
    for (size_t i = 0; i < f->n_sites; i++) {
        const cp_site *s = &f->sites[i];
        const cp_proc *p = s->proc ? s->proc : f->proc;
        uint64_t t = p && p->ledger ? cp_ledger_first_ts(p->ledger, s->stack) : 0;
        if (t && (!first || t < first))
            first = t;
    }
    *from = *to = first;
    return first != 0;
}
